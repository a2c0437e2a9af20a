"""The suite's own house rule: no test module imports another (shared helpers live in conftest.py or in a module
made for them: tests/helpers.py, tests/runs.py, tests/fakes.py, tests/scenarios_random.py), so each test file runs
alone and a helper has one home."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_test_module_imports_another():
    found = {
        (path.name, name)
        for path in sorted(TESTS.glob("*.py"))
        for name in imported_modules(path)
        if name.split(".")[-1].startswith("test_") and name.split(".")[-1] != path.stem
    }
    assert found == set()
