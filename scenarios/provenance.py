"""Where an output came from: the package's version and the git commit of the source that ran, written into every
run's config.json and summary.json, a sweep's spec.json, and the schema metadata of every Parquet file."""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the source tree: scenarios/, vcloud/, ... and pyproject.toml


def package_version() -> str:
    try:
        return version("vcloud-hadoop")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


@functools.cache
def git_commit() -> str:
    """The commit of the source tree that runs, with `-dirty` if tracked files differ from it; "unknown" outside a
    checkout of this project (an installed wheel, no git): a git repository that merely holds the tree (a venv in
    someone's project) is not asked."""
    try:
        top = _git("rev-parse", "--show-toplevel")
        if top is None or Path(top).resolve() != ROOT:
            return "unknown"
        commit = _git("rev-parse", "HEAD")
        clean = _git("diff-index", "--quiet", "HEAD", "--")
    except OSError:  # no git
        return "unknown"
    return "unknown" if commit is None else commit + ("" if clean is not None else "-dirty")


def _git(*args: str) -> str | None:
    """git's output, or None when it fails (exit status not 0)."""
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def provenance() -> dict[str, str]:
    return {"vcloud_version": package_version(), "git_commit": git_commit()}
