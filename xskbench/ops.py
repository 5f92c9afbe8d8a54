"""The op table: every unit of work the emulation charges, named after the kernel, libxdp or
DPDK function it stands for. A cost profile gives each op cycles per call and per byte;
a context's cycles are the sum of count × cost over its ops (an emulated ``perf top``).

Indices are module constants so numba kernels can use them; ``NAMES[i]`` is the symbol.
"""

OPS = (
    # name (kernel symbol)              what one call stands for
    # --- application (user space: xdpsock / libxdp / DPDK AF_XDP PMD) -----------------
    ("app_loop", "one iteration of the application's poll loop (empty or not)"),
    ("app_pkt", "per-packet application work: build/touch/parse one frame"),
    ("xsk_ring_prod__reserve", "libxdp reserve on a producer ring (batch)"),
    ("xsk_ring_cons__peek", "libxdp peek on a consumer ring (batch)"),
    ("xsk_ring_refresh", "reading the other side's ring index: a shared cache line"),
    # --- syscalls ---------------------------------------------------------------------------
    ("__sys_sendto", "syscall entry/exit of sendto() (kick_tx)"),
    ("__sys_recvfrom", "syscall entry/exit of recvfrom()/poll() on the fill ring"),
    ("sk_busy_loop", "one busy-poll pass run from the syscall"),
    # --- AF_XDP core ----------------------------------------------------------------------
    ("xsk_generic_xmit", "copy-mode TX: per descriptor (lock, validate, cq reserve)"),
    ("sock_alloc_send_skb", "skb allocation for a copy-mode TX descriptor"),
    ("skb_store_bits", "copy of the payload into the skb (per byte)"),
    ("__dev_direct_xmit", "direct xmit bypassing the qdisc (txq lock, ndo_start_xmit)"),
    ("xsk_destruct_skb", "skb destructor: cq submit under cq_lock, sock_wfree"),
    ("kfree_skb", "freeing an skb (consume_skb / napi_consume_skb)"),
    ("xsk_tx_peek_desc", "zero-copy TX, one descriptor (per-socket round robin)"),
    ("xsk_tx_peek_release_desc_batch", "zero-copy TX batch peek, per descriptor"),
    ("xsk_tx_completed", "zero-copy completion: cq producer submit (per call)"),
    ("xsk_buff_alloc_batch", "zero-copy RX refill from the fill ring, per buffer"),
    ("xsk_buff_alloc", "copy-mode RX: one fill-ring pop"),
    ("bpf_prog_run_xdp", "the XDP program (redirect to XSKMAP)"),
    ("xsk_rcv_zc", "zero-copy RX: reserve the RX descriptor (no copy)"),
    ("__xsk_rcv", "copy-mode RX: fill-ring buffer + memcpy into UMEM (per byte)"),
    ("xdp_do_flush", "end of NAPI poll: publish RX, release fill, wake the reader"),
    ("xsk_set_need_wakeup", "setting/clearing a ring's need_wakeup flag"),
    ("xsk_wakeup", "ndo_xsk_wakeup: the driver's wakeup entry"),
    # --- NAPI / softirq / scheduling ----------------------------------------------------
    ("napi_poll", "one NAPI poll round: net_rx_action bookkeeping"),
    ("napi_schedule", "__napi_schedule (raise NET_RX softirq)"),
    ("irq_entry", "a hard interrupt: entry, handler, exit"),
    ("ipi_send", "sending an IPI (native_apic_mem_write / x2apic)"),
    ("wake_up_process", "waking a sleeping thread (try_to_wake_up)"),
    ("context_switch", "a context switch into a woken thread"),
    ("memcpy", "memcpy of packet data (per byte)"),
    ("csum_partial", "software checksum (per byte)"),
    # --- null device ------------------------------------------------------------------------
    ("null_xmit_desc", "null NIC: post one TX descriptor"),
    ("null_clean_tx", "null NIC: reap one TX completion"),
    ("null_rx_desc", "null NIC: read one RX descriptor"),
    ("null_post_rx", "null NIC: post one RX buffer"),
    ("page_pool_alloc", "driver page for a copy-mode RX buffer"),
    ("page_pool_recycle", "driver page recycled after the copy"),
)
NAMES = tuple(name for name, _ in OPS)
DOCS = dict(OPS)
INDEX = {name: i for i, name in enumerate(NAMES)}
N_OPS = len(NAMES)

APP_LOOP = INDEX["app_loop"]
APP_PKT = INDEX["app_pkt"]
RING_RESERVE = INDEX["xsk_ring_prod__reserve"]
RING_PEEK = INDEX["xsk_ring_cons__peek"]
RING_REFRESH = INDEX["xsk_ring_refresh"]
SYS_SENDTO = INDEX["__sys_sendto"]
SYS_RECVFROM = INDEX["__sys_recvfrom"]
SK_BUSY_LOOP = INDEX["sk_busy_loop"]
XSK_GENERIC_XMIT = INDEX["xsk_generic_xmit"]
SOCK_ALLOC_SEND_SKB = INDEX["sock_alloc_send_skb"]
SKB_STORE_BITS = INDEX["skb_store_bits"]
DEV_DIRECT_XMIT = INDEX["__dev_direct_xmit"]
XSK_DESTRUCT_SKB = INDEX["xsk_destruct_skb"]
KFREE_SKB = INDEX["kfree_skb"]
XSK_TX_PEEK_DESC = INDEX["xsk_tx_peek_desc"]
XSK_TX_PEEK_BATCH = INDEX["xsk_tx_peek_release_desc_batch"]
XSK_TX_COMPLETED = INDEX["xsk_tx_completed"]
XSK_BUFF_ALLOC_BATCH = INDEX["xsk_buff_alloc_batch"]
XSK_BUFF_ALLOC = INDEX["xsk_buff_alloc"]
BPF_PROG_RUN_XDP = INDEX["bpf_prog_run_xdp"]
XSK_RCV_ZC = INDEX["xsk_rcv_zc"]
XSK_RCV_COPY = INDEX["__xsk_rcv"]
XDP_DO_FLUSH = INDEX["xdp_do_flush"]
XSK_SET_NEED_WAKEUP = INDEX["xsk_set_need_wakeup"]
XSK_WAKEUP = INDEX["xsk_wakeup"]
NAPI_POLL = INDEX["napi_poll"]
NAPI_SCHEDULE = INDEX["napi_schedule"]
IRQ_ENTRY = INDEX["irq_entry"]
IPI_SEND = INDEX["ipi_send"]
WAKE_UP_PROCESS = INDEX["wake_up_process"]
CONTEXT_SWITCH = INDEX["context_switch"]
MEMCPY = INDEX["memcpy"]
CSUM_PARTIAL = INDEX["csum_partial"]
NULL_XMIT_DESC = INDEX["null_xmit_desc"]
NULL_CLEAN_TX = INDEX["null_clean_tx"]
NULL_RX_DESC = INDEX["null_rx_desc"]
NULL_POST_RX = INDEX["null_post_rx"]
PAGE_POOL_ALLOC = INDEX["page_pool_alloc"]
PAGE_POOL_RECYCLE = INDEX["page_pool_recycle"]
