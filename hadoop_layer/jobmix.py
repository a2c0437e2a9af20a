"""Job sequences of the Coupling scheduler paper (Tan, Meng, Zhang) as job arrivals for the emulator.

Each function returns the arrivals of one experiment, in submit order. Map and reduce counts are the paper's;
input sizes are Set A's files (Sec. III), in MB of 2**20 bytes. Where the extracted text is garbled or
disagrees with the map counts, the comment says which reading was taken.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hadoop_layer.profiles import COUPLING, GB, MB, JobProfile, SplitTable, splits


@dataclass(frozen=True)
class JobArrival:
    """One job submission. `maps` and `reduces` override the profile's when the experiment fixes them."""

    name: str
    profile: JobProfile
    submit_s: float
    input_mb: float
    maps: int | None
    reduces: int | None
    pool: str = "default"
    user: str = "user"
    priority: str = "NORMAL"


# Set A's files (Sec. III). The map counts of Tables II-IV are ceil(size / 64 MB) with sizes in decimal GB,
# except where noted; there the map count wins.
DATASETS_MB: dict[str, float] = {
    "wikiInput": 427 * 64.0,  # "28G" would be 418 blocks; 427 maps everywhere: 28.65e9 B
    "randomInput": 148 * 64.0,  # "10.0G" would be 150 blocks; 148 maps in Tables II and IV
    "randomInput05": 0.5e9 / MB,  # 8 maps
    "randomInput10": 1.0e9 / MB,  # 15 maps
    "randomInput15": 1.5e9 / MB,  # 23 maps
    "randomInput20": 2.0e9 / MB,  # 30 maps (listed in Table III and IV, missing from Sec. III's file list)
    "randomInput30": 3.0e9 / MB,  # 45 maps
    # RandomWriter output, files of 1 GiB (16 blocks each). The text reads "four files (named RandomPair1,
    # RandomPair2 and RandomPair3 of size 15.0G and 29.0G, 4.3G bytes)": 15.0G and 4.3G are 14 and 4 GiB
    # (224 and 64 maps); 29.0G would be 432 maps, but Sort2 has 352: 22 GiB.
    "randomPair1": 14 * GB,
    "randomPair2": 22 * GB,
    "randomPair3": 4 * GB,
}

# Table IV, "Job sequence": (job id, job, input, arrival s, maps M, reduces R, starvation SF, SC in minutes).
# Garbled in the extraction: job 01 has no arrival time (taken as 0, the start of the sequence); job 21
# (RandomWriter) has no R (map-only, as in Table II). The caption says arrival times are in minutes, but the
# values (30 ... 2485) are seconds: Fig. 3 spans 60 minutes.
TABLE_IV_ROWS: tuple[tuple[int, str, str | None, float, int, int, float, float], ...] = (
    (1, "Grep [1-5]*", "randomInput", 0, 148, 15, 0.0, 0.0),
    (2, "Grep [5-9]*", "randomInput", 30, 148, 15, 0.0, 0.0),
    (3, "QuasiMonteCarlo", None, 150, 5, 1, 6.1, 0.0),
    (4, "WordCount", "randomInput05", 170, 8, 1, 4.0, 0.0),
    (5, "Grep [2-6]*", "randomInput05", 190, 8, 2, 3.9, 0.0),
    (6, "Grep [3-6]*", "randomInput05", 210, 8, 2, 2.8, 0.0),
    (7, "Grep [4-6]*", "randomInput05", 230, 8, 3, 2.8, 0.0),
    (8, "Grep [a-h][a-z]*", "wikiInput", 470, 427, 15, 0.0, 0.2),
    (9, "Grep [a-g][a-z]*", "wikiInput", 500, 427, 15, 0.0, 0.0),
    (10, "Sort", "randomPair1", 800, 224, 27, 4.9, 4.5),
    (11, "Grep [1-2]*", "randomInput10", 860, 15, 5, 8.3, 0.9),
    (12, "Grep [1-5]*", "randomInput05", 880, 8, 3, 8.6, 0.6),
    (13, "Grep [6-9]*", "randomInput05", 900, 8, 2, 8.4, 0.2),
    (14, "Sort", "randomPair3", 1020, 64, 27, 5.3, 3.5),
    (15, "Grep [3-8]*", "randomInput20", 1140, 30, 2, 1.0, 0.0),
    (16, "WordCount", "randomInput10", 1440, 15, 1, 0.1, 0.0),
    (17, "Sort", "randomPair2", 1710, 352, 27, 0.3, 5.0),
    (18, "QuasiMonteCarlo", None, 2110, 15, 1, 0.3, 0.0),
    (19, "Grep [1-5]*", "randomInput05", 2125, 8, 3, 0.0, 0.0),
    (20, "Sort", "randomPair3", 2245, 64, 27, 0.5, 1.1),
    (21, "RandomWriter", None, 2365, 150, 0, 0.0, 0.0),
    (22, "QuasiMonteCarlo", None, 2485, 10, 1, 0.0, 0.0),
)
TABLE_IV_STARVATION_MIN: dict[int, tuple[float, float]] = {r[0]: (r[6], r[7]) for r in TABLE_IV_ROWS}

# Table III, "Grep jobs without ReduceTasks" (Set B, 15 nodes): (job id, job, input, submit s, maps).
# Job 01's submission time is missing in the extraction: taken as 0 (the others are 120 s apart).
TABLE_III_ROWS: tuple[tuple[int, str, str, float, int], ...] = (
    (1, "Grep [a-f][a-z]*", "wikiInput", 0, 427),
    (2, "Grep [1-5]*", "randomInput10", 120, 15),
    (3, "Grep [1-4]*", "randomInput15", 240, 23),
    (4, "Grep [1-3]*", "randomInput30", 360, 45),
    (5, "Grep [a-f][a-z]*", "wikiInput", 480, 427),
    (6, "Grep [1-2]*", "randomInput10", 600, 15),
    (7, "Grep [1-4]*", "randomInput15", 720, 23),
    (8, "Grep [1-3]*", "randomInput20", 840, 30),
    (9, "Grep [a-f][a-z]*", "wikiInput", 960, 427),
    (10, "Grep [1-2]*", "randomInput30", 1080, 45),
)

# Table II, "Job profile": the single jobs of Sec. III-A (Set A), each run alone: (job, input, maps, reduces).
TABLE_II_ROWS: tuple[tuple[str, str | None, int, int], ...] = (
    ("Grep [1-5]*", "randomInput", 148, 6),
    ("RandomWriter", None, 70, 0),
    ("QuasiMonteCarlo", None, 50, 1),
    ("Sort", "randomPair1", 224, 12),  # Sort1
    ("Sort", "randomPair2", 352, 27),  # Sort2
)


_PROFILE_OF = {
    "Grep": "grep",  # over RandomInput*; WikiInput takes "grep-wiki"
    "WordCount": "wordcount",
    "Sort": "sort",
    "QuasiMonteCarlo": "quasi-monte-carlo",
    "RandomWriter": "random-writer",
}


def _arrival(name: str, job: str, dataset: str | None, submit_s: float, maps: int, reduces: int) -> JobArrival:
    """A Coupling job; generator jobs (QuasiMonteCarlo, RandomWriter) read one tiny split per map."""
    profile = COUPLING["grep-wiki" if dataset == "wikiInput" else _PROFILE_OF[job.split()[0]]]
    input_mb = DATASETS_MB[dataset] if dataset else maps * profile.skew.file_median_mb
    label = f"{name} {job}" + (f" {dataset}" if dataset else "")
    return JobArrival(label, profile, float(submit_s), input_mb, maps, reduces)


def splits_for(arrival: JobArrival, block_mb: float, rng: np.random.Generator) -> SplitTable:
    """The map splits of one arrival: its profile at scale input_mb / profile.input_mb."""
    return splits(arrival.profile, arrival.input_mb / arrival.profile.input_mb, block_mb, rng)


def two_grep(job2_submit_s: float = 60.0) -> list[JobArrival]:
    """Sec. I-A, Figs. 1-2: two Grep jobs, the second submitted at 1.0 minute, on Set A (7 nodes: 28 map and
    14 reduce slots, the figures' axes). The paper names neither input. Two identical Greps of RandomInput (Table
    IV's jobs 1-2) cannot give Fig. 1: job 1's maps would end before job 2's and its light reduces right after
    (Table IV: job 2 has SF = 0), yet in Fig. 1 job 1 holds the reduce slots from 0.9 until 11.3 minutes while job
    2's maps end at 3.8. Job 1 must be the larger: Grep over WikiInput (427 maps, 15 reduces as Table IV's jobs
    8-9), which also fits its reduces starting at 0.9 min (5 % of 427 maps = the first wave of 28), and job 2 the
    Grep of RandomInput (148 maps, 15 reduces: Table IV's job 1)."""
    return [
        _arrival("G2-01", "Grep [a-h][a-z]*", "wikiInput", 0.0, 427, 15),
        _arrival("G2-02", "Grep [1-5]*", "randomInput", job2_submit_s, 148, 15),
    ]


def ten_grep(interval_s: float = 300.0) -> list[JobArrival]:
    """Sec. II-A, Figs. 5-6 and Table I: 10 identical Grep jobs one every 5 minutes on 8 nodes (4 map and 2 reduce
    slots each), each with 427 maps and 8 reduces. 427 maps is WikiInput; the pattern is Table III's."""
    return [_arrival(f"G10-{i + 1:02d}", "Grep [a-f][a-z]*", "wikiInput", i * interval_s, 427, 8) for i in range(10)]


def table_ii() -> list[JobArrival]:
    """Sec. III-A, Table II and Fig. 12: the single jobs on Set A; run each alone (all submit at 0)."""
    return [_arrival(f"II-{i + 1:02d}", job, ds, 0.0, m, r) for i, (job, ds, m, r) in enumerate(TABLE_II_ROWS)]


def table_iii() -> list[JobArrival]:
    """Sec. III-B, Table III and Figs. 13-15: 10 map-only Grep jobs on Set B (15 nodes, 8 without input data)."""
    return [_arrival(f"III-{j:02d}", job, ds, t, m, 0) for j, job, ds, t, m in TABLE_III_ROWS]


def table_iv() -> list[JobArrival]:
    """Sec. III-C, Table IV and Fig. 3: 22 jobs, large ones followed by small ones; on Set A (7 nodes), where
    jobs 1 and 2 can take all 14 reduce slots (Sec. I-C)."""
    return [_arrival(f"IV-{j:02d}", job, ds, t, m, r) for j, job, ds, t, m, r, _, _ in TABLE_IV_ROWS]


# Sec. III-D: "Grep, WordCount, QuasiMonteCarlo and Sort, with percentage 73.8%, 8.9%, 6.8%, 10.5%" of 200 jobs:
# 147.6, 17.8, 13.6 and 21 jobs, rounded by largest remainder (the Grep/QuasiMonteCarlo tie goes to Grep).
MIX_200_COUNTS: dict[str, int] = {"Grep": 148, "WordCount": 18, "QuasiMonteCarlo": 13, "Sort": 21}


def mix_200(rng: np.random.Generator, mean_gap_s: float = 25.0, mean_batch_gap_s: float = 1200.0) -> list[JobArrival]:
    """Sec. III-D, Fig. 16: 200 jobs in 10 batches of 20 on Set C (62 nodes, every file of Set A copied).

    The job types follow MIX_200_COUNTS, shuffled over the batches. Each job copies a Table IV job of its type
    ("similar characteristics as the workflow in Table IV"): input, maps and reduces; a batch keeps Table IV's
    order, large jobs first. Arrivals: exponential gaps of mean 25 s within a batch; the first jobs of
    consecutive batches are exponential gaps of mean 20 minutes apart (the first batch starts at 0). Batches
    may overlap; the list is sorted by submit time and names carry the batch.
    """
    batches, per_batch = 10, 20
    kinds = rng.permutation([k for k, n in MIX_200_COUNTS.items() for _ in range(n)]).reshape(batches, per_batch)
    by_kind = {k: [r for r in TABLE_IV_ROWS if r[1].split()[0] == k] for k in MIX_200_COUNTS}
    starts = np.concatenate([[0.0], np.cumsum(rng.exponential(mean_batch_gap_s, batches - 1))])
    gaps = rng.exponential(mean_gap_s, (batches, per_batch - 1))
    arrivals = []
    for b in range(batches):
        rows = sorted((by_kind[k][rng.integers(len(by_kind[k]))] for k in kinds[b]), key=lambda r: r[0])
        times = starts[b] + np.concatenate([[0.0], np.cumsum(gaps[b])])
        for i, (row, t) in enumerate(zip(rows, times, strict=True)):
            arrivals.append(_arrival(f"M-b{b + 1:02d}-{i + 1:02d}", row[1], row[2], float(t), row[4], row[5]))
    return sorted(arrivals, key=lambda a: a.submit_s)
