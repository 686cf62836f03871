"""The route of a study's settings through a run (tools/route.py): each stage entered once, in the data's order.

The one stage entered twice is the unit matrices': the writer pulls them from the run's result a
(group, layer) table at a time (``Unitized.part_tasks``), so memory holds one table, not the corpus's.
"""

from __future__ import annotations

import importlib.util

from tests.conftest import EXAMPLE, ROOT

spec = importlib.util.spec_from_file_location("route", ROOT / "tools" / "route.py")
route = importlib.util.module_from_spec(spec)
spec.loader.exec_module(route)


def test_the_settings_pass_each_stage_once(tmp_path) -> None:
    stops = route.trace(EXAMPLE / "study.toml", tmp_path / "out", "Settings")
    assert route.stage_route(stops) == ["config", "spans", "output", "spans"]
    assert stops[0] == ("unitize.config.study", "override") and ("unitize.run.pipeline", "convert") in stops
    found = route.counts(stops, route.layers())
    assert found["stage_returns"] == 1
    modules = {m for m, _ in stops}
    assert modules == {"unitize.config.study", "unitize.run.pipeline", "unitize.spans.run", "unitize.spans.batch",
                       "unitize.spans.fragments", "unitize.spans.join", "unitize.spans.matrices", "unitize.output.write"}
    assert found["modules"] == 8


def test_the_counts_see_a_return_and_a_climb() -> None:
    """A route that goes back to a stage it left is counted (so the test above can fail)."""
    stops = [("unitize.units.spaces", "f"), ("unitize.spans.run", "g"), ("unitize.units.spaces", "h")]
    found = route.counts(stops, route.layers())
    assert found["returns"] == 1 and found["climbs"] == 1 and found["stage_returns"] == 1
    assert route.stage_route(stops) == ["units", "spans", "units"]
