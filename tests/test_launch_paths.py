"""The fast forms of what a task attempt's launch and end do, against their plain forms on random inputs (issue 16):
rows written by scalar writes, frozen streams and phases set through their slots, the ledger's sums moved by name."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, dataclass, fields
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.ledger import RunningLedger
from vcloud.pagecache import FileTable, PageCache
from vcloud.tables import ItemTable
from vcloud.work import Device, Kind, Phase, Stream

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
sizes = st.floats(0.0, 1e6, allow_nan=False)


def _rows(table, n: int) -> list[np.ndarray]:
    return [getattr(table, name)[:n].copy() for name in (*table.SCHEMA, *table.WIDE)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30), sizes, sizes, st.integers(0, 3)), max_size=40))
def test_add_item_is_add(steps):
    """`add_item` leaves the table as `add` with the same values does, also in rows that removals left stale."""
    plain, fast = ItemTable(), ItemTable()
    for k, (remove, vm, mem, extra, width) in enumerate(steps):
        if remove and plain.n:
            assert plain.remove_rows([vm % plain.n]) == fast.remove_rows([vm % fast.n])
            continue
        values = {"vm": vm, "threads": 1.0 + width, "io_mbps_max": math.inf if width else extra, "mem_mb": mem,
                  "mem_active_mb": mem * 0.75}  # fmt: skip
        a = plain.add(k, **values)
        b = fast.add_item(k, *values.values())
        assert a == b and plain.layout == fast.layout and plain.owner == fast.owner
        for t in (plain, fast):  # the row's other columns dirtied, as the engine and `_load_phase` do
            t.widen(width + 1)
            t.usr_s[a], t.remaining[a], t.kind[a], t.tag[a] = extra, extra + 1, 3, k
            t.stream_vm[a, width], t.stream_hit[a, width], t.stream_write[a, width] = vm, 0.5, True
        for x, y in zip(_rows(plain, plain.n), _rows(fast, fast.n), strict=True):
            np.testing.assert_array_equal(x, y)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9), sizes, st.floats(0.0, 1.0), sizes), max_size=40))
def test_created_files_are_appended_rows(steps):
    """`PageCache.create` writes a new file's row as `FileTable.append` would, and a reused one alike."""
    cache, table = PageCache(), FileTable()
    live: list[int] = []
    for delete, vm, size, share, now in steps:
        if delete and live:
            f = live.pop(vm % len(live))
            cache.delete(f)
            table.size_mb[f] = table.cached_mb[f] = table.dirty_mb[f] = 0.0
            table.alive[f] = False
            continue
        f = cache.create(vm, size, size * share, now)
        live.append(f)
        if f == table.n:
            assert table.append(vm=vm, size_mb=size, cached_mb=size * share, last_access_s=now, alive=True) == f
        else:
            for name, v in zip(FileTable.SCHEMA, (vm, size, size * share, 0.0, 0.0, now, False, True), strict=True):
                getattr(table, name)[f] = v
        cache.files.dirty_mb[f] = table.dirty_mb[f] = share  # as writes would
    assert cache.files.n == table.n
    for x, y in zip(_rows(cache.files, table.n), _rows(table, table.n), strict=True):
        np.testing.assert_array_equal(x, y)


@dataclass(frozen=True, slots=True)
class PlainStream:
    """Stream as a dataclass's own `__init__` and `__post_init__` make it."""

    device: Device
    mb_per_unit: float = 1.0
    vm: int = -1
    write: bool = False
    file: int = -1

    def __post_init__(self) -> None:
        if not (self.mb_per_unit >= 0 and math.isfinite(self.mb_per_unit)):
            raise ValueError(f"stream mb_per_unit must be finite and >= 0, got {self.mb_per_unit}")


@dataclass(frozen=True, slots=True)
class PlainPhase:
    name: str
    kind: Kind
    amount: float
    sys_fraction: float = 0.0
    open: bool = False
    cpu_per_unit: float = 0.0
    streams: tuple = ()

    def __post_init__(self) -> None:
        if not (self.amount >= 0 and math.isfinite(self.amount)):
            raise ValueError(f"phase {self.name!r}: amount must be finite and >= 0, got {self.amount}")
        if not 0.0 <= self.sys_fraction <= 1.0:
            raise ValueError(f"phase {self.name!r}: sys_fraction must be in [0, 1], got {self.sys_fraction}")
        if self.kind == Kind.PIPE and not (self.cpu_per_unit > 0 or any(s.mb_per_unit > 0 for s in self.streams)):
            raise ValueError(f"phase {self.name!r}: a pipelined phase needs CPU or I/O per unit")
        if not (self.cpu_per_unit >= 0 and math.isfinite(self.cpu_per_unit)):
            raise ValueError(f"phase {self.name!r}: cpu_per_unit must be finite and >= 0, got {self.cpu_per_unit}")


def _made(cls, *args):
    try:
        return cls(*args)
    except ValueError as e:
        return str(e)


def _fields(x):
    return x if isinstance(x, str) else tuple(getattr(x, f) for f in x.__slots__)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(Device)), floats, st.integers(-1, 5), st.booleans(), st.integers(-1, 5))
def test_stream_is_the_dataclass(device, mb, vm, write, file):
    fast, plain = _made(Stream, device, mb, vm, write, file), _made(PlainStream, device, mb, vm, write, file)
    assert _fields(fast) == _fields(plain)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(Kind)), floats, floats, st.booleans(), floats, st.lists(floats, max_size=3))
def test_phase_is_the_dataclass(kind, amount, sys_fraction, open_, cpu, mbs):
    streams = tuple(Stream(Device.DISK, mb) if mb >= 0 and math.isfinite(mb) else Stream(Device.NIC) for mb in mbs)
    args = ("p", kind, amount, sys_fraction, open_, cpu, streams)
    fast, plain = _made(Phase, *args), _made(PlainPhase, *args)
    assert _fields(fast) == _fields(plain)
    if not isinstance(fast, str):
        assert fast == Phase(*args) and hash(fast) == hash(Phase(*args))
        with pytest.raises(FrozenInstanceError):
            fast.amount = 1.0  # type: ignore[misc]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 50)] * len(RunningLedger.FIELDS)), min_size=2, max_size=6))
def test_ledger_moves_each_sum(contributions):
    """`_move` adds new - old to each sum, as the loop over `FIELDS` does."""
    ledger, sums = RunningLedger(), dict.fromkeys(RunningLedger.FIELDS, 0)
    for old, new in pairwise(contributions):
        ledger._move(old, new)
        for name, before, after in zip(RunningLedger.FIELDS, old, new, strict=True):
            sums[name] += after - before
        assert {name: getattr(ledger, name) for name in RunningLedger.FIELDS} == sums


def _plain_merged(streams: tuple[Stream, ...]) -> tuple[Stream, ...]:
    """`Phase.pipe`'s merge as it was: a new stream for every key once any two merge."""
    merged: dict[tuple, float] = {}
    kept = []
    for s in streams:
        if s.mb_per_unit > 0:
            key = (s.device, s.vm, s.write, s.file)
            merged[key] = merged.get(key, 0.0) + s.mb_per_unit
            kept.append(s)
    if len(merged) < len(kept):
        return tuple(Stream(d, mb, vm, w, f) for (d, vm, w, f), mb in merged.items())
    return tuple(kept)


rates = st.sampled_from([0.0, 0.25, 1.0, 1.5, 2.0, 1e-17, 3.7])
small = st.integers(-1, 2)
devices = st.sampled_from(list(Device))
stream_lists = st.lists(st.builds(Stream, devices, rates, small, st.booleans(), small), max_size=8)


@settings(max_examples=300, deadline=None)
@given(stream_lists)
def test_merged_streams(streams):
    from vcloud.work import _merged

    fast, plain = _merged(tuple(streams)), _plain_merged(tuple(streams))
    assert [_fields(s) for s in fast] == [_fields(s) for s in plain]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=3, unique=True), st.booleans(), st.integers(1, 4), st.integers(-1, 9),
       st.lists(st.booleans(), min_size=3, max_size=3), st.booleans(),
       st.floats(0.0, 50.0) | st.sampled_from([0.0, -0.0, 1.0, 1 / 3, -1.0, math.nan]))  # fmt: skip
def test_write_streams_per_mb(vms, serving, replication, own_file, hops, with_files, per_mb):
    """Streams made `per_mb` at once are those made per MB and then scaled (and fail alike)."""
    from hadoop_layer.datanode import write_streams

    files = tuple(range(100, 100 + len(vms))) if with_files else ()
    args = (tuple(vms), serving, replication, own_file, files, tuple(hops[: len(vms)]) if vms else ())
    fast = _made(lambda: write_streams(*args, per_mb=per_mb))
    plain = _made(lambda: [s.scaled(per_mb) for s in write_streams(*args)])
    assert fast == plain if isinstance(fast, str) else [_fields(s) for s in fast] == [_fields(s) for s in plain]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.lists(st.integers(0, 11), max_size=3), st.data())
def test_locality_of_lists_is_locality(racks, replicas, data):
    """`locality_in` (plain lists, a loop) answers as `locality` (arrays) does."""
    from hadoop_layer.hdfs import locality, locality_in

    replicas = [r % len(racks) for r in replicas]
    node = data.draw(st.integers(0, len(racks) - 1))
    expected = locality(np.array(replicas, dtype=np.int64), node, np.array(racks, dtype=np.int64))
    assert locality_in(replicas, node, racks) == expected


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(-1, 1), st.sampled_from([0.0, 0.5, 1.0]), st.booleans()), max_size=5),
                min_size=1, max_size=8))  # fmt: skip
def test_phase_loads_reset_only_the_streams_they_leave(plans):
    """`_load_phase` as it was: the row's streams (VM, need, file) all reset when it had one, then the new ones
    written; now only the columns past the new ones that the former phase used are reset."""
    from tests.helpers import one_host
    from vcloud.agents import WorkItem
    from vcloud.work import disk, nic

    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=2048)
    f = model.cache.create(vm.row, 10.0, 5.0)
    phases = [Phase.pipe(f"p{i}", 5.0, 1.0, [disk(mb, v, w, f) if w or v else nic(mb or 1.0, v) for v, mb, w in p])
              for i, p in enumerate(plans)]  # fmt: skip
    item = WorkItem(model, phases)
    model.start_item(item, vm)
    items, row = model.items, item.row
    fills = {"stream_vm": -1, "stream_need": 0.0, "stream_file": -1}
    expect = {name: np.full(1, fill) for name, fill in fills.items()}
    for i, phase in enumerate(phases):
        if i:
            item.phase_index = i
            model._load_phase(item)
        streams = [s for s in phase.streams if s.mb_per_unit > 0]
        width = items.width
        if expect["stream_vm"][0] >= 0:  # the former algorithm: reset the row, then write the new streams
            expect = {name: np.full(width, fill) for name, fill in fills.items()}
        expect = {name: np.concatenate([a, np.full(width - len(a), fills[name])]) for name, a in expect.items()}
        for k, s in enumerate(streams):
            expect["stream_vm"][k] = vm.row if s.vm < 0 else s.vm
            expect["stream_need"][k], expect["stream_file"][k] = s.mb_per_unit, s.file
        for name, values in expect.items():
            np.testing.assert_array_equal(getattr(items, name)[row], values)


@dataclass(frozen=True, slots=True)
class PlainRoute:
    """plans.Route as a dataclass's own `__init__` makes it."""

    source_vm: int = -1
    pipeline_vms: tuple = ()
    serving: bool = True
    source_file: int = -1
    scratch_file: int = -1
    map_output_file: int = -1
    output_file: int = -1
    pipeline_files: tuple = ()
    source_cross_rack: bool = False
    pipeline_cross_rack: tuple = ()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 9), max_size=10))
def test_route_is_the_dataclass(values):
    """`Route`'s own `__init__` (its slots set one by one) makes the route the dataclass's would, by position and by
    name, the fields not given at their defaults; it stays frozen and hashes alike."""
    from hadoop_layer.plans import Route

    args = [(v,) if f.type == "tuple" else v for v, f in zip(values, fields(PlainRoute), strict=False)]
    named = {f.name: a for f, a in zip(fields(PlainRoute), args, strict=False)}
    fast = Route(*args)
    assert _fields(fast) == _fields(PlainRoute(*args)) == _fields(Route(**named)) == _fields(PlainRoute(**named))
    assert fast == Route(**named) and hash(fast) == hash(Route(**named))
    with pytest.raises(FrozenInstanceError):
        fast.source_vm = 3  # type: ignore[misc]


@settings(max_examples=150, deadline=None)
@given(st.floats(0.5, 512.0), st.floats(0.0, 1024.0), st.floats(0.0, 1e7), st.sampled_from([20.0, 100.0, 140.0]),
       st.sampled_from([-1, 3]), st.booleans())  # fmt: skip
def test_pipelined_map_plan_is_its_plain_form(input_mb, output_mb, records, io_sort_mb, source_vm, cross_rack):
    """A pipelined map's phases as they were made: its spill beside the map always given to `Phase.pipe`, which drops
    it when empty (a map that spills once); now it is not made then. Bit for bit, the same phases."""
    from types import SimpleNamespace

    from hadoop_layer.config import HadoopConfig
    from hadoop_layer.hdfs import Locality
    from hadoop_layer.jvms import jvm_start
    from hadoop_layer.plans import Route, map_plan, spill_of
    from vcloud.work import disk

    cfg = HadoopConfig()
    job = SimpleNamespace(profile=SimpleNamespace(combine_ratio=1.0))
    task = SimpleNamespace(input_mb=input_mb, cpu_mc=30.0 * input_mb, output_mb=output_mb, output_records=records,
                           job=job)  # fmt: skip
    route = Route(source_vm, (), True, 11, 12, 13, 14, (), cross_rack, ())
    phases, marks, spills, out_mb = map_plan(task, Locality.NODE, io_sort_mb, cfg, 2400.0, 2, route)  # type: ignore
    plan = spill_of(task, io_sort_mb, cfg)  # type: ignore[arg-type]
    overlapped = plan.spill_write_mb * (plan.spills - 1) / plan.spills if plan.spills > 1 else 0.0
    spill_file = 12 if plan.spills > 1 else 13
    plain = [
        *jvm_start(cfg, 2400.0),
        Phase.pipe(
            "map",
            input_mb,
            task.cpu_mc / input_mb,
            [*route.reads(), disk(overlapped / input_mb, write=True, file=spill_file)],
        ),
        Phase.pipe("spill", plan.spill_write_mb - overlapped, 0.0, [disk(write=True, file=spill_file)]),
    ]
    if plan.spills > 1:
        write_per_mb = plan.merge_write_mb / plan.merge_read_mb if plan.merge_read_mb > 0 else 0.0
        plain.append(Phase.pipe("merge", plan.merge_read_mb, cfg.merge_cpu_mc_per_mb,
                                [disk(file=12), disk(write_per_mb, write=True, file=13)]))  # fmt: skip
    kept = [p for p in plain if p.amount > 0]
    assert [_fields(p) for p in phases] == [_fields(p) for p in kept]
    assert [[_fields(s) for s in p.streams] for p in phases] == [[_fields(s) for s in p.streams] for p in kept]
    assert (spills, out_mb) == (plan.spills, plan.output_mb) and len(marks) == len(phases)
