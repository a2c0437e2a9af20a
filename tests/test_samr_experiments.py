"""`samr-heterogeneous` (SAMR Fig. 9): direction of the policies on slow and fast nodes, the stage weights SAMR learns
per node, and the backup cap BP found decisive by the parameter sweep (docs/results-samr.md). Small inputs, seeds
1-2."""

from __future__ import annotations

import pytest

from scenarios.registry import SCENARIOS
from scenarios.samr_experiments import POLICIES, SamrHeterogeneous, compare
from scenarios.settings import validate

CAPS = {"samr.backup_pro": 0.3, "late.speculative_cap": 0.3}


@pytest.fixture(scope="module")
def wordcount():
    return compare(seeds=(1, 2), benchmark="wordcount", input_gb=6.0, **CAPS)


def test_registered_and_the_slow_nodes_are_slow():
    assert isinstance(SCENARIOS["samr-heterogeneous"], SamrHeterogeneous)
    scenario = SamrHeterogeneous()
    model = scenario.build(validate(scenario.Settings, {"slow_nodes": 3, "slow_disk_mbps": 15.0}), seed=1)
    model.start()
    cpu = [t.vm.cpu_entitlement_mhz for t in model.trackers]
    disk = [t.vm.host.disk_mbps for t in model.trackers]
    assert cpu[:3] == pytest.approx([0.35 * 4800] * 3) and cpu[3:] == pytest.approx([4800] * 9)
    assert disk[:3] == [15.0] * 3 and disk[3:] == [100.0] * 9  # one stream's rate (docs/model.md, seeks)


def test_late_and_samr_are_not_worse_than_hadoop_on_wordcount(wordcount):
    mean = wordcount.groupby("policy").job_s.mean()
    assert set(mean.index) == set(POLICIES)
    for policy in ("late", "late-history", "samr"):
        assert mean[policy] <= mean["hadoop"] * 1.01, mean.to_dict()
    assert (wordcount.useful_backups <= wordcount.backups).all()


def test_samr_learns_a_heavier_map_stage_on_slow_nodes(wordcount):
    """The slow nodes' CPU is 35 % of a fast node's, their disks a third: the map function (M1) takes a larger share
    of a map's time there than spilling and merging (M2) do."""
    learned = wordcount[wordcount.policy.isin(["samr", "late-history"])]
    assert (learned.m1_slow > learned.m1_fast + 0.02).all(), learned[["m1_slow", "m1_fast"]]
    assert wordcount[wordcount.policy == "hadoop"].m1_slow.isna().all()  # no history without SAMR's weights


SEQUENTIAL = {"hadoop.pipelined_tasks": False, "hadoop.datanode_serving": False, "page_cache": {"enabled": False}}


def test_on_sort_the_backup_cap_decides():
    """With sequential task phases, no DataNode serving and no page cache (the model before issue 11).
    Sort's stragglers are the slow nodes' reduces, backed up only after the maps. Eq. 15's cap (BP = 0.1 of the
    job's 192 + 22 tasks: 22 backups) lets SAMR back them up at once; capped like LATE at 10 % of the slots (2 of 24
    reduce slots) it backs up too few and the job ends later on every seed (seeds 1-4: 282/293/274/275 s against
    284/300/298/284 s, 3.6 % on the mean; before the copiers waited for the reduce's JVM, session 9,
    243/276/273/246 s against 281/299/297/282 s: which slow reduces are backed up where moves with a second)."""
    seeds = (1, 2, 3, 4)
    eq15 = compare(seeds=seeds, policies=("samr",), input_gb=12.0, **SEQUENTIAL)
    slots = compare(seeds=seeds, policies=("samr",), input_gb=12.0, **{"samr.backup_base": "slots"}, **SEQUENTIAL)
    assert eq15.backups.sum() > slots.backups.sum()
    assert (eq15.job_s.to_numpy() <= slots.job_s.to_numpy()).all()
    assert eq15.job_s.mean() < 0.97 * slots.job_s.mean()


@pytest.mark.xfail(
    strict=True,
    reason="with DataNode serving (issue 11) every reduce writes Sort's 3-replica output down a pipeline through "
    "other nodes' disks, the slow nodes' among them: all reduces end together (seeds 1-2: 310/361 s) and SAMR "
    "backs none up under either cap (docs/results-samr.md)",
)
def test_on_sort_the_backup_cap_decides_with_the_hdfs_pipeline():
    eq15 = compare(seeds=(1, 2), policies=("samr",), input_gb=12.0)
    slots = compare(seeds=(1, 2), policies=("samr",), input_gb=12.0, **{"samr.backup_base": "slots"})
    assert eq15.backups.sum() > slots.backups.sum()


@pytest.fixture(scope="module")
def sort():
    """Sort 12 GB with the defaults (the data path of issue 11, ESX memory of issue 14), seeds 1-3."""
    return compare(seeds=(1, 2, 3), policies=("hadoop", "late", "samr"))


@pytest.mark.xfail(
    strict=True,
    reason="issue 14's target (SAMR Fig. 9: SAMR -24 %, LATE -7 % against Hadoop's speculation) is not met: seeds 1-3 "
    "Hadoop 310/361/341 s, LATE 335/364/336 s (+2.3 % on the mean; 5-6 backups, 0-3 useful), SAMR 310/361/341 s "
    "(0 %, no backup). Every reduce writes Sort's 3-replica output through other nodes' datastores, the slow nodes' "
    "among them, so all 22 reduces end within 28 s of each other: there is no straggler for any rule to catch "
    "(docs/results-samr.md)",
)
def test_samr_and_late_finish_sort_sooner_than_hadoops_speculation_on_every_seed(sort):
    job = sort.pivot(index="seed", columns="policy", values="job_s")
    assert (job.samr < job.hadoop).all() and (job.late < job.hadoop).all(), job.to_dict()


def test_no_backups_is_fig_9s_baseline_and_the_tail_is_measured():
    """Fig. 9's "HADOOP w/o backup mechanism" is `compare`'s "none": no backup runs; the tail figures compare the
    slowest task with the median and the slow nodes' median with the fast nodes' (Sort's maps on the slow nodes, at a
    third of the disk and 35 % of the CPU, take nearly twice a fast node's: 1.88 with a child JVM's 3 s start in
    every map, which both kinds of node pay alike)."""
    row = compare(seeds=(1,), policies=("none",), input_gb=3.0).iloc[0]
    assert row.backups == 0
    assert row.map_slow_over_fast > 1.7 and row.map_max_over_median > 1.7
    assert row.reduce_max_over_median >= 1.0
