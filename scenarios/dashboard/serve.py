"""Start the dashboard: `solara run scenarios.dashboard.page` on localhost, in a child process, until Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from scenarios.inspect_run import Run
from scenarios.registry import SCENARIOS
from scenarios.settings import SettingsError, validate

ENV = "VCLOUD_DASHBOARD"  # the page reads its description (JSON) from here
PAGE_MODULE = "scenarios.dashboard.page"


def server_command(port: int, host: str = "127.0.0.1") -> list[str]:
    """`solara run` in production mode (no file watcher, minified assets; served from the solara-assets package)."""
    return [sys.executable, "-m", "solara", "run", PAGE_MODULE, "--host", host, "--port", str(port), "--production",
            "--no-open", "--no-check-version"]  # fmt: skip


# Solara warns in 12 lines, on every page load, that a session cookie for a host other than "localhost" cannot be
# samesite=none without https (solara/server/starlette.py): true, and of no matter for a page on 127.0.0.1 that no
# other site embeds
QUIET = "ignore:Cookies with samesite=none require https"


def server_env(config: dict[str, Any]) -> dict[str, str]:
    """The child's environment: the page's description, no telemetry (the page must work offline), and none of
    Solara's cookie warnings."""
    warnings = ",".join(w for w in (os.environ.get("PYTHONWARNINGS"), QUIET) if w)
    return {**os.environ, ENV: json.dumps(config), "SOLARA_TELEMETRY_MIXPANEL_ENABLE": "False",
            "PYTHONWARNINGS": warnings}  # fmt: skip


def serve(config: dict[str, Any], port: int, host: str = "127.0.0.1") -> int:
    """Serve until interrupted (Ctrl-C or SIGTERM, which stop the server too); the server's exit status."""
    print(f"dashboard on http://{host}:{port}/ (Ctrl-C stops it)", flush=True)
    child = subprocess.Popen(server_command(port, host), env=server_env(config))
    previous = signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        child.wait(timeout=10)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def dashboard_config(
    scenario: str, given: dict[str, Any], seed: int, chunk_s: float, run_dir: Path | None = None
) -> dict[str, Any]:
    """What the page shows, checked before the server starts: a bad scenario, setting or run directory raises
    (`SettingsError`, `RunError`: one line naming it), as `vcloud run` would."""
    if not chunk_s > 0:
        raise ValueError(f"--step-s {chunk_s:g}: must be > 0")
    if run_dir is not None:
        Run(run_dir).table("vm_trace", "the dashboard")  # exists and has its trace
        return {"run_dir": str(run_dir.resolve()), "chunk_s": chunk_s}
    if scenario not in SCENARIOS:
        raise SettingsError(f"unknown scenario {scenario!r} (try: {', '.join(SCENARIOS)})")
    validate(SCENARIOS[scenario].Settings, given)
    if seed < 0:
        raise ValueError(f"--seed {seed}: must be >= 0")
    return {"scenario": scenario, "settings": given, "seed": seed, "chunk_s": chunk_s}
