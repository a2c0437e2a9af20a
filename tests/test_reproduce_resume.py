"""`vcloud reproduce --out DIR` resumes like a sweep: entries measured in DIR under the same configuration are
reused, the others (never measured, measured under another configuration, or lost to a failure) measured."""

import json

import pytest

from scenarios import plots, reproduce
from scenarios.cli import main
from scenarios.reproduce import Entry


def _three_real_entries(monkeypatch) -> None:
    """FlexSlot Figs 3, 4 and 6: three entries on the same two quick runs (static and DRS)."""
    monkeypatch.setattr(reproduce, "ENTRIES", reproduce.ENTRIES[:3])


def _counting_run(monkeypatch) -> list[tuple]:
    calls = []
    real = reproduce.run

    def run(scenario, seed, settings, *pilot_loads):
        calls.append((scenario, seed, settings))
        return real(scenario, seed, settings, *pilot_loads)

    monkeypatch.setattr(reproduce, "run", run)
    return calls


def _cheap_entries(monkeypatch, fail_at: int | None = None) -> list[int]:
    """Three entries that run nothing (a constant and a blank plot); the list records which were measured."""
    measured: list[int] = []

    def measure_of(n: int):
        def measure(runs):
            if n == fail_at:
                raise RuntimeError(f"entry {n} broke")
            measured.append(n)
            return f"value {n} ({'quick' if runs.quick else 'full'})", True, plots.new_figure(2, 2)

        return measure

    entries = [Entry(f"figure {n}", f"paper {n}", measure_of(n)) for n in (1, 2, 3)]
    monkeypatch.setattr(reproduce, "ENTRIES", entries)
    return measured


def test_a_second_reproduce_into_the_same_dir_runs_nothing_and_writes_the_same_report(tmp_path, monkeypatch):
    _three_real_entries(monkeypatch)
    calls = _counting_run(monkeypatch)
    assert main(["reproduce", "--out", str(tmp_path), "--quick", "--processes", "1"]) == 0
    assert len(calls) == 2  # static and DRS, shared by the three entries: the counter sees runs
    first = (tmp_path / "report.md").read_text()
    assert sorted(p.name for p in (tmp_path / "entries").iterdir()) == ["01.json", "02.json", "03.json"]

    def refuse(*args, **kwargs):
        raise AssertionError("a measured entry was run again")

    monkeypatch.setattr(reproduce, "run", refuse)
    monkeypatch.setattr(reproduce, "_backend", refuse)  # not even a worker pool is started
    (tmp_path / "report.md").unlink()
    assert main(["reproduce", "--out", str(tmp_path), "--quick", "--processes", "2"]) == 0
    assert (tmp_path / "report.md").read_text() == first
    assert first.count("| yes |") + first.count("| no |") == 3


def test_a_row_of_another_configuration_is_measured_again(tmp_path, monkeypatch, capsys):
    measured = _cheap_entries(monkeypatch)
    reproduce.reproduce(tmp_path, quick=True, progress=False)
    assert sorted(measured) == [1, 2, 3]
    stored = json.loads((tmp_path / "entries" / "02.json").read_text())
    stored["key"]["quick"] = False  # as a full-scale report would have left it
    stored["row"]["emulator"] = "value 2 (full)"
    (tmp_path / "entries" / "02.json").write_text(json.dumps(stored))
    capsys.readouterr()

    measured.clear()
    report = reproduce.reproduce(tmp_path, quick=True, progress=False).read_text()
    assert measured == [2]
    assert "value 2 (quick)" in report and "value 2 (full)" not in report
    note = capsys.readouterr().err
    assert note.count("\n") == 1 and "02.json" in note and "measured full scale" in note

    measured.clear()  # a full-scale report into a quick report's DIR measures everything again
    report = reproduce.reproduce(tmp_path, quick=False, progress=False).read_text()
    assert sorted(measured) == [1, 2, 3]
    assert "full scale" in report and "(quick)" not in report
    assert capsys.readouterr().err.count("measuring it again") == 3


@pytest.mark.parametrize("processes", [1, 2])
def test_a_failed_report_keeps_the_finished_rows_and_the_rerun_measures_the_rest(tmp_path, monkeypatch, processes):
    measured = _cheap_entries(monkeypatch, fail_at=2)
    with pytest.raises(RuntimeError, match="entry 2 broke"):
        reproduce.reproduce(tmp_path, quick=True, progress=False, processes=processes)
    kept = sorted(p.name for p in (tmp_path / "entries").iterdir())
    # one after another, the failure stops the report; in parallel the other entries finish and are kept
    assert kept == (["01.json"] if processes == 1 else ["01.json", "03.json"])
    assert not (tmp_path / "report.md").exists()
    assert not [p for p in tmp_path.rglob(".*")]  # no temporary file left half-written
    first = list(measured)

    measured = _cheap_entries(monkeypatch)
    report = reproduce.reproduce(tmp_path, quick=True, progress=False, processes=processes).read_text()
    assert sorted(first + measured) == [1, 2, 3]  # each entry measured once over the two runs
    assert measured == ([2, 3] if processes == 1 else [2])
    assert all(f"value {n} (quick)" in report for n in (1, 2, 3))


def test_ctrl_c_keeps_the_finished_rows_and_says_so(tmp_path, monkeypatch, capsys):
    _cheap_entries(monkeypatch)

    def interrupted(runs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduce.ENTRIES[1], "measure", interrupted)
    assert main(["reproduce", "--out", str(tmp_path), "--quick", "--processes", "1"]) == 130
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["01.json", "01.png", "entries"]
    assert "the same command measures the rest" in capsys.readouterr().err
