"""Helpers the seed notebooks share: a seed's published numbers beside the emulation, a
seed scenario with what-if overrides, and the published-vs-emulated bar chart."""
from . import calibrate, reproduce

COLUMNS = ["id", "metric", "published", "emulated", "unit", "error", "tolerance", "kind",
           "within"]


def seed_table(system, scenarios=None):
    """This seed's numbers beside the emulation (the rows `xskbench reproduce` checks)."""
    rows = [r for r in calibrate.read_rows() if r["system"] == system and r["kind"] != "sample"
            and (scenarios is None or r["scenario"] in scenarios)]
    return reproduce.reproduce(rows)[COLUMNS]


def scenario(name, **overrides):
    """A seed scenario's config (data/scenarios.yaml) with what-if overrides
    (``**{"virtio.queue_size": 512}``)."""
    return calibrate.scenario_config(name).replace(**overrides)


def bars(df, title):
    """Published beside emulated, one pair of bars per row."""
    import plotly.graph_objects as go

    return go.Figure([go.Bar(name="published", x=df.id, y=df.published),
                      go.Bar(name="emulated", x=df.id, y=df.emulated)],
                     layout=dict(title=title, barmode="group", height=380))
