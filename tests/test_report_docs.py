"""The results pages' current tables are generated from the full report's rows (docs/report-rows.json,
`python -m scenarios.report_docs`), so editing a page's table or the rows alone fails here; a quick report says,
row by row, where the full report answers "same direction" otherwise."""

import json
import shutil

import pytest

from scenarios import plots, report_docs, reproduce
from scenarios.report_docs import PAGES, block_in, committed_rows, render, stale, update
from scenarios.report_rows import RowStore, row_key


def _report(rows, quick=False, commit="0123456789abcdef0123456789abcdef01234567"):
    return {"quick": quick, "seed": 1, "command": "vcloud reproduce --out DIR", "date": "2026-12-07",
            "written_by": {"vcloud_version": "0.1", "git_commit": commit},
            "rows": [{"n": n, "figure": f, "paper": p, "emulator": e, "same direction": s, "measured_by": commit}
                     for n, (f, p, e, s) in enumerate(rows, start=1)]}  # fmt: skip


HAND_MADE = _report([
    ("SAMR Fig 9: Sort on slow and fast nodes", "SAMR ~24 % shorter", "hadoop 348 s; samr 348 s | tie", "no"),
    ("FlexSlot Fig 3: map runtimes", "DRS skews more", "skewness 1.96 -> 1.84", "no"),
])  # fmt: skip


def test_each_results_page_holds_the_committed_rows_table():
    report = committed_rows()
    assert report is not None and not report["quick"], "docs/report-rows.json must be a full report's rows"
    for name, (page, _) in PAGES.items():
        text = (report_docs.DOCS / page).read_text()
        assert block_in(text, name) == render(name, report), (
            f"docs/{page}'s table is not docs/report-rows.json's: run `python -m scenarios.report_docs DIR` on a "
            "full `vcloud reproduce --out DIR` rather than editing either by hand"
        )
    assert report_docs.main(["--check"]) == 0


def test_the_committed_rows_are_every_entry_of_the_report_in_order():
    """A new or renamed entry needs a full report before the pages can show it."""
    report = committed_rows()
    assert [row["figure"] for row in report["rows"]] == [entry.figure for entry in reproduce.ENTRIES]
    assert [row["paper"] for row in report["rows"]] == [entry.paper for entry in reproduce.ENTRIES]
    assert all(row["same direction"] in ("yes", "no") for row in report["rows"])
    for entry in reproduce.ENTRIES:
        assert report_docs.block_of(entry.figure) in PAGES


def test_the_renderer_on_a_hand_made_report():
    block = render("samr", HAND_MADE)
    lines = block.splitlines()
    assert lines[0] == "<!-- report:samr begin -->" and lines[-1] == "<!-- report:samr end -->"
    assert "commit `0123456`, 2026-12-07" in block and "(full scale, seed 1)" in block
    assert "| figure | paper | emulator | same direction |" in lines
    # one row, this page's; a '|' inside a cell is escaped so the table keeps its columns
    assert [line for line in lines if line.startswith("| SAMR")] == [
        "| SAMR Fig 9: Sort on slow and fast nodes | SAMR ~24 % shorter | hadoop 348 s; samr 348 s \\| tie | no |"
    ]
    assert "FlexSlot" not in block
    assert "(no row of this report)" in render("delay", HAND_MADE)
    unknown = {**HAND_MADE, "rows": [{**HAND_MADE["rows"][0], "measured_by": None}]}
    assert "commit `unknown`" in render("samr", unknown)


def test_update_rewrites_only_the_blocks_and_check_sees_a_hand_edit(tmp_path):
    for page, _ in PAGES.values():
        shutil.copy(report_docs.DOCS / page, tmp_path / page)
    before = (tmp_path / "results-samr.md").read_text()
    changed = update(HAND_MADE, tmp_path)
    assert tmp_path / "results-samr.md" in changed
    after = (tmp_path / "results-samr.md").read_text()
    outside = before.replace(block_in(before, "samr"), "")
    assert after.replace(block_in(after, "samr"), "") == outside  # the prose around the block is left alone
    assert stale(HAND_MADE, tmp_path) == [] and update(HAND_MADE, tmp_path) == []
    (tmp_path / "results-samr.md").write_text(after.replace("| no |", "| yes |"))
    assert stale(HAND_MADE, tmp_path) == ["results-samr.md"]
    (tmp_path / "results-delay.md").write_text("# no markers\n")
    with pytest.raises(ValueError, match=r"results-delay\.md has no <!-- report:delay begin"):
        update(HAND_MADE, tmp_path)


def test_report_docs_copies_a_full_reports_rows_and_refuses_a_quick_one(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for page, _ in PAGES.values():
        shutil.copy(report_docs.DOCS / page, docs / page)
    report = tmp_path / "report"
    report.mkdir()
    (report / "rows.json").write_text(json.dumps(HAND_MADE))
    assert report_docs.main([str(report), "--docs", str(docs)]) == 0
    assert json.loads((docs / "report-rows.json").read_text()) == HAND_MADE
    assert report_docs.main(["--check", "--docs", str(docs)]) == 0
    (report / "rows.json").write_text(json.dumps({**HAND_MADE, "quick": True}))
    assert report_docs.main([str(report), "--docs", str(docs)]) == 2
    assert "--quick report" in capsys.readouterr().err


def test_a_quick_report_says_where_the_full_report_answers_otherwise():
    rows = [{"figure": "FlexSlot Fig 3: map runtimes", "paper": "p", "emulator": "e", "same direction": "yes",
             "plot": "![](01.png)"},
            {"figure": "SAMR Fig 9: Sort on slow and fast nodes", "paper": "p", "emulator": "e",
             "same direction": "no", "plot": "![](02.png)"},
            {"figure": "a new entry", "paper": "p", "emulator": "e", "same direction": "no",
             "plot": "![](03.png)"}]  # fmt: skip
    text = reproduce.render(rows, quick=True, seed=1, full=HAND_MADE)
    lines = text.splitlines()
    assert "| figure | paper | emulator | same direction | full scale | plot |" in lines
    assert "| FlexSlot Fig 3: map runtimes | p | e | yes | **differs**: full scale says no | ![](01.png) |" in lines
    assert "| SAMR Fig 9: Sort on slow and fast nodes | p | e | no | as full scale | ![](02.png) |" in lines
    assert "| a new entry | p | e | no | not in the full report | ![](03.png) |" in lines
    assert "commit 0123456" in text
    full = reproduce.render(rows, quick=False, seed=1)
    assert "full scale" in full.splitlines()[0] and "| full scale |" not in full  # a full report has no such column


def test_the_rows_file_lists_each_row_with_the_commit_that_measured_it(tmp_path):
    store = RowStore(tmp_path)
    row = {"figure": "f", "paper": "p", "emulator": "e", "same direction": "yes", "plot": "![](01.png)"}
    store.write(1, row_key(False, 1, "f"), row, plots.new_figure(2, 2))
    written = json.loads(store.write_rows([(1, row)], quick=False, seed=1).read_text())
    assert written["rows"] == [{"n": 1, "figure": "f", "paper": "p", "emulator": "e", "same direction": "yes",
                                "measured_by": written["written_by"]["git_commit"]}]  # fmt: skip
    assert written["command"] == "vcloud reproduce --out DIR" and written["quick"] is False
    assert store.load(1, row_key(False, 1, "f")) == row  # the provenance kept beside the row leaves resuming alone
