"""`place_blocks`' compiled loop against the per-block loop it replaced: the same replicas and the same generator
state afterwards, on any rack layout, replication, writers and bit generator, rejected draws included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hadoop_layer.hdfs import BlockPlacement, _below, place_blocks, replayed

BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "MT19937-zeros")


def per_block(
    n_blocks: int, racks: np.ndarray, replication: int, rng: np.random.Generator, writers: np.ndarray | None = None
) -> np.ndarray:
    """The oracle: `place_blocks` as it was, one `BlockPlacement.replicas` (scalar draws) a block."""
    placement = BlockPlacement(np.asarray(racks, dtype=np.int64))
    nodes = placement.nodes
    copies = min(replication, nodes)
    out = np.empty((n_blocks, copies), dtype=np.int64)
    for b in range(n_blocks):
        first = int(rng.integers(nodes)) if writers is None else int(writers[b])
        out[b] = placement.replicas(first, copies, rng)
    return out


def generator(kind: str, seed: int, buffered: bool) -> np.random.Generator:
    """A seeded Generator over `kind`; "MT19937-zeros": one whose next 624 32-bit draws are often 0, which Lemire's
    method rejects for any range not a power of 2 (MT19937 tempers a 0 word into a 0 draw). `buffered`: half of a
    64-bit output is waiting (`has_uint32`)."""
    if kind == "MT19937-zeros":
        bits = np.random.MT19937(seed)
        state = bits.state
        key = state["state"]["key"].copy()
        key[np.random.default_rng(seed).random(key.size) < 0.5] = 0
        bits.state = {**state, "state": {"key": key, "pos": 0}}
    else:
        bits = getattr(np.random, kind)(seed)
    rng = np.random.Generator(bits)
    if buffered:
        rng.integers(7)
    return rng


def state_of(rng: np.random.Generator) -> object:
    """The bit generator's whole state, arrays as lists (MT19937's key), to compare with ==."""

    def plain(value: object) -> object:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value.tolist() if isinstance(value, np.ndarray) else value

    return plain(rng.bit_generator.state)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[np.ndarray, int, np.ndarray | None, int]:
    """Racks of 1-40 nodes (rack ids anything, in any order; racks of one node), replication 1-6, writers or not."""
    nodes = draw(st.integers(1, 40))
    ids = draw(st.lists(st.integers(-5, 10**6), min_size=1, max_size=6, unique=True))
    racks = np.asarray(draw(st.lists(st.sampled_from(ids), min_size=nodes, max_size=nodes)), dtype=np.int64)
    replication = draw(st.integers(1, 6))
    n_blocks = draw(st.integers(0, 60))
    writers = None
    if draw(st.booleans()):
        writers = np.asarray(draw(st.lists(st.integers(0, nodes - 1), min_size=n_blocks, max_size=n_blocks)))
    return racks, replication, writers, n_blocks


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.sampled_from(BIT_GENERATORS), st.integers(0, 2**63), st.booleans())
@example((np.array([0]), 3, None, 5), "PCG64", 1, False)  # one node: no draw at all
@example((np.array([4, 4]), 3, None, 9), "PCG64", 2, True)  # one rack of two: the second replica only
@example((np.array([0, 1, 1]), 3, None, 30), "MT19937-zeros", 3, False)  # a rack of one: the pool after it
@example((np.array([0, 0, 0, 0, 0]), 5, np.array([4, 0, 2]), 3), "PCG64", 4, True)  # one rack, beyond 3 copies
@example((np.array([2, 1, 1, 0, 2, 2, 1]), 6, None, 40), "MT19937-zeros", 5, True)
def test_place_blocks_is_the_per_block_loop(cluster, kind, seed, buffered):
    racks, replication, writers, n_blocks = cluster
    fast, slow = generator(kind, seed, buffered), generator(kind, seed, buffered)
    got = place_blocks(n_blocks, racks, replication, fast, writers)
    want = per_block(n_blocks, racks, replication, slow, writers)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    assert state_of(fast) == state_of(slow)
    assert fast.integers(1 << 40) == slow.integers(1 << 40)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(1, 2**32),
            st.sampled_from([1, 2, 3, 2**31 + 1, 3 * 2**30 + 1, 2**32 - 1, 2**32]),  # 1: no draw; ~1/2 rejected
        ),
        max_size=40,
    ),
    st.sampled_from(BIT_GENERATORS),
    st.integers(0, 2**63),
    st.booleans(),
    st.integers(0, 50),
)
def test_below_is_numpys_scalar_integers(highs, kind, seed, buffered, guess):
    """`_below` over the draws `replayed` gives (its first guess of their number too small or too large) is
    `rng.integers(high)` called once a value: same values, same state after, rejection-heavy ranges included."""

    def kernel(stream: np.ndarray) -> tuple[list[int], int]:
        values, pos = [], 0
        for high in highs:
            value, pos = _below(stream, pos, high)
            values.append(value)
        return values, (pos if pos <= stream.size else -1)

    fast, slow = generator(kind, seed, buffered), generator(kind, seed, buffered)
    assert replayed(fast, guess, kernel, most=16 * len(highs) + 4096) == [int(slow.integers(high)) for high in highs]
    assert state_of(fast) == state_of(slow)


def test_a_short_writer_list_or_a_writer_off_the_cluster_is_refused():
    racks = np.array([0, 0, 1, 1])
    rng = np.random.default_rng(0)
    for writers in (np.array([0, 1]), np.array([0, 1, 4]), np.array([-1, 0, 0])):
        with pytest.raises(ValueError, match="writers"):
            place_blocks(3, racks, 3, rng, writers)
