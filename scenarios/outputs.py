"""Where commands write: output paths checked before any computing, directories written whole or not at all.

Every command that writes (`run`, `trace --plot`, `sweep`, `reproduce`) checks its `--out` first, so a bad path
costs no simulation: it must not be a file where a directory goes (or a directory where a file goes), every
existing ancestor must be a directory, and the nearest existing one writable. A run directory is written into a
hidden temporary sibling (`.NAME-PID-XXXX`) and renamed into place; one left by a killed run (its process gone)
is removed by the next run into the same place. A file that a rerun trusts (a sweep's run row, a report's
entry row) is written to a hidden temporary sibling (`.NAME.<random>.tmp`) and renamed over NAME: it is whole or
absent, never half-written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

# what `vcloud trace` draws from a run directory (here, not in inspect_run.py, so that the command line can offer
# them without importing pandas)
METRICS = ("steal", "iowait", "usr", "sys", "idle")
PLOT_KINDS = ("heatmap", "lines", "breakdown", "cdf", "tasks-per-node", "running", "persistence")


class OutputError(ValueError):
    """A bad output path: one line naming the flag and the path."""


def file_problem(path: str | Path) -> str | None:
    """Why `path` is no readable file ('no such file', 'File name too long', ...), or None: an input path checked
    at the edge, where `Path.is_file` would raise on a name longer than the system allows."""
    try:
        if not Path(path).is_file():
            return "not a file" if Path(path).exists() else "no such file"
        with open(path, "rb"):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def check_dir(out: Path, flag: str = "--out", empty: bool = True) -> None:
    """`out` can become a directory: absent, or (unless `empty`) an existing directory; its parents writable.
    With `empty` (a run directory, renamed into place when whole) it may not hold the current directory."""
    try:
        _check_dir(out, flag, empty)
    except OSError as exc:  # a name longer than the system allows, a loop of links
        raise OutputError(f"{flag} {shown_path(out)}: {exc.strerror or exc}") from None


def shown_path(path: Path | str) -> str:
    """A path as an error line shows it: an overlong one cut to its first 24 and last 36 characters (its name)."""
    text = str(path)
    return text if len(text) <= 80 else f"{text[:24]}... ({len(text)} characters) ...{text[-36:]}"


def _check_dir(out: Path, flag: str, empty: bool) -> None:
    if empty and Path.cwd().is_relative_to(out.resolve()):
        raise OutputError(f"{flag} {out}: holds the current directory (a run directory is "
                          "written beside it and renamed into place: name a new one)")  # fmt: skip
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise OutputError(f"{flag} {out}: exists and is not a directory")
        if empty and any(out.iterdir()):
            raise OutputError(f"{flag} {out}: directory exists and is not empty")
        _check_writable(out, flag)
        return
    _check_parents(out, flag)


def check_file(out: Path, flag: str = "--out") -> None:
    """`out` can be (re)written as a file: not a directory, its parents directories and writable."""
    try:
        _check_file(out, flag)
    except OSError as exc:
        raise OutputError(f"{flag} {shown_path(out)}: {exc.strerror or exc}") from None


def _check_file(out: Path, flag: str) -> None:
    if out.is_dir():
        raise OutputError(f"{flag} {out}: is a directory")
    if out.exists() and not os.access(out, os.W_OK):
        raise OutputError(f"{flag} {out}: not writable")
    _check_parents(out, flag)


def _check_parents(out: Path, flag: str) -> None:
    parent = out.absolute().parent
    while not parent.exists():
        if parent.is_symlink():  # a dangling link: mkdir would fail
            raise OutputError(f"{flag} {out}: {parent} is a broken link")
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{flag} {out}: {parent} is not a directory")
    _check_names(out, parent, flag)
    _check_writable(parent, flag, out)


def _check_names(out: Path, existing: Path, flag: str) -> None:
    """The names still to be made under `existing` fit the file system's limits (else `mkdir` fails half-way,
    after the parents before the long name were made)."""
    name_max = os.pathconf(existing, "PC_NAME_MAX")
    for part in out.absolute().relative_to(existing).parts:
        if len(os.fsencode(part)) > name_max:
            raise OutputError(f"{flag} {shown_path(out)}: a name of {len(part)} characters, more than this file "
                              f"system's {name_max}")  # fmt: skip
    if len(os.fsencode(out.absolute())) >= os.pathconf(existing, "PC_PATH_MAX"):
        raise OutputError(f"{flag} {shown_path(out)}: longer than this system's paths")


def _check_writable(directory: Path, flag: str, out: Path | None = None) -> None:
    """Make and remove an empty hidden directory there: the only test that holds for root and read-only or
    virtual file systems (`os.access` says yes to root everywhere)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".vcloud-probe-", dir=directory))
    except OSError as exc:
        where = f"{out}: {directory}" if out is not None and out != directory else f"{directory}"
        raise OutputError(f"{flag} {where} is not writable ({exc.strerror or exc})") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_dir(out: Path) -> Path:
    """A fresh hidden sibling of `out` to write into (mode as `mkdir` would give), after removing the ones
    killed runs left beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-{os.getpid()}-", dir=out.parent))
    tmp.chmod(0o777 & ~_umask())  # mkdtemp makes 0700: a run directory is as readable as any other
    return tmp


def clean_stale(out: Path) -> list[Path]:
    """Remove `.NAME-PID-*` siblings of `out` whose process no longer runs; returns what was removed."""
    removed = []
    for path in out.parent.glob(f".{out.name}-*-*"):
        pid = path.name[len(out.name) + 2 :].split("-", 1)[0]
        if path.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def commit_dir(tmp: Path, out: Path) -> None:
    """Put the finished `tmp` in place of `out` (absent or an empty directory) in one rename."""
    if out.exists():
        out.rmdir()
    tmp.rename(out)


def temp_name(path: Path) -> Path:
    """A fresh hidden sibling of `path` (`.NAME.<random>.tmp`): what a killed writer leaves, for its owner to
    remove (`clean_temp_files`)."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")


def atomic_write(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (temporary sibling, fsync, rename): a rerun may trust what it finds."""
    tmp = temp_name(path)
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def clean_temp_files(directory: Path) -> None:
    """Remove the `.NAME.<random>.tmp` files and directories a killed writer left in `directory`."""
    for path in directory.glob(".*.tmp") if directory.is_dir() else ():
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
