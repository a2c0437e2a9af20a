"""Local-disk bytes of one Hadoop 1.x map or reduce attempt: map-side spills and merge, reduce-side shuffle merges.

Pure functions of the job's buffer settings (docs: /work/shared/reference/algorithms.md §2.1-2.3, Hadoop 1.2.1
`MapTask.MapOutputBuffer`, `Merger`, `ReduceTask.ReduceCopier`). Sizes are MB of 2**20 bytes. Simplifications:

* Map spills: count from the closed formula of §2.2 (a spill whenever the bytes or records collected since the last
  one pass the soft limits); all spills are taken to be the same size. The spill *trigger* sees pre-combiner data;
  what each spill *writes* is `combine_ratio` times it.
* Combiner in the final map merge (only when spills >= min.num.spills.for.combine): applied once more, so the
  merged file is `spill_write * combine_ratio`, but never smaller than one spill's combined size
  (`spill_write / spills`: every spill holding the same keys). Intermediate merge passes never combine (as in Hadoop).
* Reduce: fetches are taken one at a time in the given order and the background merge threads act at once (a fetch
  that cannot reserve RAM first forces the in-memory merge that stalled copiers would trigger); limits are exact MB
  products (no Java int truncation); 0-byte map outputs are discarded (as `copyOutput` does); no reduce-side
  combiner. The final merge keeps Hadoop's rule: RAM segments are written to disk first only while there are fewer
  than io.sort.factor files, else they join the first on-disk merge pass.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MB = float(2**20)
RECSIZE = 16  # MapOutputBuffer accounting bytes per record (kvoffsets int + kvindices 3 ints)


@lru_cache(maxsize=256)
def sort_buffer_limits(
    io_sort_mb: int = 100, spill_percent: float = 0.80, record_percent: float = 0.05
) -> tuple[int, int]:
    """(softBufferLimit bytes, softRecordLimit records) of `MapOutputBuffer` (§2.2), in Java's float arithmetic.
    Cached: every map launch asks, with the few slot settings there are."""
    if int(io_sort_mb) != io_sort_mb or not 1 <= io_sort_mb <= 2047:  # Hadoop: (sortmb & 0x7FF) != sortmb
        raise ValueError(f"io_sort_mb={io_sort_mb!r} must be a whole number in 1..2047")
    if not (0.0 < spill_percent <= 1.0 and 0.01 <= record_percent <= 1.0):  # MapOutputBuffer's own checks
        raise ValueError(f"spill_percent={spill_percent!r} / record_percent={record_percent!r} out of range")
    max_mem = int(io_sort_mb) << 20
    record_capacity = int(np.float32(max_mem) * np.float32(record_percent))  # int * float is a float product in Java
    record_capacity -= record_capacity % RECSIZE
    kvbuffer = max_mem - record_capacity
    soft_buffer = int(np.float32(kvbuffer) * np.float32(spill_percent))
    soft_records = int(np.float32(record_capacity // RECSIZE) * np.float32(spill_percent))
    if soft_buffer < 1 or soft_records < 1:
        raise ValueError(f"record_percent={record_percent!r} leaves no room for data or records")
    return soft_buffer, soft_records


def _merge(
    disk: Sequence[tuple[float, int]], factor: int, mem_mb: float = 0.0, n_mem: int = 0
) -> tuple[float, int, float, float]:
    """`Merger.MergeQueue.merge` passes (§2.2): smallest segments first; in-memory ones join only the first pass.

    `disk` holds (size, count) groups, so runs of passes over equal sizes go at once (2e7 equal spills are fast).
    Returns (bytes written by intermediate passes, passes, last-pass bytes from disk, last-pass bytes from memory).
    """
    heap = [g for g in disk if g[1] > 0]
    heapq.heapify(heap)
    n_disk = sum(count for _, count in heap)
    n = n_disk + n_mem
    mod = (n_disk - 1) % (factor - 1)  # getPassFactor: the first pass leaves (n - 1) divisible by (factor - 1)
    k = factor if n_disk <= factor or mod == 0 else mod + 1  # disk segments taken by this pass
    written, passes = 0, int(n > 0)
    while n > k + n_mem:
        size, count = heapq.heappop(heap)
        if count >= k:  # q whole passes over this size, stopping once `factor` or fewer segments would remain
            q = 1 if passes == 1 else min(count // k, -(-(n - factor) // (factor - 1)))
            merged = size * k
            if count > q * k:
                heapq.heappush(heap, (size, count - q * k))
        else:  # one pass over mixed sizes
            q, take, merged = 1, k - count, size * count
            while take:
                size, count = heapq.heappop(heap)
                used = min(count, take)
                merged, take = merged + size * used, take - used
                if count > used:
                    heapq.heappush(heap, (size, count - used))
        heapq.heappush(heap, (merged + mem_mb, q))
        written += q * (merged + mem_mb)
        n, passes, k, n_mem, mem_mb = n - q * (k + n_mem - 1), passes + q, factor, 0, 0.0
    return written, passes, sum(size * count for size, count in heap), mem_mb


@lru_cache(maxsize=4096)
def _equal_merge_units(spills: int, factor: int) -> tuple[int, int]:
    """(spill-sized units rewritten by intermediate passes, passes) for `spills` equal segments."""
    written, passes, _, _ = _merge([(1, spills)], factor)
    return int(written), passes


@dataclass(frozen=True)
class MapSpill:
    """Local-disk traffic of one map attempt (`MapOutputBuffer.sortAndSpill` + `mergeParts`, §2.2)."""

    spills: int
    spill_write_mb: float  # all spill files
    merge_read_mb: float  # spills + intermediate files read back by mergeParts
    merge_write_mb: float  # final merged file + intermediate files; 0 for one spill (renamed to file.out)
    intermediate_mb: float  # bytes of intermediate merge passes (spills > io.sort.factor)
    output_mb: float  # file.out, what reducers fetch
    merge_passes: int  # Merger passes, the last one writing file.out; 0 without a merge

    @property
    def disk_write_mb(self) -> float:
        return self.spill_write_mb + self.merge_write_mb

    @property
    def disk_read_mb(self) -> float:
        return self.merge_read_mb


def _factor(sort_factor: int, combine_ratio: float = 1.0) -> int:
    if int(sort_factor) != sort_factor or sort_factor < 2 or not 0.0 < combine_ratio <= 1.0:
        raise ValueError(
            f"sort_factor={sort_factor!r} must be whole and >= 2, combine_ratio={combine_ratio!r} in (0, 1]"
        )
    return int(sort_factor)


def map_spill(
    output_mb: float,
    output_records: float,
    *,
    io_sort_mb: int = 100,
    spill_percent: float = 0.80,
    record_percent: float = 0.05,
    sort_factor: int = 10,
    combine_ratio: float = 1.0,
    min_spills_for_combine: int = 3,
) -> MapSpill:
    """Spills and merge I/O of a map emitting `output_mb` (serialized, pre-combiner) in `output_records` (§2.2)."""
    factor = _factor(sort_factor, combine_ratio)
    soft_buffer, soft_records = sort_buffer_limits(io_sort_mb, spill_percent, record_percent)
    if not (output_mb >= 0.0 and output_records >= 0.0 and math.isfinite(output_mb + output_records)):
        raise ValueError(f"output_mb={output_mb!r}, output_records={output_records!r} must be finite and >= 0")
    spills = max(math.ceil(output_mb * MB / soft_buffer), math.ceil(output_records / soft_records))
    written = output_mb * combine_ratio
    if spills <= 1:
        return MapSpill(spills, written, 0.0, 0.0, 0.0, written, 0)
    out = max(written * combine_ratio, written / spills) if spills >= min_spills_for_combine else written
    units, passes = _equal_merge_units(spills, factor)
    inter = written * units / spills
    return MapSpill(spills, written, written + inter, out + inter, inter, out, passes)


def map_spill_arrays(
    output_mb: np.ndarray,
    output_records: np.ndarray,
    *,
    io_sort_mb: int = 100,
    spill_percent: float = 0.80,
    record_percent: float = 0.05,
    sort_factor: int = 10,
    combine_ratio: float = 1.0,
    min_spills_for_combine: int = 3,
) -> dict[str, np.ndarray]:
    """`map_spill` over arrays of maps; keys are the `MapSpill` fields plus `disk_write_mb`, `disk_read_mb`."""
    factor = _factor(sort_factor, combine_ratio)
    soft_buffer, soft_records = sort_buffer_limits(io_sort_mb, spill_percent, record_percent)
    out_mb, records = np.broadcast_arrays(np.asarray(output_mb, float), np.asarray(output_records, float))
    if not (np.all(out_mb >= 0.0) and np.all(records >= 0.0) and np.all(np.isfinite(out_mb + records))):
        raise ValueError("output_mb and output_records must be finite and >= 0")
    spills = np.maximum(np.ceil(out_mb * MB / soft_buffer), np.ceil(records / soft_records)).astype(np.int64)
    written = out_mb * combine_ratio
    uniq, inverse = np.unique(spills, return_inverse=True)
    table = np.array([_equal_merge_units(int(s), factor) if s > 1 else (0, 0) for s in uniq], np.int64)
    units, passes = table[inverse, 0].reshape(spills.shape), table[inverse, 1].reshape(spills.shape)
    merging = spills > 1
    safe = np.maximum(spills, 1)
    combined = np.maximum(written * combine_ratio, written / safe)
    out = np.where(merging & (spills >= min_spills_for_combine), combined, written)
    inter = np.where(merging, written * units / safe, 0.0)
    merge_read = np.where(merging, written + inter, 0.0)
    merge_write = np.where(merging, out + inter, 0.0)
    return {
        "spills": spills,
        "spill_write_mb": written,
        "merge_read_mb": merge_read,
        "merge_write_mb": merge_write,
        "intermediate_mb": inter,
        "output_mb": out,
        "merge_passes": passes,
        "disk_write_mb": written + merge_write,
        "disk_read_mb": merge_read,
    }


@dataclass(frozen=True)
class ReduceMerge:
    """Local-disk traffic of one reduce attempt's shuffle and sort phases (`ReduceTask.ReduceCopier`, §2.3)."""

    shuffle_mb: float  # bytes fetched
    in_memory_mb: float  # fetched into the shuffle RAM buffer
    to_disk_mb: float  # fetched straight to disk (>= the single-segment limit)
    merge_write_mb: float  # in-memory merges, on-disk merges, RAM flushed before the final merge, intermediate passes
    merge_read_mb: float  # disk bytes read by on-disk merges, intermediate passes and the last pass
    final_disk_mb: float  # bytes the last pass streams into reduce from disk
    final_memory_mb: float  # ... and from RAM (final_disk_mb + final_memory_mb == shuffle_mb)
    inmem_merges: int
    disk_merges: int  # LocalFSMerger merges during the shuffle

    @property
    def disk_write_mb(self) -> float:
        return self.to_disk_mb + self.merge_write_mb

    @property
    def disk_read_mb(self) -> float:
        return self.merge_read_mb


def reduce_merge(
    segments_mb: Sequence[float],
    *,
    heap_mb: float = 200,
    shuffle_input_buffer_percent: float = 0.70,
    shuffle_merge_percent: float = 0.66,
    inmem_merge_threshold: int = 1000,
    sort_factor: int = 10,
    reduce_input_buffer_percent: float = 0.0,
) -> ReduceMerge:
    """Shuffle + merge of one reduce's map-output segments, in fetch order (`ShuffleRamManager`, `LocalFSMerger`,
    `InMemFSMergeThread`, `createKVIterator`; §2.3)."""
    factor = _factor(sort_factor)
    if not (heap_mb > 0 and 0.0 <= shuffle_input_buffer_percent <= 1.0 and 0.0 <= reduce_input_buffer_percent <= 1.0):
        raise ValueError("heap_mb must be > 0 and the buffer percents in [0, 1]")
    segs = [float(s) for s in segments_mb]
    if not all(s >= 0.0 and math.isfinite(s) for s in segs):
        raise ValueError("segments_mb must be finite and >= 0")
    max_size = heap_mb * shuffle_input_buffer_percent
    single_limit = 0.25 * max_size  # MAX_SINGLE_SHUFFLE_SEGMENT_FRACTION
    memory: list[float] = []  # in-memory map outputs, fetch order
    disk: list[float] = []  # mapOutputFilesOnDisk
    used = write = read = in_mem = to_disk = 0.0
    inmem_merges = disk_merges = 0

    n_mem = 0  # len(memory), kept by hand: this loop runs once per map output of every reduce
    disk_limit = 2 * factor - 1
    for seg in segs:
        if seg == 0.0:
            continue
        if seg < single_limit:
            if n_mem and used + seg > max_size:  # reserve() blocks; stalled copiers force a merge
                disk.append(used)  # InMemFSMergeThread.doInMemMerge: all RAM segments -> one file
                memory.clear()
                used, write, inmem_merges, n_mem = 0.0, write + used, inmem_merges + 1, 0
            memory.append(seg)
            used += seg
            in_mem += seg
            n_mem += 1
            if (n_mem >= 2 and used / max_size >= shuffle_merge_percent) or n_mem >= inmem_merge_threshold:
                disk.append(used)
                memory.clear()
                used, write, inmem_merges, n_mem = 0.0, write + used, inmem_merges + 1, 0
            elif len(disk) < disk_limit:
                continue
        else:
            disk.append(seg)
            to_disk += seg
        while len(disk) >= disk_limit:  # LocalFSMerger: io.sort.factor smallest files -> one
            disk.sort()
            merged = sum(disk[:factor])
            disk[:factor] = [merged]
            write, read, disk_merges = write + merged, read + merged, disk_merges + 1
    # createKVIterator: keep the latest fetches up to reduce.input.buffer.percent of the heap in RAM, vacate the rest.
    kept_mb, n_kept = 0.0, 0
    while n_kept < len(memory) and kept_mb + memory[-1 - n_kept] <= heap_mb * reduce_input_buffer_percent:
        kept_mb += memory[-1 - n_kept]
        n_kept += 1
    vacate = memory[: len(memory) - n_kept]
    if vacate and factor > len(disk):  # written to disk first
        disk.append(sum(vacate))
        write += disk[-1]
        vacate = []
    inter_write, _, last_disk, last_mem = _merge([(d, 1) for d in disk], factor, sum(vacate), len(vacate))
    inter_read = inter_write - (sum(vacate) - last_mem)  # RAM segments folded into the first pass are not read
    return ReduceMerge(shuffle_mb=in_mem + to_disk, in_memory_mb=in_mem, to_disk_mb=to_disk,
                       merge_write_mb=write + inter_write, merge_read_mb=read + inter_read + last_disk,
                       final_disk_mb=last_disk, final_memory_mb=last_mem + kept_mb,
                       inmem_merges=inmem_merges, disk_merges=disk_merges)  # fmt: skip
