"""Job profiles and their split tables (hadoop_layer.profiles); the Coupling paper's job sequences (.jobmix)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer import jobmix
from hadoop_layer.profiles import COUPLING, GB, MB, PUMA, SAMR, JobProfile, SplitSkew, splits

BLOCK = 64.0
ALL = {**{f"puma/{k}": p for k, p in PUMA.items()}, **{f"coupling/{k}": p for k, p in COUPLING.items()}}


def _rng(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- Split tables --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(ALL))
def test_split_input_adds_up_to_scaled_input(key):
    profile = ALL[key]
    scale = min(1.0, 20 * GB / profile.input_mb)  # keep the big inputs to ~320 splits
    table = splits(profile, scale, BLOCK, _rng())
    assert abs(table.input_mb.sum() - scale * profile.input_mb) < BLOCK
    assert math.isclose(table.input_mb.sum(), scale * profile.input_mb, rel_tol=1e-9)
    assert len({len(table.input_mb), len(table.cpu_mc), len(table.output_mb), len(table.output_records)}) == 1
    assert (table.input_mb > 0).all() and (table.input_mb <= 1.1 * BLOCK + 1e-9).all()
    assert (table.cpu_mc > 0).all() and (table.output_mb >= 0).all()


@given(total=st.floats(min_value=0.01, max_value=50_000.0))
@settings(max_examples=60, deadline=None)
def test_uniform_inputs_split_into_ceil_total_over_block(total):
    profile = COUPLING["sort"]
    table = splits(profile, total / profile.input_mb, BLOCK, _rng())
    assert len(table) == max(1, math.ceil(total / BLOCK - 1e-9))  # a tail under 1e-9 block is rounding, not a split
    assert (table.input_mb[:-1] == BLOCK).all()
    assert math.isclose(table.input_mb.sum(), total, rel_tol=1e-9)


def test_files_skew_leaves_short_tail_splits():
    table = splits(PUMA["wordcount"], 0.2, BLOCK, _rng())
    short = table.input_mb < 0.9 * BLOCK
    assert 0.03 < short.mean() < 0.5  # each file's tail; most splits are still whole blocks
    assert (table.input_mb[short] > 0).all()
    assert len(table) > math.ceil(table.input_mb.sum() / BLOCK)


def test_uniform_profiles_have_no_short_splits_but_the_last():
    table = splits(PUMA["tera-sort"], 0.1, BLOCK, _rng())
    assert (table.input_mb[:-1] == BLOCK).all()


def test_heavy_wikipedia_splits_emit_more_output_per_mb():
    table = splits(PUMA["inverted-index"], 1.0, BLOCK, _rng())
    per_mb = table.output_mb / table.input_mb
    assert 0.15 < table.heavy.mean() < 0.25
    assert per_mb[table.heavy].mean() > 2.0 * per_mb[~table.heavy].mean()
    assert per_mb[~table.heavy] == pytest.approx(PUMA["inverted-index"].map_selectivity)


def test_netflix_expensive_records_skew_cpu_not_output():
    table = splits(PUMA["k-means"], 1.0, BLOCK, _rng())
    cpu_per_mb = table.cpu_mc / table.input_mb
    assert cpu_per_mb[table.heavy].mean() > 1.5 * cpu_per_mb[~table.heavy].mean()
    assert np.allclose(table.output_mb / table.input_mb, PUMA["k-means"].map_selectivity)


def test_records_follow_output_bytes_and_record_size():
    profile = PUMA["wordcount"]
    table = splits(profile, 0.05, BLOCK, _rng())
    assert np.allclose(table.output_records, table.output_mb * MB / profile.map_record_bytes, atol=0.5)


def test_same_seed_same_splits_other_seed_other_splits():
    a, b, c = (splits(PUMA["term-vector"], 0.3, BLOCK, _rng(s)) for s in (3, 3, 4))
    for name in ("input_mb", "cpu_mc", "output_mb", "output_records", "heavy"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.cpu_mc, c.cpu_mc)


def test_split_costs_do_not_take_numpys_cpu_dependent_exp(monkeypatch):
    """A seed gives the same splits on every CPU: NumPy's exp has an AVX-512 path whose last bits differ (numpy
    issue 23523). Here np.exp is made to differ in its last bit, as it does there: the split costs must not move."""
    before = splits(PUMA["grep"], 0.3, BLOCK, _rng(5))
    assert before.heavy.any()  # the heavy and expensive-record factors are drawn
    exp = np.exp
    monkeypatch.setattr(np, "exp", lambda x, *a, **k: np.nextafter(exp(x, *a, **k), np.inf))
    after = splits(PUMA["grep"], 0.3, BLOCK, _rng(5))
    assert np.array_equal(before.cpu_mc, after.cpu_mc) and np.array_equal(before.output_mb, after.output_mb)


def test_split_table_is_read_only():
    table = splits(PUMA["grep"], 0.01, BLOCK, _rng())
    with pytest.raises(ValueError):
        table.cpu_mc[0] = 0.0


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, math.inf])
def test_bad_scale_is_refused_naming_the_field(scale):
    with pytest.raises(ValueError, match=rf"scale={scale!r}"):
        splits(PUMA["wordcount"], scale, BLOCK, _rng())


def test_bad_profile_fields_are_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"heavy_fraction=1\.5"):
        SplitSkew(heavy_fraction=1.5)
    with pytest.raises(ValueError, match="input_mb=0"):
        JobProfile(
            name="x",
            input_mb=0,
            map_cpu_mc_per_mb=1,
            map_selectivity=1,
            map_record_bytes=10,
            reduce_cpu_mc_per_mb=1,
            reduce_selectivity=1,
            description="",
        )


# --- The profiles' numbers -------------------------------------------------------------------------------------


def test_puma_has_flexslot_table_2_benchmarks_and_sizes():
    table_2_gb = {
        "tera-sort": 150,
        "inverted-index": 150,
        "term-vector": 150,
        "wordcount": 150,
        "grep": 150,
        "k-means": 30,
        "histogram-movies": 100,
        "histogram-ratings": 100,
    }
    assert {k: p.input_mb / 1024 for k, p in PUMA.items()} == table_2_gb
    assert all(p.name == k for k, p in PUMA.items())


def test_wordcount_64mb_split_takes_tens_of_seconds_of_cpu_at_2400_mhz():
    table = splits(PUMA["wordcount"], 0.1, BLOCK, _rng())
    typical = ~table.heavy & (table.input_mb == BLOCK)
    seconds = table.cpu_mc[typical] / 2400.0
    assert 10.0 < np.median(seconds) < 120.0


def test_puma_categories_match_flexslot_descriptions():
    assert PUMA["grep"].map_selectivity < 0.01  # tiny output
    assert PUMA["tera-sort"].map_selectivity == 1.0 and PUMA["tera-sort"].map_record_bytes == 100.0
    assert PUMA["tera-sort"].combine_ratio == 1.0 and PUMA["tera-sort"].skew == SplitSkew()
    assert PUMA["k-means"].map_cpu_mc_per_mb > 4 * PUMA["wordcount"].map_cpu_mc_per_mb  # computation intensive
    for name in ("histogram-movies", "histogram-ratings"):  # small intermediate data after the combiner
        assert PUMA[name].map_selectivity * PUMA[name].combine_ratio < 1e-3
    for name in ("wordcount", "inverted-index", "term-vector", "grep"):
        assert PUMA[name].skew.size == "files" and PUMA[name].skew.heavy_output > 2


def test_coupling_generator_jobs_run_one_split_per_map():
    qmc = splits(COUPLING["quasi-monte-carlo"], 5 / 50, BLOCK, _rng())
    assert len(qmc) == 5 and np.allclose(qmc.cpu_mc, 80_000.0)
    writer = splits(COUPLING["random-writer"], 150 / 70, BLOCK, _rng())
    assert len(writer) == 150 and np.allclose(writer.output_mb, 1024.0) and writer.input_mb.sum() * MB < 151
    assert COUPLING["random-writer"].reduces == 0 and COUPLING["quasi-monte-carlo"].reduces == 1


def test_samr_reuses_sort_and_wordcount():
    assert SAMR["sort"] is COUPLING["sort"] and SAMR["wordcount"] is PUMA["wordcount"]


# --- Job sequences -------------------------------------------------------------------------------------------


def _all_sequences() -> list[jobmix.JobArrival]:
    return [
        *jobmix.two_grep(),
        *jobmix.ten_grep(),
        *jobmix.table_ii(),
        *jobmix.table_iii(),
        *jobmix.table_iv(),
        *jobmix.mix_200(_rng()),
    ]


def test_every_arrival_splits_into_its_papers_map_count():
    for arrival in _all_sequences():
        assert len(jobmix.splits_for(arrival, BLOCK, _rng())) == arrival.maps, arrival.name


def test_table_iv_has_22_jobs_as_printed():
    jobs = jobmix.table_iv()
    assert len(jobs) == 22
    assert [j.submit_s for j in jobs] == sorted(j.submit_s for j in jobs)
    assert (jobs[2].name, jobs[2].submit_s, jobs[2].maps, jobs[2].reduces) == ("IV-03 QuasiMonteCarlo", 150.0, 5, 1)
    assert jobs[16].profile is COUPLING["sort"] and (jobs[16].maps, jobs[16].reduces) == (352, 27)
    assert jobs[7].profile is COUPLING["grep-wiki"] and jobs[0].profile is COUPLING["grep"]
    assert jobs[20].profile is COUPLING["random-writer"] and jobs[20].reduces == 0
    assert jobmix.TABLE_IV_STARVATION_MIN[10] == (4.9, 4.5)


def test_table_iii_is_ten_map_only_greps_two_minutes_apart():
    jobs = jobmix.table_iii()
    assert len(jobs) == 10 and all(j.reduces == 0 for j in jobs)
    assert [j.submit_s for j in jobs] == [120.0 * i for i in range(10)]
    assert [j.maps for j in jobs] == [427, 15, 23, 45, 427, 15, 23, 30, 427, 45]


def test_ten_grep_and_two_grep_experiments():
    ten = jobmix.ten_grep()
    assert [j.submit_s for j in ten] == [300.0 * i for i in range(10)]
    assert {(j.maps, j.reduces, j.profile.name) for j in ten} == {(427, 8, "grep-wiki")}
    two = jobmix.two_grep()
    assert [j.submit_s for j in two] == [0.0, 60.0]
    # job 1 is the larger Grep of WikiInput, job 2 the Grep of RandomInput (jobmix.two_grep says why)
    assert [(j.profile.name, j.maps, j.reduces) for j in two] == [("grep-wiki", 427, 15), ("grep", 148, 15)]


def test_coupling_map_cpu_follows_the_papers_map_times():
    # the per-MB CPU that makes a 64 MB map take the paper's time on a 2,933 MHz core, less 6 s of JVM start and I/O:
    # WordCount of WikiInput 48.5 s (Sec. II-B, mu = 1/48.5), Grep of WikiInput ~30 s (Figs. 5-6), Grep of
    # RandomInput ~15 s (Fig. 1): (48.5 - 6) x 2933 / 64 = 1947.7, (30 - 6) x 2933 / 64 = 1099.9, 9 x 2933 / 64 = 412.5
    expected = {"wordcount-wiki": 1947.7, "grep-wiki": 1099.9, "grep": 412.5}
    assert {k: round(COUPLING[k].map_cpu_mc_per_mb, 1) for k in expected} == expected


def test_mix_200_is_ten_batches_of_twenty_with_increasing_submit_times():
    jobs = jobmix.mix_200(_rng())
    assert len(jobs) == 200
    times = [j.submit_s for j in jobs]
    assert times[0] == 0.0 and all(a < b for a, b in itertools.pairwise(times))
    batches: dict[str, list[float]] = {}
    for j in jobs:
        batches.setdefault(j.name.split("-")[1], []).append(j.submit_s)
    assert len(batches) == 10 and all(len(t) == 20 for t in batches.values())
    kinds = [j.name.split()[1] for j in jobs]
    assert {k: kinds.count(k) for k in jobmix.MIX_200_COUNTS} == jobmix.MIX_200_COUNTS
    assert 600 < np.mean(np.diff(sorted(min(t) for t in batches.values()))) < 2400  # batches ~20 min apart


def test_mix_200_is_determined_by_the_rng():
    a, b, c = jobmix.mix_200(_rng(1)), jobmix.mix_200(_rng(1)), jobmix.mix_200(_rng(2))
    assert a == b and a != c
