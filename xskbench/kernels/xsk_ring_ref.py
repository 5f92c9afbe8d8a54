"""Plain-Python twin of the AF_XDP SPSC ring in ``xsk_ring.py`` (the test reference).

Written from the ring's semantics (net/xdp/xsk_queue.h, libxdp xsk.h), not from the numba
code: u32 free-running indices, each side's cached view of the other side's word refreshed
only when the cached view cannot satisfy the request, and per-slot publish/release stamps so
a side refreshing at ``now`` sees only what the other side published/released by ``now``.
"""
import numpy as np

from .xsk_ring import (
    R_CCCONS,
    R_CCPROD,
    R_CONS,
    R_FLAGS,
    R_PCCONS,
    R_PCPROD,
    R_PROD,
    R_REFRESH,
    R_SIZE,
    ring_words,
)

M32 = 0xFFFFFFFF
NEED_WAKEUP = 1


class XskRingRef:
    """One ring: ``prod``/``cons`` shared words, producer's ``p_prod``/``p_cons`` and the
    consumer's ``c_prod``/``c_cons`` private cached copies, ``flags`` and ``refresh``
    (how many times either side re-read the other side's word)."""

    def __init__(self, size, start=0):
        assert size >= 1 and size & (size - 1) == 0, "size must be a power of two"
        self.size, self.mask = size, size - 1
        s = start & M32
        self.prod = self.cons = self.p_prod = self.p_cons = self.c_prod = self.c_cons = s
        self.flags = self.refresh = 0
        self.addr, self.len = [0] * size, [0] * size
        self.pub_t, self.rel_t = [0] * size, [0] * size

    def _seen(self, word, cached, stamps, now):
        """``word`` as seen at ``now`` from a side whose view is ``cached``: the newest index
        whose preceding entries (beyond ``cached``) were all stamped at or before ``now``."""
        seen = cached
        for k in range((word - cached) & M32):
            i = (cached + k) & M32
            if stamps[i & self.mask] > now:
                break
            seen = (i + 1) & M32
        return seen

    # --- producer ------------------------------------------------------------------------
    def _free(self):
        return self.size - ((self.p_prod - self.p_cons) & M32)

    def prod_nb_free(self, n, now):
        if self._free() < n:
            self.p_cons = self._seen(self.cons, self.p_cons, self.rel_t, now)
            self.refresh += 1
        return self._free()

    def prod_reserve(self, n, now):
        k = min(n, self.prod_nb_free(n, now))
        idx = self.p_prod
        self.p_prod = (idx + k) & M32
        return k, idx

    def write(self, idx, addr, length):
        self.addr[idx & self.mask], self.len[idx & self.mask] = addr, length

    ring_write = write  # the kernel's name

    def prod_submit(self, now):
        for k in range((self.p_prod - self.prod) & M32):
            self.pub_t[(self.prod + k) & self.mask] = now
        self.prod = self.p_prod

    def prod_cancel(self, n):
        self.p_prod = (self.p_prod - n) & M32

    # --- consumer ------------------------------------------------------------------------
    def _avail(self):
        return (self.c_prod - self.c_cons) & M32

    def cons_nb_avail(self, n, now):
        if self._avail() < n:
            self.c_prod = self._seen(self.prod, self.c_prod, self.pub_t, now)
            self.refresh += 1
        return min(self._avail(), n)

    def cons_peek(self, n, now):
        k = self.cons_nb_avail(n, now)
        idx = self.c_cons
        self.c_cons = (idx + k) & M32
        return k, idx

    def read(self, idx):
        return self.addr[idx & self.mask], self.len[idx & self.mask]

    def ring_addr(self, idx):
        return self.read(idx)[0]

    def ring_len(self, idx):
        return self.read(idx)[1]

    def cons_release(self, now):
        for k in range((self.c_cons - self.cons) & M32):
            self.rel_t[(self.cons + k) & self.mask] = now
        self.cons = self.c_cons

    # --- shared --------------------------------------------------------------------------
    def entries(self):
        return (self.prod - self.cons) & M32

    ring_entries = entries  # the kernel's name

    def set_flag(self, on):
        self.flags = self.flags | NEED_WAKEUP if on else self.flags & ~NEED_WAKEUP

    def needs_wakeup(self):
        return bool(self.flags & NEED_WAKEUP)

    def state(self):
        """(prod, cons, p_prod, p_cons, c_prod, c_cons, flags, refresh, live) where ``live``
        is the (addr, len) of every slot from ``cons`` up to ``p_prod`` (published or
        reserved, not yet released). Compare with :func:`arena_state`."""
        slots = [(self.cons + k) & self.mask for k in range((self.p_prod - self.cons) & M32)]
        live = tuple((self.addr[i], self.len[i]) for i in slots)
        return (self.prod, self.cons, self.p_prod, self.p_cons, self.c_prod, self.c_cons,
                self.flags, self.refresh, live)


def arena_state(m, o):
    """The same tuple as :meth:`XskRingRef.state`, read from a numba ring at ``m[o:]``."""
    size = int(m[o + R_SIZE])
    w = [int(m[o + k]) for k in (R_PROD, R_CONS, R_PCPROD, R_PCCONS, R_CCPROD, R_CCCONS,
                                 R_FLAGS, R_REFRESH)]
    slots = o + ring_words(0) + ((w[1] + np.arange((w[2] - w[1]) & M32)) & (size - 1))
    return (*w, tuple(zip(m[slots].tolist(), m[slots + size].tolist(), strict=True)))
