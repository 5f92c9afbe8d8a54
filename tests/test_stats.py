"""The stats table is the one place for counter names: the tools' names (testpmd, xdpsock)
and the drop reasons are columns of it, and the reports read them from there."""
import re

from xskbench import stats
from xskbench.config import RunConfig
from xskbench.run import run


def test_tool_names_and_drop_reasons_are_columns_of_the_table():
    assert set(stats.TESTPMD) == {"RX-packets", "RX-bytes", "RX-missed", "RX-errors",
                                  "RX-nombuf", "TX-packets", "TX-errors", "TX-bytes"}
    assert stats.TESTPMD["RX-missed"] == "rx_missed"  # one meaning: the port's imissed
    assert set(stats.TESTPMD.values()) | set(stats.XDPSOCK.values()) <= set(stats.NAMES)
    assert stats.XDPSOCK["rx"] == "rx_packets" and stats.XDPSOCK["tx"] == "tx_packets"
    assert stats.DROP_REASONS == tuple(s.name for s in stats.TABLE if s.drop)
    assert {"rx_missed", "rx_ring_full", "tun_tx_dropped"} <= set(stats.DROP_REASONS)


def test_the_testpmd_report_shows_each_field_from_its_counter():
    # a receive run that overruns the NIC: rx_missed counts, and RX-missed shows it alone
    res = run(RunConfig().replace(**{"workload.kind": "rxdrop", "workload.duration_s": 0.002,
                                     "workload.warmup_s": 0.0005}))
    text = res.report(style="testpmd")
    shown = {k: int(v) for k, v in re.findall(r"([RT]X-[a-z]+): +(\d+)", text)}
    assert shown == {field: res.counters[name] for field, name in stats.TESTPMD.items()}
    assert res.counters["rx_missed"] > 0
