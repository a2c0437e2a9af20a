"""Job profiles: what a MapReduce job costs per MB, and how its input splits differ (data skew, expensive records).

Units: CPU in megacycles (Mc), data in MB of 2**20 bytes, as in `hadoop_layer.traces`. A profile holds the
job's physics; `splits` turns it into per-map-task work. What the spill/sort/merge and shuffle cost is not
here: the map and reduce models derive it from output size, record count and io.sort.mb.

Map CPU numbers come from one per-record cost model (estimates for Hadoop 1.x on a 2.4 GHz core, chosen so
that a 64 MB Wikipedia wordcount map needs ~20 s for its map function; the Coupling paper measured a mean
of 48.5 s per WordCount map task on 2.93 GHz cores, sort/spill/combine and I/O included, Sec. II-B, Fig. 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Literal, NotRequired, TypedDict

import numpy as np

from hadoop_layer.traces import MB  # bytes in an MB

GB = 1024.0  # MB
SPLIT_SLOP = 1.1  # FileInputFormat.getSplits: a file's tail up to 1.1 blocks stays one split

# Per-record cost model, cycles (estimates; see the module docstring).
_BYTE = 10  # per input byte: HDFS read and CRC check, LineRecordReader, UTF-8 decode of the line
_TOKEN = 3_000  # per text token: StringTokenizer.nextToken, substring, hashing
_FIELD = 1_000  # per numeric field: tokenize, indexOf, substring, Integer.parseInt (no Text encoding)
_EMIT = 3_000  # per collect(): new Writables (Text encode), HashPartitioner, serialize into the sort buffer
_REDUCE = 2_000  # per reduce input record: deserialize from the merge, iterate, write the output record
_WIKI_TOKENS = MB / 8.5  # Wikipedia text: ~7.5-byte whitespace tokens incl. markup, plus the separator
_RATINGS = MB / 9.6  # Netflix "user_rating," fields: ~6.6-digit user id, '_', rating, ','
_DIGIT_LINES = MB / 11  # the Coupling paper's randomInput: one 10-digit integer per line


def _mc(cycles: float) -> float:
    return cycles / 1e6


@dataclass(frozen=True, kw_only=True)
class SplitSkew:
    """How splits of one job differ.

    size "uniform": one large input cut into full blocks and a last remainder. size "files": many files whose
    sizes are log-normal (median `file_median_mb`, log-sd `file_sigma`), split per file as FileInputFormat
    does, so each file ends in a short split. A fraction `heavy_fraction` of splits holds large or expensive
    records: their CPU and output per MB are multiplied by 1 + (heavy_cpu - 1) w and 1 + (heavy_output - 1) w,
    w log-normal of mean 1 and log-sd `heavy_sigma`, one w per split for both: the mean multipliers are
    `heavy_cpu` and `heavy_output`, and a multiplier of 1 stays exactly 1. Every split's CPU per MB also varies
    by a mean-1 log-normal factor of log-sd `record_cost_sigma` (expensive records).
    """

    size: Literal["uniform", "files"] = "uniform"
    heavy_fraction: float = 0.0
    heavy_cpu: float = 1.0
    heavy_output: float = 1.0
    heavy_sigma: float = 0.0
    record_cost_sigma: float = 0.0
    file_median_mb: float = 256.0
    file_sigma: float = 1.0
    heavy_per_file: bool = False  # heavy records cluster in files (all splits of a file share its heaviness)

    def __post_init__(self) -> None:
        if self.size not in ("uniform", "files"):
            raise ValueError(f"SplitSkew.size={self.size!r} must be 'uniform' or 'files'")
        if not 0.0 <= self.heavy_fraction <= 1.0:
            raise ValueError(f"SplitSkew.heavy_fraction={self.heavy_fraction!r} must be in [0, 1]")
        for name in ("heavy_cpu", "heavy_output"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 1.0):
                raise ValueError(f"SplitSkew.{name}={getattr(self, name)!r} must be finite and >= 1")
        _check_positive(self, ("file_median_mb",))
        _check_positive(self, ("heavy_sigma", "record_cost_sigma", "file_sigma"), zero_ok=True)


@dataclass(frozen=True, kw_only=True)
class JobProfile:
    """Per-MB physics of one job type. Rates describe a typical split; heavy splits scale them (SplitSkew)."""

    name: str
    input_mb: float  # at scale 1.0
    map_cpu_mc_per_mb: float
    map_selectivity: float  # map output bytes / input bytes, before any combiner
    map_record_bytes: float  # mean serialized key+value; below ~304 B Hadoop's record limit triggers spills
    combine_ratio: float = 1.0  # bytes after the combiner / before; 1.0 = no combiner
    reduce_cpu_mc_per_mb: float
    reduce_selectivity: float
    reduces: int | None = None  # None: the runner picks 0.95 x cluster reduce slots; 0: map-only
    skew: SplitSkew = field(default_factory=SplitSkew)
    description: str

    def __post_init__(self) -> None:
        _check_positive(self, ("input_mb", "map_record_bytes"))
        _check_positive(self, ("map_cpu_mc_per_mb", "map_selectivity", "reduce_cpu_mc_per_mb"), zero_ok=True)
        _check_positive(self, ("reduce_selectivity",), zero_ok=True)
        if not 0.0 <= self.combine_ratio <= 1.0:
            raise ValueError(f"JobProfile.combine_ratio={self.combine_ratio!r} must be in [0, 1]")
        if self.reduces is not None and self.reduces < 0:
            raise ValueError(f"JobProfile.reduces={self.reduces!r} must be >= 0 or None")


def _check_positive(obj: object, names: tuple[str, ...], zero_ok: bool = False) -> None:
    for name in names:
        value = getattr(obj, name)
        if not (math.isfinite(value) and (value >= 0 if zero_ok else value > 0)):
            bound = ">= 0" if zero_ok else "> 0"
            raise ValueError(f"{type(obj).__name__}.{name}={value!r} must be finite and {bound}")


class MapSpec(TypedDict):
    """One map's split, as jobs are made with it (`HadoopModel.add_job`, `Job.add_maps`): the keyword arguments of a
    map `Task`. `replicas`: the nodes that hold its block (a trace's recorded locations, a repartitioned piece's
    node); without it HDFS places the block."""

    input_mb: float
    cpu_mc: float
    output_mb: float
    output_records: float
    replicas: NotRequired[np.ndarray]


@dataclass(slots=True)
class MapColumns:
    """A job's `MapSpec`s as columns (float64 arrays of one length; `own_replicas[i]`: map i's `replicas`), which
    `HadoopModel.add_job` takes as it takes the list: a trace job's thousands of maps without a dict each."""

    input_mb: np.ndarray
    cpu_mc: np.ndarray
    output_mb: np.ndarray
    output_records: np.ndarray
    own_replicas: dict[int, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.input_mb)


@dataclass(frozen=True, eq=False)
class SplitTable:
    """Per-split work of one job, one entry per map task; arrays are read-only and of equal length."""

    input_mb: np.ndarray
    cpu_mc: np.ndarray  # map function CPU of the split
    output_mb: np.ndarray  # map output before the combiner
    output_records: np.ndarray
    heavy: np.ndarray  # bool: the split holds large/expensive records
    file: np.ndarray  # index of the input file the split belongs to (HDFS writes a file from one node)

    def __post_init__(self) -> None:
        for f in fields(self):
            getattr(self, f.name).flags.writeable = False

    def __len__(self) -> int:
        return len(self.input_mb)

    def map_specs(self) -> list[MapSpec]:
        """One spec per split, the keyword arguments of a map task (`HadoopModel.add_job`)."""
        columns = ("input_mb", "cpu_mc", "output_mb", "output_records")
        rows = zip(*(getattr(self, c) for c in columns), strict=True)
        return [dict(zip(columns, map(float, row), strict=True)) for row in rows]


def splits(profile: JobProfile, scale: float, block_mb: float, rng: np.random.Generator) -> SplitTable:
    """The map splits of `profile` run on scale x its input, cut into `block_mb` blocks; vectorized."""
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"splits: scale={scale!r} must be finite and > 0")
    if not (math.isfinite(block_mb) and block_mb > 0):
        raise ValueError(f"splits: block_mb={block_mb!r} must be finite and > 0")
    skew, total = profile.skew, scale * profile.input_mb
    if skew.size == "uniform":
        sizes = np.full(max(1, math.ceil(total / block_mb - 1e-9)), block_mb)  # no split for a rounding tail
        sizes[-1] = total - block_mb * (len(sizes) - 1)
        file = np.zeros(len(sizes), dtype=np.int64)
    else:
        sizes, file = _file_splits(_file_sizes(total, skew, rng), block_mb)
    n = len(sizes)
    heavy = rng.random(n) < skew.heavy_fraction
    if skew.heavy_per_file:
        heavy = (rng.random(int(file[-1]) + 1) < skew.heavy_fraction)[file]
    w = np.where(heavy, _lognormal_mean1(skew.heavy_sigma, rng.standard_normal(n)), 0.0)
    cost = _lognormal_mean1(skew.record_cost_sigma, rng.standard_normal(n))
    cpu_mult = (1.0 + (skew.heavy_cpu - 1.0) * w) * cost
    out_mult = 1.0 + (skew.heavy_output - 1.0) * w
    output_mb = sizes * profile.map_selectivity * out_mult
    return SplitTable(
        input_mb=sizes,
        cpu_mc=sizes * profile.map_cpu_mc_per_mb * cpu_mult,
        output_mb=output_mb,
        output_records=np.rint(output_mb * (MB / profile.map_record_bytes)).astype(np.int64),
        heavy=heavy,
        file=file,
    )


def _lognormal_mean1(sigma: float, z: np.ndarray) -> np.ndarray:
    """Log-normal factors of mean 1 (not median 1) from standard normals z.

    The C library's exp (`math.exp`), not `np.exp`: NumPy's exp takes an AVX-512 path on CPUs that have it, whose
    last bits differ from other CPUs' (numpy issue 23523), so a seed gave other split costs, and other tables, on
    another machine. On CPUs without AVX-512 the two give the same bits."""
    return np.fromiter(map(math.exp, (sigma * z - 0.5 * sigma * sigma).tolist()), float, len(z))


def _file_sizes(total: float, skew: SplitSkew, rng: np.random.Generator) -> np.ndarray:
    """Log-normal file sizes summing to `total`: draw until covered, then cut the last file."""
    mu, mean = math.log(skew.file_median_mb), skew.file_median_mb * math.exp(0.5 * skew.file_sigma**2)
    sizes = np.empty(0)
    while sizes.sum() < total:
        sizes = np.concatenate([sizes, rng.lognormal(mu, skew.file_sigma, int(1.2 * total / mean) + 16)])
    cum = np.cumsum(sizes)
    last = int(np.searchsorted(cum, total * (1.0 - 1e-12)))  # a rounding-error tail is no extra file
    sizes = sizes[: last + 1].copy()
    sizes[-1] = total - (cum[last - 1] if last else 0.0)
    return sizes


def _file_splits(files: np.ndarray, block_mb: float) -> tuple[np.ndarray, np.ndarray]:
    """FileInputFormat.getSplits per file: full blocks while more than SPLIT_SLOP blocks remain, then the rest.

    Returns the split sizes and each split's file index."""
    full = np.maximum(0, np.ceil(files / block_mb - SPLIT_SLOP)).astype(np.int64)
    sizes = np.full(int(full.sum()) + len(files), block_mb)
    sizes[np.cumsum(full + 1) - 1] = files - full * block_mb
    return sizes, np.repeat(np.arange(len(files)), full + 1)


# --- Skews -----------------------------------------------------------------------------------------------------
# Wikipedia (FlexSlot Sec. 4.2: "records with different sizes. Some of them are significantly larger than the
# average"). Files of log-normal size (median 256 MB, log-sd 1: an estimate; PUMA's file layout is not given),
# so ~1 split in 8 is a file's short tail. One split in 5 is heavy (Fig. 2: "nearly 20% of tasks run at least
# 20% longer"): long list/table pages dense in short markup tokens, so 2.5x the output per MB (more spills and
# disk I/O: the I/O-bound, iowait-heavy stragglers of Sec. 2.3) but only 1.6x the CPU; heavy_sigma 0.65 gives
# the tail. Task-time proxy (CPU at 2.4 GHz, input at 60 MB/s, 1.5 us of sort per output record, spill I/O at
# 30 MB/s): skewness 2.67 for wordcount (mean of 6 seeds), near the 2.65 of Table 1 (homogeneous cluster).
WIKI_SKEW = SplitSkew(
    size="files", heavy_fraction=0.2, heavy_cpu=1.6, heavy_output=2.5, heavy_sigma=0.65, record_cost_sigma=0.1
)
# Netflix (FlexSlot Sec. 4.2/4.4: "good examples of expensive records", "relatively uniform in record size"):
# uniform splits, CPU skew without output skew. k-means' similarity scan stops at the first matching reviewer,
# so its cost depends on content: strong spread. The histograms only parse: mild spread ("data skew is not
# severe and the CPU requirement is also low", Sec. 4.4).
KMEANS_SKEW = SplitSkew(heavy_fraction=0.1, heavy_cpu=2.0, heavy_sigma=0.3, record_cost_sigma=0.3)
HISTOGRAM_SKEW = SplitSkew(heavy_fraction=0.1, heavy_cpu=1.3, heavy_sigma=0.2, record_cost_sigma=0.1)

# --- FlexSlot Table 2: the PUMA benchmarks (Sec. 4.2) -------------------------------------------------------------
# Code followed: PUMA's Hadoop sources (Ahmad et al., org.apache.hadoop.examples[.puma]) and Hadoop 1.x examples.
_REGEX_BYTE = 50  # cycles per character java.util.regex tries (estimate)
_WIKI_RECORD = 1 + 7.5  # a token as Text: vint length + bytes
_DOC_ID = 1 + 12.0  # a file name as Text (PUMA keys documents by file name; ~12 characters is an estimate)
_MOVIE_LINE = 54_000.0  # 100.48 M Netflix ratings / 17,770 movies = 5,655 ratings x 9.6 B per "movie:..." line

PUMA: dict[str, JobProfile] = {
    p.name: p
    for p in (
        JobProfile(
            name="wordcount",
            input_mb=150 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _WIKI_TOKENS * (_TOKEN + _EMIT)),  # 751: 64 MB in 20 s at 2.4 GHz
            map_selectivity=(_WIKI_RECORD + 4) / 8.5,  # (Text word, IntWritable 1) per 8.5-byte token: 1.47
            map_record_bytes=_WIKI_RECORD + 4,
            combine_ratio=0.2,  # a spill holds 262,144 records (record limit); ~1 in 5 is a new word (estimate)
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / (_WIKI_RECORD + 4)),
            reduce_selectivity=0.2,  # each map's partial counts fold into one line per word (estimate)
            skew=WIKI_SKEW,
            description="Count words of Wikipedia text; IntSumReducer as combiner and reducer.",
        ),
        JobProfile(
            name="inverted-index",
            input_mb=150 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _WIKI_TOKENS * (_TOKEN + _EMIT)),  # as wordcount: docId Text per line
            map_selectivity=(_WIKI_RECORD + _DOC_ID) / 8.5,  # (word, docId) per token: 2.53
            map_record_bytes=_WIKI_RECORD + _DOC_ID,
            combine_ratio=0.2,  # the combiner drops repeated (word, doc) pairs; a split is one file, so as wordcount
            reduce_cpu_mc_per_mb=_mc(5 * _REDUCE * MB / (_WIKI_RECORD + _DOC_ID)),  # ArrayList.contains dedup: ~5x
            reduce_selectivity=0.8,  # drops pairs repeated across the blocks of one file (estimate)
            skew=WIKI_SKEW,
            description="Word -> list of documents (files) of Wikipedia; the reducer doubles as combiner.",
        ),
        JobProfile(
            name="term-vector",
            input_mb=150 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _WIKI_TOKENS * (_TOKEN + _EMIT + 1_500)),  # + "word:1" concatenation
            map_selectivity=(_DOC_ID + _WIKI_RECORD + 2) / 8.5,  # (host, "word:1") per token: 2.76
            map_record_bytes=_DOC_ID + _WIKI_RECORD + 2,
            combine_ratio=0.2,  # one key (the file) per split: the combiner keeps one "word:n" per distinct word
            reduce_cpu_mc_per_mb=_mc((_REDUCE + _FIELD) * MB / (_DOC_ID + _WIKI_RECORD + 2)),  # parse "word:n", sum
            reduce_selectivity=0.1,  # keeps words seen >= CUTOFF (10) times per host: few of a Zipf vocabulary
            skew=WIKI_SKEW,
            description="Per host (file), the frequent words of Wikipedia text with their counts.",
        ),
        JobProfile(
            name="grep",
            input_mb=150 * GB,
            map_cpu_mc_per_mb=_mc((_BYTE + _REGEX_BYTE) * MB),  # 63: ~38 MB/s per core, I/O-bound on a shared disk
            map_selectivity=1e-3,  # a selective pattern (not given by FlexSlot): a 19-byte match per ~20 KB
            map_record_bytes=1 + 10 + 8,  # (Text match, LongWritable 1)
            combine_ratio=0.5,  # LongSumReducer folds repeated matches (estimate)
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 19),
            reduce_selectivity=0.5,
            skew=WIKI_SKEW,  # FlexSlot Sec. 4.4 groups grep with the expensive-record Wikipedia jobs
            description="Hadoop's Grep search job (RegexMapper, LongSumReducer); its small sort job is not modelled.",
        ),
        JobProfile(
            name="tera-sort",
            input_mb=150 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + MB / 100 * _EMIT),  # identity map: read and collect 100-B rows: 42
            map_selectivity=1.0,  # TeraGen rows out as they came in
            map_record_bytes=100.0,  # below 304 B: the record limit spills every 262,144 rows (25 MB)
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 100),
            reduce_selectivity=1.0,
            skew=SplitSkew(),  # "relatively uniform distribution due to the randomized generation" (Sec. 4.2)
            description="TeraSort of TeraGen rows: identity map and reduce, total-order partitioner, no combiner.",
        ),
        JobProfile(
            name="k-means",
            input_mb=30 * GB,
            # Per rating: parse, then scan each of k = 6 centroids' review lists (~2,000 long, ~4 cycles a step,
            # stopping at a match) as PUMA's mapper does: ~49,000 cycles; 5,360 Mc/MB, 64 MB in 143 s (estimate).
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _RATINGS * (_FIELD + 6 * 2_000 * 4)),
            map_selectivity=1.0,  # emits (cluster id, the whole movie line): "large volume of intermediate data"
            map_record_bytes=_MOVIE_LINE,  # big records: the 76 MB byte limit spills, not the record limit
            reduce_cpu_mc_per_mb=_mc(2 * _RATINGS * _FIELD),  # re-parse each movie's ratings into new centroids
            reduce_selectivity=0.01,  # k centroids out (estimate)
            reduces=6,  # k = 6 cluster ids are the only keys: more reduces would get no input
            skew=KMEANS_SKEW,
            description="One k-means iteration (k = 6) over Netflix movie rating vectors; CPU-heavy map.",
        ),
        JobProfile(
            name="histogram-movies",
            input_mb=100 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _RATINGS * _FIELD),  # parse ratings to average them: 120
            map_selectivity=8 / _MOVIE_LINE,  # one (FloatWritable bin, IntWritable 1) per movie line
            map_record_bytes=8.0,
            combine_ratio=0.007,  # 8 bins out of ~1,200 movies per 64 MB split
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 8),
            reduce_selectivity=0.01,  # one line per bin from one record per bin and map (estimate)
            reduces=8,  # PUMA: "8 reduce tasks for 1-1.5, 1.5-2, ..., 4.5-5"
            skew=HISTOGRAM_SKEW,
            description="Histogram of movies by average rating (Netflix); tiny intermediate data.",
        ),
        JobProfile(
            name="histogram-ratings",
            input_mb=100 * GB,
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _RATINGS * (_FIELD + _EMIT)),  # a record per rating: 447
            map_selectivity=8 / 9.6,  # (IntWritable rating, IntWritable 1) per 9.6-byte field: 0.83
            map_record_bytes=8.0,  # record limit: ~27 spills per 64 MB split, each folded by the combiner
            combine_ratio=5 / 262_144,  # 5 keys left of a 262,144-record spill
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 8),
            reduce_selectivity=0.01,
            reduces=5,  # PUMA: "5 reduce tasks for ratings of 1, 2, 3, 4, and 5"
            skew=HISTOGRAM_SKEW,
            description="Histogram of Netflix ratings 1-5; tiny output after the combiner.",
        ),
    )
}

# --- Coupling scheduler paper (Tan, Meng, Zhang; Sec. III, Tables II-IV) ---------------------------------------
# Inputs are Set A's files: WikiInput, RandomInput* (one random 10-digit integer per line) and RandomPair*
# (RandomWriter output). The paper's nodes have 2,933 MHz cores. Where the paper measured a job's map times, the
# map CPU is set from them (`_paper_map_cpu`) rather than from the per-record estimates above, which were made
# for FlexSlot's testbed: the scheduling effects depend on how long maps hold slots and on whether jobs overlap.
_COUPLING_CORE_MHZ = 2933.0  # Sec. III: "4 cores (2933MHz ...)"
_COUPLING_MAP_IO_S = 6.0  # JVM start, reading a local 64 MB block beside 3 other maps, spills: our runs' non-CPU time


def _paper_map_cpu(map_s: float) -> float:
    """Map CPU (Mc per MB) for a 64 MB map that the paper saw take `map_s` seconds in all on its nodes."""
    return (map_s - _COUPLING_MAP_IO_S) * _COUPLING_CORE_MHZ / 64.0


_PI_FILE_MB = 118 / MB  # PiEstimator's per-map input: a SequenceFile of one (offset, size) LongWritable pair
_RW_SPLIT_MB = 1 / MB  # RandomWriter's RandomInputFormat: one dummy FileSplit of length 1 per map
_RW_RECORD = 4 + 505 + 4 + 10_000.0  # BytesWritable key of 10-1,000 B and value of 0-20,000 B, uniform

COUPLING: dict[str, JobProfile] = {
    p.name: p
    for p in (
        JobProfile(
            name="grep",
            input_mb=148 * 64.0,  # RandomInput, "10.0G": 148 maps (Tables II, IV)
            # Taken literally, Hadoop's Grep (RegexMapper: a collect per Matcher.find()) with [1-5]* on a random
            # 10-digit line finds 8.76 matches, empty ones included: 7.6x the input in 9.6-byte records, 204
            # spills and ~60 s of map CPU per 64 MB block on the paper's cores. The paper contradicts that: in
            # Fig. 1 job 2 (148 maps of RandomInput) runs all its maps between 1.0 and 3.8 minutes on at most half
            # of the 28 map slots, ~15 s a map; the paper counts Grep among its "map intensive" jobs with light
            # reduces (Table IV: job 2 of two identical Greps 30 s apart never starves under Fair, so job 1's
            # reduces end right after its maps). So the paper's Grep costs about one regex scan and one
            # collect per line: the leading run of the set, often empty (~1 byte: a 10-byte record per line),
            # a few thousand distinct keys per spill. CPU from Fig. 1's ~15 s per map.
            map_cpu_mc_per_mb=_paper_map_cpu(15.0),
            map_selectivity=10 / 11,
            map_record_bytes=10.0,  # (Text of ~1 byte, LongWritable)
            combine_ratio=0.01,  # runs of 1-10 digits of a 4-5 digit set: a few thousand keys per 262,144 records
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 10),
            reduce_selectivity=0.1,  # every map sends its distinct runs; the reduce sums them over the maps
            skew=SplitSkew(),  # random digits: uniform
            description="Grep [d-e]* over RandomInput* (random 10-digit lines), as fast as the paper's Fig. 1 shows.",
        ),
        JobProfile(
            name="grep-wiki",
            input_mb=427 * 64.0,  # WikiInput, "28G": 427 maps (Tables III, IV; Sec. II-A)
            # [a-f][a-z]* matches in ~3 of 4 tokens ("the" -> "e", "of" -> "f"; not "in", "is", "to"),
            # ~4 letters each: 0.75 x 13 B per 8.5-byte token. The per-record estimate (9 s of map CPU per
            # block) gives ~15 s maps: the 10 jobs of Fig. 5 would then never overlap (each alone < 5 min).
            # The paper's maps are slower: Figs. 5-6 run 4,270 of them on 32 slots in ~70 of the 80 minutes
            # shown (~30 s a map), inside Fig. 8's 10-100 s. CPU from that ~30 s.
            map_cpu_mc_per_mb=_paper_map_cpu(30.0),
            map_selectivity=0.75 * 13 / 8.5,
            map_record_bytes=13.0,
            combine_ratio=0.15,  # word tails repeat more than words (estimate)
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 13),
            reduce_selectivity=0.05,
            skew=replace(WIKI_SKEW, size="uniform"),  # one dump: 427 whole blocks
            description="Grep [a-f][a-z]* (or [a-g], [a-h]) over WikiInput.",
        ),
        replace(
            PUMA["wordcount"],
            name="wordcount-wiki",
            input_mb=427 * 64.0,  # WikiInput: the 427 maps of Figs. 10-11
            map_cpu_mc_per_mb=_paper_map_cpu(48.5),  # Sec. II-B: "Fig. 10 shows mu = 1/48.5"
            skew=replace(WIKI_SKEW, size="uniform"),  # one dump: 427 whole blocks
            description="WordCount over WikiInput (Figs. 10-11): PUMA's wordcount on the paper's Wikipedia file.",
        ),
        JobProfile(
            name="wordcount",
            input_mb=1e9 / MB,  # RandomInput10, "1.0G": 15 maps (Table IV job 16)
            map_cpu_mc_per_mb=_mc(_BYTE * MB + _DIGIT_LINES * (_TOKEN + _EMIT)),  # one token per line: 582
            map_selectivity=15 / 11,  # (Text of 10 digits, IntWritable 1) per 11-byte line
            map_record_bytes=15.0,
            combine_ratio=1.0,  # the combiner runs but 10-digit random integers hardly ever repeat
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 15),
            reduce_selectivity=13 / 15,  # "n\t1\n" per record
            skew=SplitSkew(),
            description="WordCount over RandomInput* lines: every word distinct, so the shuffle is the input.",
        ),
        JobProfile(
            name="sort",
            input_mb=14 * GB,  # RandomPair1 "15.0G" = 14 RandomWriter files of 1 GiB: 224 maps (Sort1)
            # Checked against the paper's one Sort time (Sec. III-A: Sort2, 352 maps and 27 reduces alone on Set
            # A's 7 nodes, 16.15-23.5 minutes under Fair; Sort1's are only drawn in Fig. 12). Here Sort2 alone
            # takes 6.5 min under Fair (6.7 under Coupling; Sort1 5.2 -> 4.2 min, the paper's -14.6 % and "Sort2
            # runs slightly slower" in direction). Nothing the paper says about Sort contradicts this profile: it
            # names the job (Hadoop's Sort example: identity map and reduce), its input (RandomWriter output) and
            # calls it copy/shuffle intensive. The map function costs < 1 s of CPU per block; the job time is the
            # disk: each node passes its 3.2 GB share over its disk 4-5 times (input read, map spill, reduce
            # merges, output write), 13-16 GB at the 60 MB/s datastore, ~4 of the 6.5 min. With disk_mbps=20
            # Sort2 takes 16.1 min (scenario settings as coupling-22-jobs), so the paper's nodes delivered about a
            # third of our disk bandwidth to this job; that is the cluster's calibration (it would slow every
            # other job's maps too, whose CPU was set from the paper's map times), not the profile's, and is left.
            map_cpu_mc_per_mb=_mc(_BYTE * MB + MB / _RW_RECORD * _EMIT),  # identity map of ~10 KB records: 11
            map_selectivity=1.0,
            map_record_bytes=_RW_RECORD,
            reduce_cpu_mc_per_mb=_mc(_BYTE * MB + _REDUCE * MB / _RW_RECORD),
            reduce_selectivity=1.0,
            skew=SplitSkew(),  # 1 GiB files are 16 whole blocks
            description="Hadoop's Sort example over RandomWriter output: identity map and reduce.",
        ),
        JobProfile(
            name="quasi-monte-carlo",
            input_mb=50 * _PI_FILE_MB,  # 50 maps (Table II)
            # Table IV job 3 (5 maps, 1 reduce) finished in 0.8 min at best (Sec. I-C): a map is <= ~30 s on a
            # 2.93 GHz core, ~88,000 Mc; we take 80,000 Mc of Halton sampling per map (estimate).
            map_cpu_mc_per_mb=80_000 / _PI_FILE_MB,
            map_selectivity=2 * 9 / 118,  # (BooleanWritable, LongWritable) for inside and for outside
            map_record_bytes=9.0,
            reduce_cpu_mc_per_mb=_mc(_REDUCE * MB / 9),
            reduce_selectivity=1.0,
            reduces=1,
            skew=SplitSkew(size="files", file_median_mb=_PI_FILE_MB, file_sigma=0.0),  # one split per file
            description="PiEstimator/QuasiMonteCarlo: CPU-bound maps over tiny inputs, one reduce.",
        ),
        JobProfile(
            name="random-writer",
            input_mb=70 * _RW_SPLIT_MB,  # 70 maps (Table II)
            # Each map writes test.randomwrite.bytes_per_map = 1 GiB; ~17 cycles/B for Random.nextBytes,
            # SequenceFile serialization and HDFS checksums (estimate): 18,250 Mc per map.
            map_cpu_mc_per_mb=_mc(17 * GB * MB) / _RW_SPLIT_MB,
            map_selectivity=GB / _RW_SPLIT_MB,
            map_record_bytes=_RW_RECORD,
            reduce_cpu_mc_per_mb=0.0,
            reduce_selectivity=0.0,
            reduces=0,
            skew=SplitSkew(size="files", file_median_mb=_RW_SPLIT_MB, file_sigma=0.0),
            description="RandomWriter: map-only, each map writes 1 GiB of random key/values to HDFS.",
        ),
    )
}

# SAMR runs Sort (Fig. 9) and WordCount without saying on what input: the same jobs as above.
SAMR: dict[str, JobProfile] = {"sort": COUPLING["sort"], "wordcount": PUMA["wordcount"]}
