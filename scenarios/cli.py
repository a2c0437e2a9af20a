"""The `vcloud` command line: `vcloud list`, `vcloud show SCENARIO`, `vcloud run SCENARIO [--set K=V ...]
[--seed N] [--out DIR]`, `vcloud trace RUN_DIR [--vm NAME ...] [--from S] [--to S] [--plot KIND --out FILE.png]`,
`vcloud sweep`, `vcloud reproduce`, `vcloud --version`.

Bad input (unknown scenario, unknown or invalid setting, a bad --config or --out) prints one line naming the
field and the value and exits with status 2 before anything is computed or written. A run writes into a
temporary directory next to DIR and renames it at the end, so DIR is either complete or absent. A run that
reaches its time limit with work unfinished still writes DIR but exits with status 1; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

from scenarios.outputs import METRICS, PLOT_KINDS, OutputError, check_dir
from scenarios.registry import DEFAULT_SCENARIO, SCENARIOS, ScenarioFileError

# Each command imports what it needs when it runs (pydantic for settings, Mesa and NumPy for a model, pandas for
# tables, matplotlib for plots): `vcloud list` and `--help` pay for none of it.

# Every object of the process dies at exit: the interpreter's last cyclic collections would walk all of them
# (NumPy's, numba's, pandas', Mesa's, the model's) for 0.15-0.3 s of a short run, to free memory the exit frees anyway.
# Frozen, they are skipped; finalizers and file closing are not affected (they do not wait for the collector).
atexit.register(gc.freeze)

EXIT_BAD_INPUT = 2
EXIT_UNFINISHED = 1
EXIT_INTERRUPTED = 130


class BadInput(Exception):
    """User error: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`vcloud: error: ...`), like every other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"vcloud: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:  # `vcloud trace DIR | head`: the reader has what it wanted
        # Python's own recipe (docs, "Note on SIGPIPE"): no more output may reach the closed pipe, at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_UNFINISHED


def _run(args: argparse.Namespace) -> int:
    try:
        with warnings.catch_warnings():
            # an old setting name (scenarios.settings.RenamedSetting) is told in one line, never raised
            warnings.filterwarnings("always", message="settings: ", category=FutureWarning)
            warnings.showwarning = _one_line_warning
            return args.func(args)
    except KeyboardInterrupt:
        print("vcloud: interrupted (nothing was written)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if not isinstance(exc, _bad_input_types()):
            raise
        print(f"vcloud: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _bad_input_types() -> tuple[type[Exception], ...]:
    """The errors that are the user's (one line, exit 2); those of modules never imported cannot have been raised."""
    kinds: list[type[Exception]] = [BadInput, OutputError, ScenarioFileError]
    for module, name in (("scenarios.settings", "SettingsError"), ("scenarios.inspect_run", "RunError")):
        if module in sys.modules:
            kinds.append(getattr(sys.modules[module], name))
    return tuple(kinds)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning meant for the user (an old setting name) is one line on stderr, like an error."""
    if str(message).startswith("settings: "):
        print(f"vcloud: warning: {' '.join(str(message).split())}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _version() -> str:
    from scenarios.provenance import package_version

    return package_version()


def _seed(text: str) -> int:
    """--seed: a whole number from 0 to 2**63 - 1 (numpy's seeds, kept as 64-bit integers)."""
    from scenarios.limits import MAX_SEED

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{value} is not a whole number from 0 to 2**63 - 1")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (1 to 65535)")
    return value


def _check_processes(processes: int | None) -> None:
    """--processes: at least 1, at most this machine's CPUs (each worker is a forked copy running a CPU-bound run:
    more of them than CPUs only share the CPUs, in more memory)."""
    cpus = os.cpu_count() or 1
    if processes is not None and not 1 <= processes <= cpus:
        raise BadInput(f"--processes {processes}: from 1 to this machine's {cpus} CPUs")


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="vcloud", description="Hadoop task schedulers on an elastic virtual cloud")
    parser.add_argument("--version", action="version", version=f"vcloud {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p_list = sub.add_parser("list", help="list the scenarios")
    p_list.set_defaults(func=cmd_list)
    p_show = sub.add_parser("show", help="a scenario's settings with their defaults, bounds and descriptions")
    p_show.add_argument("scenario", help="a name of `vcloud list`")
    p_show.add_argument("key", nargs="?", help="only this setting (or group of settings), e.g. drs.period_s")
    p_show.add_argument("--group", metavar="NAME", help="only the settings of this group, e.g. hadoop")
    p_show.set_defaults(func=cmd_show)
    p_run = sub.add_parser("run", help="run a scenario")
    p_run.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO)
    p_run.add_argument("--set", dest="settings", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                       help="override a setting (repeatable; one --set may hold several pairs)")  # fmt: skip
    p_run.add_argument("--config", type=Path, help="config.json of an earlier run: rerun it (--set still applies)")
    p_run.add_argument("--seed", type=_seed, default=None, help="random seed (default 1, or the config's)")
    p_run.add_argument("--out", type=Path, default=None, help="run directory (default runs/SCENARIO-seedN)")
    p_run.add_argument("--check", action="store_true", help="assert the cloud's invariants every tick")
    p_run.add_argument("--quiet", action="store_true", help="no progress bar")
    p_run.set_defaults(func=cmd_run)
    p_trace = sub.add_parser("trace", help="per-VM CPU table of a run directory, or a plot of it")
    p_trace.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                         help="several only with --plot cdf or heatmap (labelled by their settings)")  # fmt: skip
    p_trace.add_argument("--vm", dest="vms", action="extend", nargs="+", default=[], metavar="NAME")
    p_trace.add_argument("--from", dest="t_from", type=_finite, metavar="S", help="window start (s)")
    p_trace.add_argument("--to", dest="t_to", type=_finite, metavar="S", help="window end (s)")
    p_trace.add_argument("--plot", choices=PLOT_KINDS, help="draw this instead of printing the table")
    p_trace.add_argument("--metric", choices=METRICS, help="heatmap share (default steal)")
    p_trace.add_argument("--bin", dest="bin_s", type=_finite, metavar="S", help="heatmap bin (default trace interval)")
    p_trace.add_argument("--vmax", type=_finite, metavar="SHARE",
                         help="heatmap colour-scale top, in (0, 1] (default the largest share drawn)")  # fmt: skip
    p_trace.add_argument("--out", type=Path, metavar="FILE.png", help="image to write with --plot")
    p_trace.set_defaults(func=cmd_trace)
    p_repro = sub.add_parser("reproduce", help="run the seed papers' experiments and write DIR/report.md")
    p_repro.add_argument("--out", type=Path, required=True,
                         help="report directory (rerun into it to resume: entries already measured there with "
                              "the same --quick are reused, the others measured)")  # fmt: skip
    p_repro.add_argument("--quick", action="store_true", help="a quarter of the input (minutes, not tens of minutes)")
    p_repro.add_argument("--processes", type=int, default=None, help="local worker processes (default: all CPUs)")
    p_repro.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster: scheduler address, or 'local'")
    p_repro.set_defaults(func=cmd_reproduce)
    p_sweep = sub.add_parser("sweep", help="run a grid of settings x seeds from a SPEC file (TOML or YAML)")
    p_sweep.add_argument("spec", type=Path, help="SPEC: scenario, settings (lists of values), seeds")
    p_sweep.add_argument("--out", type=Path, required=True, help="sweep directory (rerun into it to resume)")
    p_sweep.add_argument("--processes", type=int, default=None, help="local processes or --dask local workers")
    p_sweep.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster: scheduler address, or 'local'")
    p_sweep.add_argument("--frames", action="store_true", help="keep each run's tables in DIR/runs/RUN_ID/")
    p_sweep.add_argument("--retry-errors", action="store_true", help="rerun the runs that failed")
    p_sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    p_sweep.set_defaults(func=cmd_sweep)
    p_dash = sub.add_parser("dashboard", help="a live page of a scenario (or of a finished run) on localhost")
    p_dash.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO)
    p_dash.add_argument("--set", dest="settings", action="extend", nargs="+", default=[], metavar="KEY=VALUE")
    p_dash.add_argument("--seed", type=_seed, default=1)
    p_dash.add_argument("--port", type=_port, default=8765)
    p_dash.add_argument("--step-s", type=_finite, default=30.0, help="simulated seconds per step (default 30)")
    p_dash.add_argument("--run", type=Path, metavar="DIR", help="show this finished run directory instead")
    p_dash.set_defaults(func=cmd_dashboard)
    return parser


def cmd_list(args: argparse.Namespace) -> int:
    width = max(len(n) for n in SCENARIOS)
    for name in SCENARIOS:
        print(f"{name:<{width}}  {SCENARIOS.description(name)}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from scenarios.show import show_settings

    _check_scenario(args.scenario)
    print(show_settings(SCENARIOS[args.scenario], args.group, args.key))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from scenarios.glossary import summary_text
    from scenarios.provenance import provenance
    from scenarios.runner import run_model, write_run
    from scenarios.settings import parse_pairs, validate

    asked: dict[str, Any] = {}
    seed = args.seed
    scenario_name = args.scenario
    if args.config is not None:
        scenario_name, config_seed, asked = _read_config(args.config)
        seed = config_seed if seed is None else seed
    seed = 1 if seed is None else seed
    _check_scenario(scenario_name)
    scenario_name = SCENARIOS.key(scenario_name)  # a user's scenario file by its absolute path
    label = Path(scenario_name).stem if scenario_name.endswith(".py") else scenario_name
    out = Path(os.path.normpath(args.out)) if args.out is not None else Path("runs") / f"{label}-seed{seed}"
    check_dir(out)  # before the scenario's imports (Mesa's alone ~1 s): a taken --out is refused at once
    scenario = SCENARIOS[scenario_name]
    asked = {**asked, **parse_pairs(args.settings, scenario.Settings)}
    settings = validate(scenario.Settings, asked)
    try:
        model = scenario.build(settings, seed, check=args.check)
        model.start()  # applies the first allocation: a bad allocation is bad input, found before DIR exists
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    run_model(model, scenario.horizon_s(model), progress=not args.quiet, stops_itself=scenario.stops_itself)
    summary = scenario.summary(model)
    # `asked` reruns the run (a scenario's own defaults hold where nothing was asked: it may read which fields were
    # set); `settings` records every value it ran with
    config = {"scenario": scenario_name, "seed": seed, "asked": asked, "settings": settings.model_dump(mode="json"),
              "command": f"vcloud run --config {out / 'config.json'}", "provenance": provenance()}  # fmt: skip
    used = getattr(model, "used_settings", None)  # what the run took from its input rather than its settings
    if used:
        config["used"] = used
    write_run(out, summary, config, scenario.part_makers(model))  # a table at a time, the big ones in parts
    print(summary_text(summary))
    print(f"wrote {out}")
    unfinished = scenario.unfinished(model)
    if unfinished:
        print(f"vcloud: error: {unfinished} (the tables in {out} show how far it got)", file=sys.stderr)
        return EXIT_UNFINISHED
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from scenarios.inspect_run import RunError, trace_command

    a = args
    try:
        print(trace_command(a.run_dirs, a.plot, a.out, a.vms, a.t_from, a.t_to, a.metric, a.bin_s, a.vmax))
    except RunError as exc:
        raise BadInput(str(exc)) from None
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from scenarios.dask_client import DaskUnreachable
    from scenarios.reproduce import reproduce

    check_dir(args.out, empty=False)
    _check_processes(args.processes)
    try:
        print(f"wrote {reproduce(args.out, quick=args.quick, processes=args.processes, dask=args.dask)}")
    except DaskUnreachable as exc:
        raise BadInput(str(exc)) from None
    except KeyboardInterrupt:  # the entries measured so far are kept: say so, not "nothing was written"
        print(f"vcloud: interrupted (the entries measured so far are in {args.out / 'entries'}: the same command "
              "measures the rest)", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from scenarios.sweep import SweepError, run_sweep  # yaml and dask are imported only for a sweep

    check_dir(args.out, empty=False)  # an existing sweep directory is resumed
    _check_processes(args.processes)
    try:
        report = run_sweep(args.spec, args.out, processes=args.processes, dask=args.dask, frames=args.frames,
                           retry_errors=args.retry_errors, progress=not args.quiet)  # fmt: skip
    except SweepError as exc:
        raise BadInput(str(exc)) from None
    except KeyboardInterrupt:  # the runs finished so far are kept: say so, not "nothing was written"
        print(f"vcloud: interrupted (the runs finished so far are in {args.out / 'runs'}: the same command runs the "
              "rest)", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    print(report.describe())
    return 1 if report.failed else 0  # every run was tried; a script still learns that some failed


def cmd_dashboard(args: argparse.Namespace) -> int:
    from scenarios.dashboard.serve import dashboard_config, serve  # the viz stack loads only for the page
    from scenarios.inspect_run import RunError
    from scenarios.settings import parse_pairs

    model = SCENARIOS[args.scenario].Settings if args.run is None and args.scenario in SCENARIOS else None
    try:
        config = dashboard_config(args.scenario, parse_pairs(args.settings, model), args.seed, args.step_s, args.run)
    except (RunError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    return serve(config, args.port)


def _check_scenario(name: str) -> None:
    if name not in SCENARIOS:
        what = "no such file" if name.endswith(".py") else f"try: {', '.join(SCENARIOS)}, or a scenario file NAME.py"
        raise BadInput(f"unknown scenario {name!r} ({what})")


def _read_config(path: Path) -> tuple[str, int, dict[str, Any]]:
    """--config: the scenario, seed and asked settings (dotted keys) of an earlier run's config.json, each checked
    for its type; a config of before `asked` gives its full settings, every field then counts as asked."""
    from scenarios.settings import flatten

    try:
        config = json.loads(path.read_bytes().decode("utf-8"), parse_constant=_no_constant)
    except OSError as exc:
        raise BadInput(f"--config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BadInput(f"--config {path}: not a text file (byte {exc.start} is not UTF-8)") from None
    except ValueError as exc:
        raise BadInput(f"--config {path}: not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise BadInput(f"--config {path}: expected a JSON object with scenario, seed and settings, got {config!r:.40}")
    for key in ("scenario", "seed", "settings"):
        if key not in config:
            raise BadInput(f"--config {path}: missing field {key!r}")
    name, seed, settings = config["scenario"], config["seed"], config["settings"]
    if not isinstance(name, str):
        raise BadInput(f"--config {path}: scenario={name!r:.40} is not a scenario name")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**63 - 1:
        raise BadInput(f"--config {path}: seed={seed!r:.40} is not a whole number from 0 to 2**63 - 1")
    if not isinstance(settings, dict):
        raise BadInput(f"--config {path}: settings={settings!r:.40} is not an object of settings")
    asked = config.get("asked", flatten(settings))
    if not isinstance(asked, dict):
        raise BadInput(f"--config {path}: asked={asked!r:.40} is not an object of settings")
    return name, seed, asked


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


if __name__ == "__main__":
    sys.exit(main())
