"""The frames real runs send: Ethernet/IPv4/UDP with a seeded payload."""
from __future__ import annotations

import socket
import struct

import numpy as np

from xskbench.real import topology as T
from xskbench.real.section import ETH_IP_UDP

UDP_PORT = 9  # discard


def csum(b: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp_frame(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, size: int,
              seed: int = 1, port: int = UDP_PORT) -> bytes:
    """An Ethernet/IPv4/UDP frame of ``size`` bytes (no FCS); payload from ``seed``."""
    payload = np.random.default_rng(seed).integers(0, 256, size - ETH_IP_UDP, np.uint8).tobytes()
    udp = struct.pack("!HHHH", port, port, 8 + len(payload), 0) + payload
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                      socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    iph = iph[:10] + struct.pack("!H", csum(iph)) + iph[12:]
    return T.mac_bytes(dst_mac) + T.mac_bytes(src_mac) + b"\x08\x00" + iph + udp


def frame_for(cfg, topo, towards_app: bool) -> bytes:
    """The run's frame, from the peer to the app or back."""
    (_, _, ip_b, mac_b), (_, _, ip_a, mac_a) = topo.app, topo.peer
    if towards_app:
        return udp_frame(mac_b, mac_a, ip_a, ip_b, cfg.packet_size, cfg.seed)
    return udp_frame(mac_a, mac_b, ip_b, ip_a, cfg.packet_size, cfg.seed)
