"""A trace job's map specs as columns (`trace_maps`, `MapColumns`) against the per-map dicts they replaced: the same
splits, bit for bit, on random trace jobs in both replay modes; and the locality caches `Job.make_tasks` fills from
them against the per-element loop they replaced."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.config import HadoopConfig
from hadoop_layer.jvms import start_s as jvm_start_s
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import MapSplits
from hadoop_layer.traces import TraceJob, median_or
from scenarios.trace_replay import _split_host, trace_maps
from tests.helpers import small_cluster, uniform_maps

NODES = {"h0": 0, "h1": 1, "h2": 2}


def per_map(job: TraceJob, s, mode: str, cfg: HadoopConfig, nodes: dict[str, int]) -> list[dict]:
    """The oracle: add_trace_job's map specs as they were, one dict a map."""
    base, core = PUMA[s.profile], s.core_mhz
    inputs = list(job.map_input_mb)
    total = sum(inputs)
    share = job.output_mb if job.reduces == 0 else job.shuffle_mb
    outs = [share * (x / total) if total > 0 else 0.0 for x in inputs]
    cpus = list(job.map_cpu_s or [None] * len(inputs))
    typical = median_or(list(job.map_durations_s or []), 10.0)
    maps = []
    for i, (x, o) in enumerate(zip(inputs, outs, strict=True)):
        if mode == "durations":
            cpu_mc = 0.0
            if not s.replay_io:
                x = o = 0.0
        else:
            cpu_mc = cpus[i] * core if cpus[i] is not None else x * base.map_cpu_mc_per_mb
        maps.append(
            {"input_mb": x, "cpu_mc": cpu_mc, "output_mb": o, "output_records": o * 2**20 / base.map_record_bytes}
        )
    mean_in = total / len(inputs) if inputs else 0.0
    for _ in job.unfinished_maps:
        cpu_s = max(typical - jvm_start_s(cfg), 0.0) if mode == "durations" else mean_in * base.map_cpu_mc_per_mb / core
        maps.append({"input_mb": 0.0, "cpu_mc": cpu_s * core, "output_mb": 0.0, "output_records": 0.0})
    for i, locs in enumerate(job.map_replicas or ()):
        known = sorted({nodes[h] for h in (_split_host(r)[1] for r in locs) if h in nodes})
        if known:
            maps[i]["replicas"] = np.array(known, dtype=np.int64)
    return maps


sizes = st.floats(0.0, 1e6, allow_nan=False) | st.sampled_from([0.0, 5e-324, 64.0, 1 / 3])


@st.composite
def trace_jobs(draw: st.DrawFn) -> TraceJob:
    """Random SWIM- or Rumen-like jobs: split sizes (zeros and subnormals too), map-only or not, CPU counters with
    gaps, durations, tasks that never succeeded, recorded split hosts in and out of the cluster."""
    inputs = tuple(draw(st.lists(sizes, max_size=30)))
    n = len(inputs)
    cpu = draw(st.none() | st.lists(st.none() | st.floats(0, 1e4), min_size=n, max_size=n).map(tuple))
    durations = draw(st.none() | st.lists(st.floats(0, 1e4), min_size=n, max_size=n).map(tuple))
    hosts = st.lists(st.sampled_from(["/r1/h0", "/r1/h1", "/r2/h2", "/r9/gone"]), max_size=3).map(tuple)
    replicas = draw(st.none() | st.lists(hosts, max_size=n).map(tuple))
    unfinished = tuple(() for _ in range(draw(st.integers(0, 3))))
    return TraceJob(
        "j", 0.0, sum(inputs), draw(sizes), draw(sizes), n, draw(st.integers(0, 3)), inputs,
        map_durations_s=durations, map_cpu_s=cpu, map_replicas=replicas, unfinished_maps=unfinished,
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    trace_jobs(),
    st.sampled_from(["physics", "durations"]),
    st.booleans(),
    st.sampled_from(["grep", "tera-sort", "wordcount"]),
)
def test_trace_maps_are_the_per_map_specs(job, mode, replay_io, profile):
    s = SimpleNamespace(profile=profile, core_mhz=2400.0, replay_io=replay_io)
    cfg = HadoopConfig()
    placed = np.zeros((len(job.map_input_mb) + len(job.unfinished_maps), 1), dtype=np.int64)
    got = MapSplits.of(trace_maps(job, s, mode, cfg, NODES), placed)
    want = MapSplits.of(per_map(job, s, mode, cfg, NODES), placed)
    for field in MapSplits.FIELDS:
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), field  # bits: -0.0 and 0.0 told apart
    assert got.own_replicas.keys() == want.own_replicas.keys()
    assert all(np.array_equal(got.own_replicas[i], want.own_replicas[i]) for i in want.own_replicas)


def caches_of(job) -> tuple[dict, dict, list]:
    """The oracle: Job.make_tasks' locality caches as they were filled, NumPy element by element."""
    node_cache, rack_cache = {}, {}
    racks = job.model.node_racks
    for task in reversed(job.maps):
        for node in task.replicas:
            node_cache.setdefault(int(node), []).append(task)
        for rack in {int(racks[n]) for n in task.replicas}:
            rack_cache.setdefault(rack, []).append(task)
    return node_cache, rack_cache, list(reversed(job.maps))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 4), st.integers(1, 4), st.integers(0, 40), st.data())
def test_make_tasks_fills_the_caches_as_the_per_element_loop(slaves, racks, replication, n_maps, data):
    """Placed replicas (any replication, racks of one node) and a trace's own ones (lists and arrays) alike."""
    model = small_cluster(slaves=slaves, racks=racks, replication=replication)
    maps = uniform_maps(n_maps)
    for m in maps:
        if data.draw(st.booleans()):
            own = data.draw(st.lists(st.integers(0, slaves - 1), min_size=1, max_size=3, unique=True))
            m["replicas"] = np.array(own, dtype=np.int64) if data.draw(st.booleans()) else own
    job = model.add_job("j", PUMA["grep"], 0.0, maps, 1)
    job.make_tasks()
    node_cache, rack_cache, anywhere = caches_of(job)
    assert {k: v for k, v in job._node_cache.items() if v} == node_cache
    assert {k: v for k, v in job._rack_cache.items() if v} == rack_cache
    assert job._any == anywhere
    assert all(type(k) is int for k in [*job._node_cache, *job._rack_cache])
