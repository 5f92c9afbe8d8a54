"""Network namespaces and devices for real runs, built and torn down by xskbench itself.

* Names: ``xskb-<owner pid>-<tag>-a`` / ``-b``; a namespace whose owner process is gone is
  stale and removed by :func:`reap_stale` (a run killed with SIGKILL leaves one behind).
* Addresses only from the benchmarking range 198.18.0.0/15 (RFC 2544), static neighbours,
  IPv6 off: nothing is resolved and nothing leaves the namespaces.
* veth: ``va`` (198.18.0.1, in ``-a``) <-> ``vb`` (198.18.0.2, in ``-b``).
* tun: ``tap0`` (a tun device in tap mode; 198.18.1.2) in ``-b``; its far end (198.18.1.1,
  a static neighbour with a made-up MAC) is whoever writes into the tap fd.
* :meth:`Topology.close` deletes the devices, then the namespaces - which detaches any XDP
  program still attached - and checks that they are gone.  It runs on every exit path of
  the ``with`` block; :func:`signals_as_exceptions` turns SIGTERM/SIGHUP into exceptions so
  that ``finally`` blocks run on those too.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import signal
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field

from xskbench.real.bpf import libc

PREFIX = "xskb-"
NETNS_DIR = "/run/netns"
CLONE_NEWNET = 0x40000000
NET = {"veth": ("198.18.0.1", "198.18.0.2", 30), "tun": ("198.18.1.1", "198.18.1.2", 24)}
TAP_PEER_MAC = "02:00:c6:12:01:01"


class TopologyError(RuntimeError):
    pass


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM/SIGHUP (see :func:`signals_as_exceptions`)."""


@contextlib.contextmanager
def signals_as_exceptions():
    """SIGTERM/SIGHUP raise :class:`Terminated` (Ctrl-C already raises KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_blocked():
    """Hold off SIGINT/SIGTERM/SIGHUP (e.g. a second Ctrl-C) while cleaning up."""
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ip(*args: str, check: bool = True) -> str:
    """Run iproute2's ``ip``; a failure is a one-line TopologyError."""
    try:
        p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise TopologyError("iproute2's `ip` command is not installed") from None
    if check and p.returncode:
        msg = " ".join((p.stderr or p.stdout).split())
        raise TopologyError(f"ip {' '.join(args)}: {msg}")
    return p.stdout


def setns(name_or_path: str) -> None:
    """Move the calling thread into a network namespace (name in /run/netns or a path)."""
    path = name_or_path if "/" in name_or_path else f"{NETNS_DIR}/{name_or_path}"
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns({path}): {os.strerror(e)}")
    finally:
        os.close(fd)


@contextlib.contextmanager
def in_netns(name: str):
    """Run the block inside namespace ``name``, then return to the original one."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        setns(name)
        try:
            yield
        finally:
            if libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the original netns")
    finally:
        os.close(home)


def xskb_namespaces() -> list[str]:
    try:
        return sorted(n for n in os.listdir(NETNS_DIR) if n.startswith(PREFIX))
    except FileNotFoundError:
        return []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_stale() -> list[str]:
    """Delete ``xskb-<pid>-*`` namespaces whose owner process no longer exists."""
    gone = []
    for name in xskb_namespaces():
        parts = name.split("-")
        if len(parts) >= 3 and parts[1].isdigit() and not _alive(int(parts[1])):
            ip("netns", "del", name, check=False)
            gone.append(name)
    return gone


# --- ethtool over ioctl (no ethtool binary needed) --------------------------------------------

SIOCETHTOOL = 0x8946
ETHTOOL_GDRVINFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS, ETHTOOL_SGRO = 0x03, 0x1B, 0x1D, 0x2C
ETH_SS_STATS = 1


def _ethtool(sock: socket.socket, dev: str, buf: ctypes.Array) -> None:
    ifr = struct.pack("16sQ", dev.encode(), ctypes.addressof(buf)) + bytes(16)
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)


def ethtool_stats(sock: socket.socket, dev: str) -> dict[str, int]:
    """``ethtool -S dev`` through SIOCETHTOOL on a socket of the device's namespace."""
    info = ctypes.create_string_buffer(struct.pack("<I", ETHTOOL_GDRVINFO), 196)
    _ethtool(sock, dev, info)
    n = struct.unpack_from("<I", info, 180)[0]
    if not n:
        return {}
    strings = ctypes.create_string_buffer(struct.pack("<III", ETHTOOL_GSTRINGS, ETH_SS_STATS, n),
                                          12 + 32 * n)
    _ethtool(sock, dev, strings)
    stats = ctypes.create_string_buffer(struct.pack("<II", ETHTOOL_GSTATS, n), 8 + 8 * n)
    _ethtool(sock, dev, stats)
    names = [strings.raw[12 + 32 * i:44 + 32 * i].split(b"\0", 1)[0].decode() for i in range(n)]
    return dict(zip(names, struct.unpack_from(f"<{n}Q", stats, 8), strict=True))


def set_gro(sock: socket.socket, dev: str, on: bool) -> None:
    _ethtool(sock, dev, ctypes.create_string_buffer(struct.pack("<II", ETHTOOL_SGRO, int(on))))


def read_dev_stats(pid: int | str = "self") -> dict[str, dict[str, int]]:
    """/proc/PID/net/dev of the namespace ``pid`` lives in."""
    keys = ("rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "rx_fifo", "rx_frame",
            "rx_compressed", "rx_multicast", "tx_bytes", "tx_packets", "tx_errors",
            "tx_dropped", "tx_fifo", "tx_colls", "tx_carrier", "tx_compressed")
    out = {}
    with open(f"/proc/{pid}/net/dev") as f:
        for line in f.readlines()[2:]:
            name, _, rest = line.partition(":")
            out[name.strip()] = dict(zip(keys, map(int, rest.split()), strict=False))
    return out


# --- the topology ---------------------------------------------------------------------------

@dataclass
class Topology:
    """``with Topology("veth") as t:`` builds the namespaces and devices; leaving the block
    (normally, by an exception, Ctrl-C or - under :func:`signals_as_exceptions` - SIGTERM)
    tears everything down."""

    device: str = "veth"
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    namespaces: list = field(default_factory=list)
    # filled by build(): role -> (netns, ifname, ip, mac)
    app: tuple = ()
    peer: tuple = ()
    _socks: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.device not in NET:
            raise ValueError(f"device {self.device!r}: real runs support {', '.join(NET)}")
        base = f"{PREFIX}{os.getpid()}-{self.tag}"
        self.ns_a, self.ns_b = f"{base}-a", f"{base}-b"

    def __enter__(self):
        try:
            self.build()
        except BaseException:
            with signals_blocked():
                self.close()
            raise
        return self

    def __exit__(self, *exc):
        with signals_blocked():
            self.close()

    def _add_ns(self, name):
        ip("netns", "add", name)
        self.namespaces.append(name)
        with in_netns(name):
            for conf in ("all", "default"):
                with contextlib.suppress(OSError), \
                        open(f"/proc/sys/net/ipv6/conf/{conf}/disable_ipv6", "w") as f:
                    f.write("1")
        ip("-n", name, "link", "set", "lo", "up")

    def build(self) -> None:
        reap_stale()
        os.makedirs(NETNS_DIR, exist_ok=True)
        ip_a, ip_b, plen = NET[self.device]
        if self.device == "veth":
            self._add_ns(self.ns_a)
            self._add_ns(self.ns_b)
            one = ("numtxqueues", "1", "numrxqueues", "1")
            ip("link", "add", "va", "netns", self.ns_a, *one, "type", "veth",
               "peer", "name", "vb", "netns", self.ns_b, *one)
            ns_dev = ((self.ns_a, "va", ip_a), (self.ns_b, "vb", ip_b))
        else:
            self._add_ns(self.ns_b)
            ip("-n", self.ns_b, "tuntap", "add", "dev", "tap0", "mode", "tap")
            ns_dev = ((self.ns_b, "tap0", ip_b),)
        macs = {}
        for ns, dev, addr in ns_dev:
            ip("-n", ns, "addr", "add", f"{addr}/{plen}", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
            with open_in(ns) as s:
                macs[dev] = _mac(s, dev)
        if self.device == "veth":
            ip("-n", self.ns_a, "neigh", "replace", ip_b, "lladdr", macs["vb"],
               "nud", "permanent", "dev", "va")
            ip("-n", self.ns_b, "neigh", "replace", ip_a, "lladdr", macs["va"],
               "nud", "permanent", "dev", "vb")
            self.app = (self.ns_b, "vb", ip_b, macs["vb"])
            self.peer = (self.ns_a, "va", ip_a, macs["va"])
        else:
            ip("-n", self.ns_b, "neigh", "replace", ip_a, "lladdr", TAP_PEER_MAC,
               "nud", "permanent", "dev", "tap0")
            self.app = (self.ns_b, "tap0", ip_b, macs["tap0"])
            self.peer = (self.ns_b, "tap0", ip_a, TAP_PEER_MAC)

    def sock(self, ns: str) -> socket.socket:
        """A datagram socket living in ``ns`` (for ethtool ioctls from this process)."""
        if ns not in self._socks:
            with in_netns(ns):
                self._socks[ns] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        return self._socks[ns]

    def ethtool(self, ns: str, dev: str) -> dict[str, int]:
        try:
            return ethtool_stats(self.sock(ns), dev)
        except OSError:
            return {}

    def close(self) -> None:
        """Delete devices and namespaces; idempotent.  Raises if something stayed."""
        for s in self._socks.values():
            s.close()
        self._socks.clear()
        if self.device == "tun" and self.ns_b in self.namespaces:
            ip("-n", self.ns_b, "link", "del", "tap0", check=False)
        for ns in reversed(self.namespaces):
            ip("netns", "del", ns, check=False)
        left = [ns for ns in self.namespaces if os.path.exists(f"{NETNS_DIR}/{ns}")]
        self.namespaces = left
        if left:
            raise TopologyError(f"could not delete namespaces {', '.join(left)}")


@contextlib.contextmanager
def open_in(ns: str):
    with in_netns(ns):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        yield s
    finally:
        s.close()


def _mac(sock: socket.socket, dev: str) -> str:
    SIOCGIFHWADDR = 0x8927
    r = fcntl.ioctl(sock.fileno(), SIOCGIFHWADDR, struct.pack("16s16s", dev.encode(), b""))
    return ":".join(f"{b:02x}" for b in r[18:24])


def mac_bytes(mac: str) -> bytes:
    return bytes(int(x, 16) for x in mac.split(":"))


def wait_gone(names, timeout: float = 5.0) -> bool:
    """True once none of ``names`` exists under /run/netns."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(os.path.exists(f"{NETNS_DIR}/{n}") for n in names):
            return True
        time.sleep(0.05)
    return False


def xdp_attached_anywhere() -> list[str]:
    """Interfaces of the root namespace (and of every xskb- namespace) with XDP attached."""
    out = []
    for ns in [None, *xskb_namespaces()]:
        args = ["-d", "-o", "link", "show"] if ns is None else ["-n", ns, "-d", "-o", "link",
                                                                  "show"]
        with contextlib.suppress(TopologyError):
            for line in ip(*args).splitlines():
                if " xdp" in line or "prog/xdp" in line:
                    out.append(f"{ns or 'root'}: {line.split(':')[1].strip()}")
    return out


__all__ = ["PREFIX", "Terminated", "Topology", "TopologyError", "ethtool_stats",
           "in_netns", "ip", "reap_stale", "setns", "signals_as_exceptions", "signals_blocked",
           "xskb_namespaces"]
