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
    # --- veth (RFC "Optimizing veth xsk performance") ------------------------------------
    ("iperf3_udp_send", "veth udp: iperf3 -u per-datagram user work (loop, timer, sequence)"),
    ("xudp_send_pkt", "veth: libxudp per-packet send in user space (flow, headers, payload)"),
    ("udp_sendmsg", "veth udp: udp_sendmsg + ip_make_skb (route, skb alloc, headers)"),
    ("ip_generic_getfrag", "veth udp: copy of the payload from user space (per byte)"),
    ("ip_output", "veth udp: ip_output / ip_finish_output2 / neigh_output"),
    ("__dev_queue_xmit", "veth udp: dev_queue_xmit on noqueue veth (validate, hard_start)"),
    ("veth_xmit", "veth_xmit: veth_forward_skb / __dev_forward_skb to the peer"),
    ("netif_rx", "veth udp: enqueue_to_backlog on the sending CPU"),
    ("__netif_receive_skb", "veth udp: process_backlog, one skb into the peer's stack"),
    ("sock_wfree", "veth udp: the UDP skb destructor (sk_wmem accounting)"),
    ("veth_xdp_rcv_skb", "veth_poll: ptr_ring consume, a remotely built skb (misses, remote free)"),
    ("napi_gro_receive", "an skb into GRO on the peer"),
    ("br_forward_finish", "sink past the peer: bridge forward, dev_queue_xmit to the NIC"),
    ("veth_sink_extra", "extra sink work, one call per cycle (veth.sink_extra_cycles)"),
    ("veth_xsk_build_skb", "veth RFC zc: dev_alloc_page + build_skb + eth_type_trans"),
    ("veth_xsk_gso_skb", "veth RFC batch: alloc_skb head, header copy, udp4_hwcsum, GSO setup"),
    ("__kmalloc", "kmalloc of the veth_seg_info address list (one per aggregate)"),
    ("skb_fill_page_desc", "veth RFC batch: get_page + one frag pointing into UMEM"),
    ("veth_xsk_destruct_skb", "veth RFC batch: destructor, cq submit under cq_lock, kfree"),
    # --- veth receive (the measured pair: a live-frames sender, veth_poll into the xsk) -----
    ("xdp_test_run_batch", "BPF_PROG_RUN live frames: one frame of a batch (page reset, xdp_buff)"),
    ("xdp_do_redirect", "xdp_do_redirect of one frame (devmap bulk queue or XSKMAP lookup)"),
    ("veth_xdp_xmit", "ndo_xdp_xmit into the peer's xdp_ring: one frame (convert, produce)"),
    ("veth_xdp_rcv_one", "veth_poll: one xdp_frame from the xdp_ring to an xdp_buff"),
    ("__xdp_build_skb_from_frame", "veth_xdp_rcv_bulk_skb: an skb built around one frame"),
    ("do_xdp_generic", "generic XDP: netif_receive_generic_xdp, xdp_buff from the skb"),
    # --- tun + vhost-net --------------------------------------------------------------------
    ("tun_net_xmit", "tun ndo_start_xmit: filters, skb orphan, ptr_ring produce under lock"),
    ("sock_def_readable", "sk_data_ready on the tfile socket: vhost_poll_wakeup callback"),
    ("vhost_poll_queue", "vhost_vq_work_queue: queue handle_rx on the worker (llist_add)"),
    ("handle_rx", "one vhost-net handle_rx pass: vq mutex, disable/enable notify"),
    ("__ptr_ring_produce", "one ptr_ring produce (tagged xsk desc pointer, zc v2)"),
    ("ptr_ring_consume_batched", "vhost_net_buf_produce: one pointer taken from the ptr_ring"),
    ("get_rx_bufs", "vhost_get_vq_desc: one guest avail entry to an iovec"),
    ("tun_do_read", "tun_recvmsg/tun_do_read/tun_put_user: vnet header, stats (per packet)"),
    ("copy_to_iter", "payload copy into guest memory (per byte; skb_copy_datagram_iter)"),
    ("vhost_add_used_and_signal_n", "vhost_net_signal_used: write used entries, publish idx"),
    ("eventfd_signal", "irqfd: inject the guest's rx interrupt"),
    ("xsk_tx_release", "publish the TX consumer after a single-descriptor peek"),
    ("virtnet_receive", "guest virtio-net rx: receive_buf, build skb, GRO (per packet)"),
    ("try_fill_recv", "guest virtio-net rx refill: one buffer added to the avail ring"),
    ("virtqueue_kick", "guest notify: vmexit, ioeventfd to the vhost worker"),
    # --- virtio-net (split virtqueue, xsk zero copy, DPDK virtio PMD, vhost-user host) ---------
    ("virtqueue_add", "virtqueue_add_split: descriptors/indirect table fill, avail entry"),
    ("virtqueue_add_outbuf", "virtqueue_add_outbuf(_premapped): sg setup wrapper, per buffer"),
    ("virtqueue_add_inbuf", "virtqueue_add_inbuf(_premapped): rx buffer wrapper, per buffer"),
    ("detach_buf_split", "detach_buf_split: walk the chain back to the free list"),
    ("virtqueue_get_buf_ctx", "virtqueue_get_buf_ctx_split: read one used entry"),
    ("virtqueue_kick_prepare", "virtqueue_kick_prepare_split: barrier + vring_need_event"),
    ("virtqueue_enable_cb_prepare", "re-arm callbacks (used_event) + virtqueue_poll race check"),
    ("kmalloc_slab", "kmalloc size-class lookup for the indirect table"),
    ("memset_erms", "initialising a freshly kmalloc'd indirect table"),
    ("kfree", "kfree of an indirect table in detach_buf_split"),
    ("vring_map_one_sg", "DMA-map the indirect table (data is premapped)"),
    ("virtqueue_desc_cache_get", "desc cache: pop an indirect table from the per-vq free list"),
    ("virtqueue_desc_cache_put", "desc cache: push an indirect table back on the free list"),
    ("virtnet_xsk_xmit", "virtnet_xsk_xmit_one: xsk_buff_raw_get_dma, sync, 2-sg setup"),
    ("virtnet_xsk_run", "one xsk xmit pass per tx NAPI poll (virtnet_poll_tx in 6.13)"),
    ("__free_old_xmit_ptr", "__free_old_xmit: per completed buffer, token decode + stats"),
    ("receive_xsk", "virtnet_receive_xsk_buf: buf_to_xdp, size check, xdp buff setup"),
    ("virtnet_poll_cleantx", "rx NAPI's virtnet_poll_cleantx: txq trylock + disable_cb"),
    ("start_xmit", "virtio-net ndo_start_xmit (copy mode): xmit_skb, header, stats"),
    ("vhost_user_poll", "one host PMD loop iteration over the guest's queues"),
    ("rte_vhost_dequeue_burst", "host: one guest TX packet dequeued (desc walk + copy to mbuf)"),
    ("rte_vhost_enqueue_burst", "host: one packet into a guest RX buffer (copy + used entry)"),
    ("pkt_burst_io_forward", "guest testpmd io forwarding: one loop (rx burst + tx burst)"),
    ("virtio_recv_pkts", "DPDK virtio PMD rx: one used entry to an mbuf"),
    ("virtio_rxq_rearm", "DPDK virtio PMD rx refill: mbuf alloc + avail entry"),
    ("virtio_xmit_pkts", "DPDK virtio PMD tx: one packet (header push, 1 descriptor)"),
    ("virtio_xmit_cleanup", "DPDK virtio PMD tx cleanup: one used entry, mbuf free"),
    # --- paths-b: tun guest PMD, tun zc v1/v2, veth GRO/GSO, the shared LLC ---------------
    ("tun_peek_len", "tun zc v1: sock->ops->peek_len per packet (tun_get/tun_put, pool_lock)"),
    ("xsk_ring_publish", "storing a ring index line the other core has read: its RFO"),
    ("pkt_burst_receive", "guest testpmd rxonly: one loop (rte_eth_rx_burst call)"),
    ("rte_pktmbuf_free", "guest testpmd rxonly: one mbuf back to the mempool cache"),
    ("skb_gro_receive", "GRO: one more same-flow UDP skb merged into the held one (frag)"),
    ("mlx5e_txwqe_build_dsegs", "NIC driver: one data segment (frag DMA map) of a GSO skb"),
    ("skb_segment", "software GSO: one segment skb of __udp_gso_segment (no NIC USO)"),
    ("mlx5e_xmit", "NIC driver: xmit + completion of one more skb past the bridge"),
    ("llc_miss", "packet bytes read from memory instead of the LLC (per byte)"),
    # --- busy poll, vhost-net guest TX (handle_tx), checksum offload ------------------------
    ("napi_watchdog", "hrtimer interrupt: napi_watchdog schedules a deferred-IRQ NAPI"),
    ("handle_tx", "one vhost-net handle_tx_copy pass: vq mutex, disable/enable notify"),
    ("vhost_get_vq_desc", "vhost_get_vq_desc: one guest TX avail entry to an iovec"),
    ("tun_get_user", "tun_sendmsg → tun_get_user: vnet header, skb alloc (per packet)"),
    ("copy_from_iter", "payload copy from guest memory into the skb (per byte)"),
    ("br_handle_frame", "host bridge ingress of the tap's skb: fdb lookup, to the sink"),
    ("vhost_net_busy_poll", "one vhost_net_busy_poll spin over the vq (busyloop_timeout)"),
    ("app_csum", "user space: the application's L4 checksum over the frame (per byte)"),
    ("xsk_tx_metadata_request", "the driver's checksum request from XDP_TX_METADATA"),
    # --- AF_XDP multi-buffer (XDP_USE_SG) -------------------------------------------------
    ("app_desc_contd", "user space: one more descriptor of a multi-buffer packet"),
    ("xsk_build_skb_frag", "copy-mode TX: one more descriptor as an skb frag (alloc_page)"),
    ("xsk_buff_add_frag", "zero-copy RX: one more UMEM buffer chained to the xdp_buff"),
    ("xdp_buff_add_frag", "driver RX: one more page as a frag of a multi-buffer xdp_buff"),
    # --- a process on the tap fd (tun.peer = fd) --------------------------------------------
    ("ksys_write", "write() on the tap fd: syscall entry/exit, vfs_write → tun_chr_write_iter"),
    ("ksys_read", "read() on the tap fd: syscall entry/exit, vfs_read → tun_chr_read_iter"),
    ("do_sys_poll", "ppoll() on the tap fd: tun_chr_poll, poll_wait, schedule until readable"),
    ("tun_build_skb", "tun_get_user's build path: page_frag refill, xdp_buff over the frame"),
    ("do_xdp_generic", "generic XDP on an skb: netif_receive_generic_xdp, generic redirect"),
    ("tun_ring_recv", "tun_do_read → tun_ring_recv: one ptr_ring_consume of the tfile ring"),
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
# veth
IPERF3_UDP_SEND = INDEX["iperf3_udp_send"]
XUDP_SEND_PKT = INDEX["xudp_send_pkt"]
UDP_SENDMSG = INDEX["udp_sendmsg"]
IP_GENERIC_GETFRAG = INDEX["ip_generic_getfrag"]
IP_OUTPUT = INDEX["ip_output"]
DEV_QUEUE_XMIT = INDEX["__dev_queue_xmit"]
VETH_XMIT = INDEX["veth_xmit"]
NETIF_RX = INDEX["netif_rx"]
NETIF_RECEIVE_SKB = INDEX["__netif_receive_skb"]
SOCK_WFREE = INDEX["sock_wfree"]
VETH_XDP_RCV_SKB = INDEX["veth_xdp_rcv_skb"]
NAPI_GRO_RECEIVE = INDEX["napi_gro_receive"]
BR_FORWARD_FINISH = INDEX["br_forward_finish"]
VETH_SINK_EXTRA = INDEX["veth_sink_extra"]
VETH_XSK_BUILD_SKB = INDEX["veth_xsk_build_skb"]
VETH_XSK_GSO_SKB = INDEX["veth_xsk_gso_skb"]
KMALLOC = INDEX["__kmalloc"]
SKB_FILL_PAGE_DESC = INDEX["skb_fill_page_desc"]
VETH_XSK_DESTRUCT_SKB = INDEX["veth_xsk_destruct_skb"]
XDP_TEST_RUN_BATCH = INDEX["xdp_test_run_batch"]
XDP_DO_REDIRECT = INDEX["xdp_do_redirect"]
VETH_XDP_XMIT = INDEX["veth_xdp_xmit"]
VETH_XDP_RCV_ONE = INDEX["veth_xdp_rcv_one"]
XDP_BUILD_SKB_FROM_FRAME = INDEX["__xdp_build_skb_from_frame"]
DO_XDP_GENERIC = INDEX["do_xdp_generic"]
# tun + vhost-net
TUN_NET_XMIT = INDEX["tun_net_xmit"]
SOCK_DEF_READABLE = INDEX["sock_def_readable"]
VHOST_POLL_QUEUE = INDEX["vhost_poll_queue"]
HANDLE_RX = INDEX["handle_rx"]
PTR_RING_PRODUCE = INDEX["__ptr_ring_produce"]
PTR_RING_CONSUME_BATCHED = INDEX["ptr_ring_consume_batched"]
GET_RX_BUFS = INDEX["get_rx_bufs"]
TUN_DO_READ = INDEX["tun_do_read"]
COPY_TO_ITER = INDEX["copy_to_iter"]
VHOST_SIGNAL_USED = INDEX["vhost_add_used_and_signal_n"]
EVENTFD_SIGNAL = INDEX["eventfd_signal"]
XSK_TX_RELEASE = INDEX["xsk_tx_release"]
VIRTNET_RECEIVE = INDEX["virtnet_receive"]
TRY_FILL_RECV = INDEX["try_fill_recv"]
VIRTQUEUE_KICK = INDEX["virtqueue_kick"]
# virtio-net
VIRTQUEUE_ADD = INDEX["virtqueue_add"]
VIRTQUEUE_ADD_OUTBUF = INDEX["virtqueue_add_outbuf"]
VIRTQUEUE_ADD_INBUF = INDEX["virtqueue_add_inbuf"]
DETACH_BUF_SPLIT = INDEX["detach_buf_split"]
VIRTQUEUE_GET_BUF_CTX = INDEX["virtqueue_get_buf_ctx"]
VIRTQUEUE_KICK_PREPARE = INDEX["virtqueue_kick_prepare"]
VIRTQUEUE_ENABLE_CB_PREPARE = INDEX["virtqueue_enable_cb_prepare"]
KMALLOC_SLAB = INDEX["kmalloc_slab"]
MEMSET_ERMS = INDEX["memset_erms"]
KFREE = INDEX["kfree"]
VRING_MAP_ONE_SG = INDEX["vring_map_one_sg"]
DESC_CACHE_GET = INDEX["virtqueue_desc_cache_get"]
DESC_CACHE_PUT = INDEX["virtqueue_desc_cache_put"]
VIRTNET_XSK_XMIT = INDEX["virtnet_xsk_xmit"]
VIRTNET_XSK_RUN = INDEX["virtnet_xsk_run"]
FREE_OLD_XMIT_PTR = INDEX["__free_old_xmit_ptr"]
RECEIVE_XSK = INDEX["receive_xsk"]
VIRTNET_POLL_CLEANTX = INDEX["virtnet_poll_cleantx"]
START_XMIT = INDEX["start_xmit"]
VHOST_USER_POLL = INDEX["vhost_user_poll"]
RTE_VHOST_DEQUEUE = INDEX["rte_vhost_dequeue_burst"]
RTE_VHOST_ENQUEUE = INDEX["rte_vhost_enqueue_burst"]
PKT_BURST_IO_FORWARD = INDEX["pkt_burst_io_forward"]
VIRTIO_RECV_PKTS = INDEX["virtio_recv_pkts"]
VIRTIO_RXQ_REARM = INDEX["virtio_rxq_rearm"]
VIRTIO_XMIT_PKTS = INDEX["virtio_xmit_pkts"]
VIRTIO_XMIT_CLEANUP = INDEX["virtio_xmit_cleanup"]
# paths-b
TUN_PEEK_LEN = INDEX["tun_peek_len"]
XSK_RING_PUBLISH = INDEX["xsk_ring_publish"]
PKT_BURST_RECEIVE = INDEX["pkt_burst_receive"]
RTE_PKTMBUF_FREE = INDEX["rte_pktmbuf_free"]
SKB_GRO_RECEIVE = INDEX["skb_gro_receive"]
NIC_DSEG = INDEX["mlx5e_txwqe_build_dsegs"]
SKB_SEGMENT = INDEX["skb_segment"]
NIC_XMIT = INDEX["mlx5e_xmit"]
LLC_MISS = INDEX["llc_miss"]
# busy poll, vhost-net guest TX, checksum offload
NAPI_WATCHDOG = INDEX["napi_watchdog"]
HANDLE_TX = INDEX["handle_tx"]
VHOST_GET_VQ_DESC = INDEX["vhost_get_vq_desc"]
TUN_GET_USER = INDEX["tun_get_user"]
KSYS_WRITE = INDEX["ksys_write"]
KSYS_READ = INDEX["ksys_read"]
DO_SYS_POLL = INDEX["do_sys_poll"]
TUN_BUILD_SKB = INDEX["tun_build_skb"]
DO_XDP_GENERIC = INDEX["do_xdp_generic"]
TUN_RING_RECV = INDEX["tun_ring_recv"]
COPY_FROM_ITER = INDEX["copy_from_iter"]
BR_HANDLE_FRAME = INDEX["br_handle_frame"]
VHOST_NET_BUSY_POLL = INDEX["vhost_net_busy_poll"]
APP_CSUM = INDEX["app_csum"]
XSK_TX_METADATA_REQUEST = INDEX["xsk_tx_metadata_request"]
APP_DESC_CONTD = INDEX["app_desc_contd"]
XSK_BUILD_SKB_FRAG = INDEX["xsk_build_skb_frag"]
XSK_BUFF_ADD_FRAG = INDEX["xsk_buff_add_frag"]
XDP_BUFF_ADD_FRAG = INDEX["xdp_buff_add_frag"]
