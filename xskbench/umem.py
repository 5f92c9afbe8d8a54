"""UMEM buffer geometry of an xsk section: what one buffer holds and how many descriptors
a packet takes (plain Python: config checks, the arena's setup and devices' checks)."""

XDP_PACKET_HEADROOM = 256  # bytes the kernel reserves in front of every XDP frame


def rx_frame_size(x) -> int:
    """xsk_pool_get_rx_frame_size: the bytes one UMEM buffer holds."""
    return x.frame_size - x.headroom - XDP_PACKET_HEADROOM


def descs_per_packet(x, packet_size: int) -> int:
    """Descriptors one packet takes: ceil(len / frame size) with XDP_USE_SG (__xsk_rcv's
    num_desc; the sender splits the same way), else 1 (a bigger packet is refused)."""
    return -(-packet_size // rx_frame_size(x)) if x.multi_buffer else 1
