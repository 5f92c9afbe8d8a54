"""What the workers run.  The *app* (namespace ``-b``) is the workload under test on
``vb``/``tap0``: an AF_XDP socket (rxdrop, l2fwd, txonly) or a UDP socket (rxdrop, txonly).
The *peer* (namespace ``-a``) is the far end: a sender (rxdrop, l2fwd) or a sink (txonly).
Senders: ``xdp`` - BPF_PROG_RUN with live frames redirected into ``va`` (the xdp-trafficgen
mechanism, the only one fast enough to load a copy-mode receiver), ``xsk`` - AF_XDP txonly in
copy mode, ``udp`` - sendmmsg(), ``tun`` - non-blocking write() into the tap fd (the tun's
only sender).  Sinks: an XDP_DROP program (veth) or read() of the tap fd."""
from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import struct
import time

import numpy as np

from xskbench.real import bpf, xsk
from xskbench.real.frames import UDP_PORT, frame_for
from xskbench.real.section import ETH_IP_UDP


def _xdp_link(ifindex: int, code: bytes, name: str, skb: bool):
    prog = bpf.load_xdp(code, name)
    try:
        link = bpf.link_xdp(prog, ifindex, skb_mode=skb)
    except OSError:
        prog.close()
        raise
    return prog, link


def _loop_args(ctx, fd: int, events: int):
    return xsk.pollfd(fd, events), xsk.timespec(10), np.zeros(8, np.uint64)


def app_xsk(ctx) -> dict:
    """The AF_XDP application on vb/tap0: rxdrop, l2fwd or txonly."""
    cfg = ctx.cfg
    ns, dev, _, _ = ctx.topo.app
    ifindex = socket.if_nametoindex(dev)
    skb = cfg.xdp_mode == "skb"
    wait = xsk.WAITS[cfg.wait]
    objs = []
    try:
        rx = cfg.workload != "txonly"
        if rx:
            xmap = bpf.xskmap(64)
            objs.append(xmap)
            prog, link = _xdp_link(ifindex, bpf.prog_xsk_redirect(xmap.fileno()), "xsk_redir",
                                   skb)
            objs += [prog, link]
        s = xsk.XskSocket(ifindex, 0, rx=rx, tx=cfg.workload != "rxdrop", ring=cfg.ring,
                          frame_size=cfg.frame_size, zerocopy=cfg.mode == "zerocopy",
                          need_wakeup=cfg.need_wakeup, busy_poll=cfg.wait == "busy-poll",
                          busy_budget=cfg.batch, skb_mode=skb, dev=dev,
                          fill_frames=None if rx else 0)
        objs.append(s)
        if rx:
            bpf.map_update_u32(xmap, 0, s.fileno())
        pfd, ts, sbuf = _loop_args(ctx, s.fileno(), xsk.POLLIN)
        flen = np.zeros(s.nframes, np.int64)
        info = {"zerocopy": s.zerocopy, "nframes": s.nframes, "ifindex": ifindex}
        if cfg.workload == "txonly":
            s.write_frames(frame_for(ctx.cfg, ctx.topo, towards_app=False), s.nframes)
        ctx.ready(**info)
        ctx.wait_go()
        if cfg.workload == "rxdrop":
            xsk.rx_loop(s.rx.parts(), s.fq.parts(), ctx.ctl, ctx.ctr, s.fileno(), cfg.batch,
                        wait, cfg.need_wakeup, -cfg.frame_size, pfd, ts, sbuf)
        elif cfg.workload == "l2fwd":
            xsk.l2fwd_loop(s.rx.parts(), s.fq.parts(), s.tx.parts(), s.cq.parts(), s.umem,
                           flen, s.frame_shift, ctx.ctl, ctx.ctr, s.fileno(), cfg.batch, wait,
                           cfg.need_wakeup, pfd, ts, sbuf)
        else:
            xsk.tx_loop(s.tx.parts(), s.cq.parts(), flen, s.frame_shift, s.nframes,
                        cfg.packet_size, ctx.ctl, ctx.ctr, s.fileno(), cfg.batch, wait,
                        cfg.need_wakeup, pfd, ts, sbuf)
        info["xdp_statistics"] = s.statistics()
        return info
    finally:
        for o in reversed(objs):
            o.close()


def _udp_socket(bind_ip: str, port: int, connect_to: str | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with contextlib.suppress(OSError):  # SO_RCVBUFFORCE/SO_SNDBUFFORCE: 8 MiB
        s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)
        s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)
    s.bind((bind_ip, port))
    if connect_to:
        s.connect((connect_to, port))
    return s


def app_udp(ctx) -> dict:
    """The kernel-socket baseline: recvmmsg() receiver or sendmmsg() sender."""
    cfg = ctx.cfg
    _, _, ip_b, _ = ctx.topo.app
    _, _, ip_a, _ = ctx.topo.peer
    with contextlib.ExitStack() as stack:
        if cfg.workload == "rxdrop":
            s = stack.enter_context(_udp_socket(ip_b, UDP_PORT))
            vec = xsk.MsgVec(cfg.batch, 2048)
            pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLIN)
            ctx.ready()
            ctx.wait_go()
            xsk.udp_rx_loop(s.fileno(), vec.vec, cfg.batch, ETH_IP_UDP, ctx.ctl, ctx.ctr,
                            xsk.WAITS[cfg.wait], pfd, ts)
        else:
            s = stack.enter_context(_udp_socket(ip_b, UDP_PORT, connect_to=ip_a))
            vec = xsk.MsgVec(cfg.batch, 0, payload=bytes(cfg.packet_size - ETH_IP_UDP))
            pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
            ctx.ready()
            ctx.wait_go()
            xsk.udp_tx_loop(s.fileno(), vec.vec, cfg.batch, cfg.packet_size, ctx.ctl,
                            ctx.ctr, pfd, ts, xsk.C_TX)
    return {}


def peer(ctx) -> dict:
    """The far end: a sender (rxdrop, l2fwd), a sink (txonly) or both (l2fwd)."""
    cfg = ctx.cfg
    ns, dev, _, _ = ctx.topo.peer
    sender = cfg.resolved_sender()
    if sender == "tun":
        return _peer_tap(ctx, write=cfg.workload != "txonly")
    ifindex = socket.if_nametoindex(dev)
    with contextlib.ExitStack() as stack:
        if cfg.workload != "rxdrop":  # something comes back: drop it at the door
            for o in _xdp_link(ifindex, bpf.prog_action(bpf.XDP_DROP), "sink", False):
                stack.callback(o.close)
        if cfg.workload == "txonly":
            ctx.ready(role="sink")
            ctx.wait_go()
            while not ctx.ctl[xsk.STOP]:
                ctx.serve_python()
                time.sleep(0.0005)
            ctx.serve_python()
            return {}
        frame = frame_for(ctx.cfg, ctx.topo, towards_app=True)
        if sender == "xdp":
            prog = bpf.load_xdp(bpf.prog_redirect(ifindex), "tgen")
            stack.callback(prog.close)
            return _peer_live(ctx, bpf.LiveFrames(prog, frame, batch=64))
        if sender == "xsk":
            s = stack.enter_context(xsk.XskSocket(ifindex, 0, rx=False, tx=True, ring=2048,
                                                  frame_size=cfg.frame_size, dev=dev,
                                                  fill_frames=0))
            s.write_frames(frame, s.nframes)
            pfd, ts, sbuf = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
            flen = np.zeros(s.nframes, np.int64)
            ctx.ready(role="xsk txonly sender")
            ctx.wait_go()
            xsk.tx_loop(s.tx.parts(), s.cq.parts(), flen, s.frame_shift, s.nframes,
                        cfg.packet_size, ctx.ctl, ctx.ctr, s.fileno(), 64, xsk.WAIT_SPIN, True,
                        pfd, ts, sbuf)
            # tx_loop counted completions as tx; for a peer they are what it offered
            return {}
        _, _, ip_b, _ = ctx.topo.app
        _, _, ip_a, _ = ctx.topo.peer
        s = stack.enter_context(_udp_socket(ip_a, UDP_PORT, connect_to=ip_b))
        vec = xsk.MsgVec(64, 0, payload=frame[ETH_IP_UDP:])
        pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
        ctx.ready(role="udp sender")
        ctx.wait_go()
        xsk.udp_tx_loop(s.fileno(), vec.vec, 64, cfg.packet_size, ctx.ctl, ctx.ctr, pfd, ts,
                        xsk.C_OFFERED)
        return {}


LIVE_CALL_S = 0.25


def _peer_live(ctx, live) -> dict:
    """BPF_PROG_RUN live-frame sender.  Each call sets up and tears down a page pool and
    waits for an RCU grace period (tens of ms on a busy machine), so calls are long
    (about LIVE_CALL_S); the offered count of the window comes from the kernel's
    ``tx_queue_*_xdp_xmit`` counters of the sending veth, not from these coarse steps.
    With ``rate_pps`` each slot of LIVE_CALL_S sends rate x slot frames in one call (a
    burst at full speed) and sleeps out the rest: the mean rate is exact, not its shape."""
    ctx.ready(role="xdp live-frames sender")
    ctx.wait_go()
    rate = ctx.cfg.rate_pps
    repeat = max(1, int(rate * LIVE_CALL_S)) if rate else 65536
    ctl, ctr = ctx.ctl, ctx.ctr
    slot_end = time.perf_counter()
    while not ctl[xsk.STOP]:
        ctx.serve_python()
        t = time.perf_counter()
        live.run(repeat)
        ctr[xsk.C_OFFERED] += repeat
        if rate:  # paced: a burst at full speed, then sleep out the slot
            slot_end += LIVE_CALL_S
            while (left := slot_end - time.perf_counter()) > 0 and not ctl[xsk.STOP]:
                ctx.serve_python()
                time.sleep(min(left, 0.005))
            continue
        dt = time.perf_counter() - t
        repeat = int(min(1 << 26, max(4096, repeat * LIVE_CALL_S / max(dt, 1e-6))))
    ctx.serve_python()
    return {}


TUNSETIFF, IFF_TAP, IFF_NO_PI = 0x400454CA, 0x0002, 0x1000


def _peer_tap(ctx, write: bool) -> dict:
    cfg = ctx.cfg
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"tap0", IFF_TAP | IFF_NO_PI))
        frame = np.frombuffer(frame_for(ctx.cfg, ctx.topo, towards_app=True), np.uint8).copy()
        rbuf = np.zeros(2048, np.uint8)
        pfd, ts, _ = _loop_args(ctx, fd, xsk.POLLIN)
        ctx.ready(role="tap writer" if write else "tap reader")
        ctx.wait_go()
        xsk.tap_loop(fd, frame, rbuf, ctx.ctl, ctx.ctr, cfg.batch, write, pfd, ts)
    finally:
        os.close(fd)
    return {}
