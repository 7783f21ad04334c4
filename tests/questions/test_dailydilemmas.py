"""DailyDilemmas (Chiu et al. 2024, CC BY 4.0) through the question pipeline: the shipped
40-row excerpt read by the ``dailydilemmas`` preset, the keyword rules with per-rule counts
(checked by hand against the rows), the rater on a subset, the human round trip."""

import csv
import json
from pathlib import Path

import pytest

from memlens.models import FakeModel
from memlens.questions.filtering import PROPERTIES, filter_candidates
from memlens.questions.filtering.annotation import export_for_annotation
from memlens.questions.source_presets import load_preset_candidates

EXCERPT = Path(__file__).resolve().parents[2] / "src/memlens/data/real/daily_dilemmas"
FULL = Path(__file__).resolve().parents[3] / "shared/real_data/daily_dilemmas"
NO_KEEP_SIGNAL = [1, 3, 4, 15, 21, 29, 32, 38]
"""Rows of the excerpt whose question has no keep-signal cue: 'Do you risk …?', 'Is it ethical
to …?', 'Would you continue …?' (none says 'should', 'is it fair', 'vs', 'what if', …)."""


def candidates():
    return load_preset_candidates(EXCERPT / "dilemma.csv", "dailydilemmas")


def test_excerpt_reads_with_provenance():
    rows = candidates()
    assert len(rows) == 40 and rows[0].row_index == 0
    assert rows[0].text.startswith("You're a project manager in a marketing firm.")
    assert rows[0].license.startswith("CC-BY-4.0") and rows[0].extra["preset"] == "dailydilemmas"
    assert "Attribution 4.0 International" in (EXCERPT / "LICENSE").read_text()


@pytest.mark.skipif(not FULL.is_dir(), reason="no ../shared/real_data (a fresh clone)")
def test_excerpt_is_a_byte_prefix_of_the_full_file():
    full = (FULL / "data" / "dilemma.csv").read_bytes()
    excerpt = (EXCERPT / "dilemma.csv").read_bytes()
    assert full.startswith(excerpt) and excerpt.count(b"\n") == 41
    assert (FULL / "LICENSE").read_bytes() == (EXCERPT / "LICENSE").read_bytes()
    assert len(load_preset_candidates(FULL / "data" / "dilemma.csv", "dailydilemmas")) == 1360


def test_keyword_stage_counts_per_rule():
    result = filter_candidates(candidates())
    assert result.counts == {"read": 40, "keyword_kept": 27}
    rules = result.rules
    assert rules["no_keep_signal"] == {"dropped": len(NO_KEEP_SIGNAL)}
    assert rules["keep:advice_decision"] == {"hit": 40 - len(NO_KEEP_SIGNAL), "kept": 27}
    # 32 with a keep-signal, 27 kept: 5 dropped by a cue (3 medical, 2 job lookup)
    assert rules["drop:medical"]["decisive"] + rules["drop:job_lookup"]["decisive"] == 5
    kept_rows = {row["row_index"] for row in result.survivors}
    assert not kept_rows & set(NO_KEEP_SIGNAL)
    assert "keep:advice_decision        matched 32/40 (80.0 %), kept 27" in result.rule_summary()


def test_rater_on_a_subset_then_the_human_round_trip(tmp_path):
    def rater(messages, params):
        keep = "colleague" not in messages[-1]["content"]
        return json.dumps({name: keep for name in PROPERTIES} | {"rationale": "r"})

    model = FakeModel(rater)
    result = filter_candidates(candidates(), model=model, rater_limit=5)
    assert len(model.calls) == 5
    # the first five kept rows are 0, 2, 5, 6, 7; rows 0 and 6 mention a colleague
    assert result.counts == {"read": 40, "keyword_kept": 27, "rated": 5, "rater_kept": 3}
    assert [s["row_index"] for s in result.survivors] == [2, 5, 7]
    sheet = tmp_path / "sheet.csv"
    assert export_for_annotation(result.survivors, sheet) == 3
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert [r["id"] for r in rows] == [s["id"] for s in result.survivors]
    assert rows[0]["source"] == "dailydilemmas" and rows[0]["rater_1"] == ""


def test_cli_counts_and_rater_limit_needs_a_rater(tmp_path, capsys):
    from memlens.cli.main import main

    out = tmp_path / "kept.jsonl"
    assert main(["questions", "filter", str(EXCERPT / "dilemma.csv"), "--source-preset",
                 "dailydilemmas", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "keyword_kept       27" in printed and "no_keep_signal" in printed
    assert len(out.read_text().splitlines()) == 27
    assert main(["questions", "filter", str(EXCERPT / "dilemma.csv"), "--source-preset",
                 "dailydilemmas", "--rater-limit", "3", "--out", str(out)]) == 2
    assert "memlens: error: --rater-limit limits the rater" in capsys.readouterr().err
