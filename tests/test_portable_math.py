"""A seed gives the same numbers on every CPU (docs/model.md, "Same numbers on every machine").

NumPy's transcendental ufuncs take SIMD paths chosen by the CPU at run time (AVX-512 ones among them) whose last bits
differ from one CPU to another (numpy issue 23523): the model's numbers must not go through them. The C library's
functions (`math.exp`, `math.pow`, ...) give the same bits wherever the same library runs.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vcloud", "hadoop_layer", "policies", "scenarios")
DISPATCHED = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "power", "float_power", "cbrt", "sin", "cos",
              "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
              "hypot", "logaddexp")  # fmt: skip
CALL = re.compile(r"\bnp\.(" + "|".join(DISPATCHED) + r")\(")


def test_no_cpu_dependent_numpy_math_in_the_model():
    files = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))
    assert len(files) > 50  # the packages are where this test looks
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in files
             for n, line in enumerate(path.read_text().splitlines(), 1) if CALL.search(line)]  # fmt: skip
    assert not found, "NumPy's CPU-dependent math (use math.* per value): " + "; ".join(found)
