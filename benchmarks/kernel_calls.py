"""What a call into a compiled (numba) kernel costs at the boundary, apart from the kernel's own work.

    python benchmarks/kernel_calls.py [--calls 20000] [--repeats 7]

A tick calls ~30 kernels (`@kernel` functions) with ~20 arrays each and gets ~90-100 arrays back: the arguments are
type-checked and unboxed one by one, and each returned array is boxed into a new NumPy object (numba asks
`numba.core.serialize._numba_unpickle` for the array type each time). These toy kernels (3-element arrays, no work)
price each part; one line per case, the best of the repeats in microseconds a call. docs/performance.md, session 22,
has the figures and what they add up to a tick.
"""

from __future__ import annotations

import argparse
import timeit

import numba
import numpy as np


@numba.njit
def one_array(a):
    return 0


@numba.njit
def ten_arrays(a, b, c, d, e, f, g, h, i, j):
    return 0


@numba.njit
def twenty_arrays(a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, r, s, t, u):
    return 0


@numba.njit
def a_tuple(arrays):
    return 0


@numba.njit
def returns_five(a):
    return a[:3].copy(), a[:3].copy(), a[:3].copy(), a[:3].copy(), a[:3].copy()


@numba.njit
def makes_five(a):
    x1, x2, x3, x4, x5 = a[:3].copy(), a[:3].copy(), a[:3].copy(), a[:3].copy(), a[:3].copy()
    return x1[0] + x2[0] + x3[0] + x4[0] + x5[0]


@numba.njit
def writes_five(a, o1, o2, o3, o4, o5):
    o1[:] = a[:3]
    o2[:] = a[:3]
    o3[:] = a[:3]
    o4[:] = a[:3]
    o5[:] = a[:3]


@numba.njit
def returns_one_2d(a):
    out = np.empty((5, 3))
    for i in range(5):
        out[i] = a[:3]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    xs = [np.ones(10) for _ in range(20)]
    outs = [np.empty(3) for _ in range(5)]
    cases = {
        "1 array in": lambda: one_array(xs[0]),
        "10 arrays in": lambda: ten_arrays(*xs[:10]),
        "20 arrays in": lambda: twenty_arrays(*xs),
        "a tuple of 10 arrays in": lambda: a_tuple(tuple(xs[:10])),
        "5 new arrays returned": lambda: returns_five(xs[0]),
        "5 new arrays made, none returned": lambda: makes_five(xs[0]),
        "5 arrays written in place": lambda: writes_five(xs[0], *outs),
        "one 5 x 3 array returned": lambda: returns_one_2d(xs[0]),
        "... and its 5 rows taken": lambda: tuple(returns_one_2d(xs[0])),
    }
    for case in cases.values():  # compile first
        case()
    for name, case in cases.items():
        best = min(timeit.repeat(case, number=args.calls, repeat=args.repeats)) / args.calls * 1e6
        print(f"{name:<34} {best:6.2f} us")


if __name__ == "__main__":
    main()
