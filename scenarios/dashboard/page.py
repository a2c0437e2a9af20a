"""The module `solara run` serves (`vcloud dashboard` starts it): its page is described by the environment.

`VCLOUD_DASHBOARD` holds JSON: {"run_dir": DIR, "chunk_s": S} for a finished run, else {"scenario": NAME,
"settings": {dotted key: value} (the `--set` pairs), "seed": N, "chunk_s": S}. Settings were validated by the
command line before the server started.
"""

from __future__ import annotations

import json
import os

import solara

from scenarios.dashboard.app import live_page, replay_page
from scenarios.dashboard.controls import model_params
from scenarios.dashboard.serve import ENV
from scenarios.registry import SCENARIOS
from scenarios.settings import validate


@solara.component
def Page():
    """One page per browser session, each with its own model."""
    config = json.loads(os.environ.get(ENV, "{}"))
    chunk_s = float(config.get("chunk_s", 30.0))
    if "run_dir" in config:
        return replay_page(config["run_dir"], chunk_s)
    name = config.get("scenario", "flexslot")
    given = config.get("settings", {})
    settings = validate(SCENARIOS[name].Settings, given)
    return live_page(name, model_params(name, settings, given, int(config.get("seed", 1)), chunk_s))
