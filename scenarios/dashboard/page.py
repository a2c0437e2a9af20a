"""The module `solara run` serves (`vcloud dashboard` starts it): its page is described by the environment.

`VCLOUD_DASHBOARD` holds JSON: {"run_dir": DIR, "chunk_s": S} for a finished run, else {"scenario": NAME,
"settings": {dotted key: value} (the `--set` pairs), "seed": N, "chunk_s": S}. Settings were validated by the
command line before the server started.
"""

from __future__ import annotations

import json
import os

import solara

from scenarios.dashboard.app import LivePage, ReplayPage
from scenarios.dashboard.serve import ENV
from scenarios.registry import SCENARIOS


@solara.component
def Page():
    """One page per browser session, each with its own model."""
    config = json.loads(os.environ.get(ENV, "{}"))
    chunk_s = float(config.get("chunk_s", 30.0))
    if "run_dir" in config:
        return ReplayPage(config["run_dir"], chunk_s)
    name = config.get("scenario", "flexslot")
    return LivePage(name, SCENARIOS[name].Settings, config.get("settings", {}), int(config.get("seed", 1)), chunk_s)
