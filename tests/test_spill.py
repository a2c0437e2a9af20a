"""Map spill/merge and reduce shuffle/merge disk bytes: hand-worked Hadoop 1.2.1 cases and hypothesis invariants."""

import dataclasses
import heapq

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.spill import (
    MB,
    MapSpill,
    ReduceMerge,
    _merge,
    map_spill,
    map_spill_arrays,
    reduce_merge,
    sort_buffer_limits,
)

KB_RECORDS_PER_MB = 1024  # 1 KB records


def _io(m: MapSpill | ReduceMerge) -> float:
    return m.disk_write_mb + m.disk_read_mb


# --- buffer limits --------------------------------------------------------------------------------------------------


def test_default_buffer_limits_and_spill_boundaries():
    # maxMemUsage = 100 << 20 = 104,857,600; recordCapacity = int(104,857,600 * 0.05) = 5,242,880 (multiple of 16)
    # kvbuffer = 99,614,720; softBufferLimit = int(99,614,720 * 0.8) = 79,691,776 = 76 MiB
    # records = 5,242,880 / 16 = 327,680; softRecordLimit = int(327,680 * 0.8) = 262,144
    assert sort_buffer_limits() == (79_691_776, 262_144)
    assert map_spill(76.0, 0).spills == 1  # exactly the soft limit: ceil(1.0)
    assert map_spill(76.0 + 1 / MB, 0).spills == 2  # one byte more
    assert map_spill(0.0, 262_144).spills == 1
    assert map_spill(0.0, 262_145).spills == 2
    assert map_spill(0.0, 0.0) == MapSpill(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)


def test_buffer_limits_use_java_float_arithmetic():
    # io.sort.mb 400: 419,430,400 B; recordCapacity 20,971,520; kvbuffer 398,458,880 -> 318,767,104 (304 MiB);
    # 1,310,720 record slots -> 1,048,576
    assert sort_buffer_limits(400) == (318_767_104, 1_048_576)
    # io.sort.mb 140: kvbuffer 146,800,640 - 7,340,032 = 139,460,608; in doubles * 0.8 = 111,568,486.4, but Java
    # multiplies int * float in single precision (spacing 8 at this size): 111,568,488. Slots 458,752 -> 367,001.
    assert sort_buffer_limits(140) == (111_568_488, 367_001)
    for bad in ({"io_sort_mb": 0}, {"io_sort_mb": 2048}, {"io_sort_mb": 100.5}, {"spill_percent": 0.0}):
        with pytest.raises(ValueError):
            sort_buffer_limits(**{"io_sort_mb": 100, **bad})


# --- map side -------------------------------------------------------------------------------------------------------


def test_single_spill_is_renamed():
    # 50 MB = 52,428,800 B < 79,691,776 and 51,200 records < 262,144: one spill, renamed to file.out
    m = map_spill(50.0, 50 * KB_RECORDS_PER_MB)
    assert m == MapSpill(1, 50.0, 0.0, 0.0, 0.0, 50.0, 0)
    assert (m.disk_write_mb, m.disk_read_mb) == (50.0, 0.0)


def test_three_spills_merge_once_and_bigger_buffer_spills_less():
    # 200 MB = 209,715,200 B / 79,691,776 = 2.63 -> 3 spills (204,800 records < 262,144); 3 <= io.sort.factor 10:
    # one merge pass reads the 200 MB of spills and writes the 200 MB file.out.
    m = map_spill(200.0, 200 * KB_RECORDS_PER_MB)
    assert m == MapSpill(3, 200.0, 200.0, 200.0, 0.0, 200.0, 1)
    assert (m.disk_write_mb, m.disk_read_mb) == (400.0, 200.0)
    # io.sort.mb 400: softBufferLimit 318,767,104 B > 200 MB -> 1 spill: write 200, read 0
    big = map_spill(200.0, 200 * KB_RECORDS_PER_MB, io_sort_mb=400)
    assert big == MapSpill(1, 200.0, 0.0, 0.0, 0.0, 200.0, 0)
    assert _io(big) == 200.0 < _io(m) == 600.0


def test_small_records_hit_the_record_limit():
    # 60 MB of 100-byte records: 62,914,560 B -> bytes alone 0.79 -> 1 spill; 629,145.6 records / 262,144 = 2.4 -> 3
    m = map_spill(60.0, 60 * MB / 100)
    assert m.spills == 3
    assert (m.spill_write_mb, m.merge_read_mb, m.merge_write_mb, m.output_mb) == (60.0, 60.0, 60.0, 60.0)


def test_more_spills_than_sort_factor():
    # 1900 MB = 25 x 76 MiB -> exactly 25 spills of 76 MB (1,945,600 records -> 8 by records).
    # Merger, factor 10: first pass merges ((25-1) mod 9)+1 = 7 spills (532 MB) -> 19 segments;
    # pass 2 merges the 10 smallest (10 single spills, 760 MB) -> 10 segments (8 spills, 532, 760);
    # pass 3 (10 <= factor) streams all 1900 MB into file.out.
    # intermediate = 532 + 760 = 1292; read = 1900 + 1292 = 3192; write = 1900 + 1292 = 3192.
    m = map_spill(1900.0, 1900 * KB_RECORDS_PER_MB)
    assert m == MapSpill(25, 1900.0, 3192.0, 3192.0, 1292.0, 1900.0, 3)
    assert (m.disk_write_mb, m.disk_read_mb) == (5092.0, 3192.0)
    # Hadoop's code fallback io.sort.factor 100: one pass, no intermediate bytes
    assert map_spill(1900.0, 1900 * KB_RECORDS_PER_MB, sort_factor=100).intermediate_mb == 0.0
    # 28 spills: (27 mod 9) == 0 -> first pass takes 10 -> 19 -> 10 more -> 10 left: 20 of 28 spills rewritten
    m28 = map_spill(28 * 76.0, 0)
    assert (m28.spills, m28.intermediate_mb, m28.merge_passes) == (28, 20 * 76.0, 3)


def _heap_merge(sizes: list[float], factor: int) -> tuple[float, int]:
    """Merger passes one segment at a time: (intermediate bytes, passes), for checking the grouped `_merge`."""
    heap, passes, written = sorted(sizes), 1, 0.0
    mod = (len(heap) - 1) % (factor - 1)
    k = factor if len(heap) <= factor or mod == 0 else mod + 1
    while len(heap) > k:
        merged = sum(heapq.heappop(heap) for _ in range(k))
        heapq.heappush(heap, merged)
        written, passes, k = written + merged, passes + 1, factor
    return written, passes


def test_grouped_merge_matches_one_pass_at_a_time():
    rng = np.random.default_rng(3)
    for factor in (2, 3, 5, 10, 17):
        for n in range(2, 300):
            assert _merge([(1, n)], factor)[:2] == _heap_merge([1] * n, factor), (factor, n)
        sizes = list(rng.choice([5.0, 40.0, 64.0], 200)) + list(rng.uniform(0, 100, 100))
        got, passes, _, _ = _merge([(s, 1) for s in sizes], factor)
        want, want_passes = _heap_merge(sizes, factor)
        assert (got, passes) == (pytest.approx(want), want_passes)
    # 50 GB of 1-byte records with io.sort.mb 1 (softRecordLimit 2,620): ceil(52,428,800,000 / 2,620) = 20,010,993
    # spills, merged without stepping through the passes one by one; factor 2: n - 2 intermediate passes + the last
    m = map_spill(50_000.0, 50_000 * MB, io_sort_mb=1, sort_factor=2)
    assert (m.spills, m.merge_passes) == (20_010_993, 20_010_992)


def test_combiner():
    # 200 MB, combine_ratio 0.5: spills are triggered by the raw 200 MB (3 spills) and write 100 MB in all;
    # 3 >= min.num.spills.for.combine, so the merge combines again: max(100 * 0.5, 100 / 3) = 50 MB.
    m = map_spill(200.0, 200 * KB_RECORDS_PER_MB, combine_ratio=0.5)
    assert m == MapSpill(3, 100.0, 100.0, 50.0, 0.0, 50.0, 1)
    # min.num.spills.for.combine 4: no combine in the merge
    assert map_spill(200.0, 0, combine_ratio=0.5, min_spills_for_combine=4).output_mb == 100.0
    # floor: ratio 0.1 -> spills write 20 MB; 20 * 0.1 = 2 < one spill's share 20 / 3
    assert map_spill(200.0, 0, combine_ratio=0.1).output_mb == pytest.approx(20 / 3)
    # a single spill is renamed, never combined twice
    assert map_spill(50.0, 0, combine_ratio=0.5).output_mb == 25.0
    # Known non-monotonicity (as in Hadoop): io.sort.mb 140 gives 209,715,200 / 111,568,488 = 1.88 -> 2 spills, below
    # min.num.spills.for.combine: 100 + 100 written, 100 read = 300 > the 3-spill 150 + 100 = 250.
    two = map_spill(200.0, 0, combine_ratio=0.5, io_sort_mb=140)
    assert (two.spills, _io(two), _io(m)) == (2, 300.0, 250.0)
    with pytest.raises(ValueError):
        map_spill(10.0, 0, combine_ratio=1.5)
    with pytest.raises(ValueError):
        map_spill(-1.0, 0)
    with pytest.raises(ValueError):
        map_spill(10.0, 0, sort_factor=1)


def test_arrays_match_scalar_on_random_inputs():
    rng = np.random.default_rng(7)
    out = np.concatenate([[0.0, 76.0, 76.0 + 1 / MB], rng.lognormal(4.0, 1.5, 3000)])
    rec = np.concatenate([[0.0, 1.0, 0.0], out[3:] * MB / rng.uniform(10, 5000, 3000)])
    for kw in (
        {},
        {"io_sort_mb": 40, "sort_factor": 5, "combine_ratio": 0.3},
        {"io_sort_mb": 7, "spill_percent": 0.5, "record_percent": 0.2, "combine_ratio": 0.8},
    ):
        arrays = map_spill_arrays(out, rec, **kw)
        assert set(arrays) == {f.name for f in dataclasses.fields(MapSpill)} | {"disk_write_mb", "disk_read_mb"}
        for i in range(out.size):
            scalar = map_spill(float(out[i]), float(rec[i]), **kw)
            got = {k: v[i].item() for k, v in arrays.items()}
            want = dataclasses.asdict(scalar) | {
                "disk_write_mb": scalar.disk_write_mb,
                "disk_read_mb": scalar.disk_read_mb,
            }
            assert got == want, (i, kw)
    assert map_spill_arrays(np.zeros((2, 3)), np.zeros((2, 3)))["spills"].shape == (2, 3)


# --- reduce side ----------------------------------------------------------------------------------------------------


def test_reduce_small_segments_in_memory_merge():
    # heap 200: maxSize 140, single-segment limit 35, merge at 0.66 * 140 = 92.4 MB in RAM.
    # 5 MB segments: after 18 RAM holds 90 < 92.4; the 19th makes 95 -> in-memory merge writes a 95 MB file.
    # The last 11 (55 MB) stay in RAM; at the end 1 disk file < io.sort.factor, so they are written (55 MB) first.
    # Final merge: 2 files, one pass streaming 150 MB into reduce.  write 150, read 150.
    r = reduce_merge([5.0] * 30)
    assert r == ReduceMerge(150.0, 150.0, 0.0, 150.0, 150.0, 150.0, 0.0, 1, 0)
    assert (r.disk_write_mb, r.disk_read_mb) == (150.0, 150.0)


def test_reduce_large_segment_goes_straight_to_disk():
    # 50 MB >= 35 MB single limit: shuffled to disk. Then as above: 95 MB merge + 55 MB flush; final pass reads
    # 50 + 95 + 55 = 200.  write = 50 (shuffle) + 150 (merges), read 200.
    r = reduce_merge([50.0] + [5.0] * 30)
    assert r == ReduceMerge(200.0, 150.0, 50.0, 150.0, 200.0, 200.0, 0.0, 1, 0)
    assert (r.disk_write_mb, r.disk_read_mb) == (200.0, 200.0)
    # exactly the limit goes to disk too (canFitInMemory is a strict <)
    assert reduce_merge([35.0]).to_disk_mb == 35.0


def test_reduce_on_disk_merge_and_final_passes():
    # 25 x 40 MB, all to disk. At 19 files (2*10-1) LocalFSMerger merges the 10 smallest: 400 MB read + written,
    # 10 files left; 6 more arrive -> 16 files (15 x 40, 400). Final merge: first pass ((16-1) mod 9)+1 = 7 files
    # (280 MB) -> 10 files; last pass streams 8 x 40 + 280 + 400 = 1000.
    # write = 1000 (shuffle) + 400 + 280 = 1680; read = 400 + 280 + 1000 = 1680.
    r = reduce_merge([40.0] * 25)
    assert r == ReduceMerge(1000.0, 0.0, 1000.0, 680.0, 1680.0, 1000.0, 0.0, 0, 1)
    assert (r.disk_write_mb, r.disk_read_mb) == (1680.0, 1680.0)


def test_reduce_in_memory_segments_folded_into_first_pass():
    # 12 disk files (>= io.sort.factor) + 2 x 5 MB in RAM: RAM kept and folded into the first pass, which takes
    # both RAM segments + ((12-1) mod 9)+1 = 3 disk files: writes 130, reads 120 from disk -> 10 files;
    # last pass streams 9 x 40 + 130 = 490 from disk.
    r = reduce_merge([40.0] * 12 + [5.0] * 2)
    assert r == ReduceMerge(490.0, 10.0, 480.0, 130.0, 610.0, 490.0, 0.0, 0, 0)
    # exactly 10 disk files: a single pass takes the 10 files + 2 RAM segments straight into reduce, no write.
    r10 = reduce_merge([40.0] * 10 + [5.0] * 2)
    assert r10 == ReduceMerge(410.0, 10.0, 400.0, 0.0, 400.0, 400.0, 10.0, 0, 0)


def test_reduce_thresholds_and_stalls():
    # mapred.inmem.merge.threshold 4: merges at 4 and 8 segments (4 MB each), the last 2 MB flushed at the end;
    # 3 files, one pass.  write 10, read 10.
    r = reduce_merge([1.0] * 10, inmem_merge_threshold=4)
    assert (r.inmem_merges, r.merge_write_mb, r.merge_read_mb) == (2, 10.0, 10.0)
    # merge.percent 0.95 (133 MB): 4 x 30 = 120 in RAM, the 5th cannot be reserved (150 > 140), the stalled copier
    # forces a 120 MB merge; 30 flushed at the end.  write 150, read 150.
    r = reduce_merge([30.0] * 5, shuffle_merge_percent=0.95)
    assert (r.inmem_merges, r.merge_write_mb, r.merge_read_mb) == (1, 150.0, 150.0)
    # reduce.input.buffer.percent 0.1 keeps 20 MB (the 4 latest 5 MB outputs) in RAM; 30 MB is written first.
    r = reduce_merge([5.0] * 10, reduce_input_buffer_percent=0.1)
    assert (r.merge_write_mb, r.merge_read_mb, r.final_disk_mb, r.final_memory_mb) == (30.0, 30.0, 30.0, 20.0)
    # empty map outputs are discarded; nothing fetched, nothing moved
    assert reduce_merge([0.0, 0.0]) == ReduceMerge(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
    with pytest.raises(ValueError):
        reduce_merge([-1.0])


# --- properties -----------------------------------------------------------------------------------------------------

sizes = st.floats(0.0, 50_000.0, allow_nan=False)
record_bytes = st.floats(1.0, 100_000.0)
sort_mb = st.integers(1, 2047)
factors = st.integers(2, 100)


@settings(max_examples=300, deadline=None)
@given(sizes, sizes, record_bytes, sort_mb, factors)
def test_spills_monotone_in_output(a, b, rec_bytes, io_sort_mb, factor):
    small, large = sorted((a, b))
    kw = {"io_sort_mb": io_sort_mb, "sort_factor": factor}
    lo, hi = map_spill(small, small * MB / rec_bytes, **kw), map_spill(large, large * MB / rec_bytes, **kw)
    assert lo.spills <= hi.spills
    assert _io(lo) <= _io(hi)


@settings(max_examples=300, deadline=None)
@given(sizes, record_bytes, sort_mb, sort_mb, factors)
def test_bigger_sort_buffer_spills_less_and_moves_fewer_bytes(out, rec_bytes, mb_a, mb_b, factor):
    # without a combiner (with one, fewer spills can skip the merge-time combine: see test_combiner)
    lo_mb, hi_mb = sorted((mb_a, mb_b))
    small = map_spill(out, out * MB / rec_bytes, io_sort_mb=lo_mb, sort_factor=factor)
    big = map_spill(out, out * MB / rec_bytes, io_sort_mb=hi_mb, sort_factor=factor)
    assert big.spills <= small.spills
    assert _io(big) <= _io(small)


@settings(max_examples=300, deadline=None)
@given(sizes, record_bytes, sort_mb, factors, st.floats(0.01, 1.0), st.integers(1, 5))
def test_map_output_never_grows(out, rec_bytes, io_sort_mb, factor, ratio, min_combine):
    kw = {
        "io_sort_mb": io_sort_mb,
        "sort_factor": factor,
        "combine_ratio": ratio,
        "min_spills_for_combine": min_combine,
    }
    m = map_spill(out, out * MB / rec_bytes, **kw)
    assert m.output_mb <= out
    assert m.spill_write_mb <= out
    assert m.disk_write_mb >= m.spill_write_mb >= 0.0
    assert (m.merge_passes == 0) == (m.spills <= 1)
    assert m.intermediate_mb == 0.0 or m.spills > factor


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(0.0, 400.0, allow_nan=False), max_size=300),
    st.floats(50.0, 4000.0),
    st.floats(0.3, 0.99),
    st.integers(2, 50),
    st.integers(2, 2000),
    st.floats(0.0, 0.5),
)
def test_reduce_bytes_conserved(segments, heap, merge_pct, factor, threshold, rib):
    kw = {"shuffle_merge_percent": merge_pct, "sort_factor": factor, "inmem_merge_threshold": threshold}
    r = reduce_merge(segments, heap_mb=heap, reduce_input_buffer_percent=rib, **kw)
    total = sum(segments)
    assert r.shuffle_mb == pytest.approx(total)
    assert r.in_memory_mb + r.to_disk_mb == pytest.approx(total)
    # the last pass reads every shuffled byte exactly once, from disk or RAM
    assert r.final_disk_mb + r.final_memory_mb == pytest.approx(total)
    assert r.disk_write_mb >= r.to_disk_mb >= 0.0
    assert r.disk_read_mb >= r.final_disk_mb - 1e-9 * max(total, 1.0)
    assert r.final_memory_mb <= r.in_memory_mb * (1 + 1e-9)
