"""The layers point one way in what they say as well as in what they import: the cloud names no Hadoop concept."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HADOOP_WORDS = re.compile(r"tracker|heartbeat|shuffle|copier|speculat|\bjobs?\b|datanode|hdfs", re.IGNORECASE)
UPPER_PACKAGES = ("hadoop_layer", "policies", "scenarios")


def test_no_vcloud_module_names_a_hadoop_concept():
    """Identifiers, strings, docstrings and comments of vcloud/: the words of Hadoop's concepts appear nowhere."""
    found = []
    for path in sorted((ROOT / "vcloud").rglob("*.py")):
        for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if token.type in (tokenize.NAME, tokenize.STRING, tokenize.COMMENT) and HADOOP_WORDS.search(token.string):
                found.append(f"{path.relative_to(ROOT)}:{token.start[0]}: {HADOOP_WORDS.search(token.string)[0]}")
    assert not found, found


def test_no_lower_module_imports_an_upper_one():
    """vcloud imports none of the layers above; hadoop_layer imports neither policies nor scenarios."""
    lower = {"vcloud": UPPER_PACKAGES, "hadoop_layer": ("policies", "scenarios")}
    found = []
    for package, above in lower.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in above]
    assert not found, found
