"""Bidi overrides and control characters from user files / model output are shown as visible
escapes in the terminal and in report.html, never passed raw."""

import json

import pandas as pd

from memlens.cli.main import main
from memlens.report.html import table_html
from memlens.report.trajectory import pair_html
from memlens.textsafe import escape_html, for_terminal, neutralise

RAW = ["\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\x1b", "\x00", "\r", "\x85",
       "\x7f"]


def test_neutralise_hand_checked():
    assert neutralise("a\u202eb\x1b[31mc\r\n\td") == "a\\u202eb\\u001b[31mc\\u000d\n\td"
    assert for_terminal(3) == "3" and neutralise("plain ünïcode") == "plain ünïcode"
    assert escape_html('<x a="\u2067">') == "&lt;x a=&quot;\\u2067&quot;&gt;"
    # inside JSON the visible escape decodes back to the same character
    assert json.loads(neutralise(json.dumps({"t": "x\u202ey\x85"}, ensure_ascii=False))) == \
        {"t": "x\u202ey\x85"}


def test_questions_list_prints_no_raw_controls(tmp_path, capsys):
    hostile = "money\x1b[2J\x00\rfake\u202eedoc"
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q1", "text": "Rent or buy?", "category": hostile,
                                "subcategory": "sub\u2066x", "source": "t", "license": "CC0"}) + "\n")
    assert main(["questions", "list", "--file", str(path)]) == 0
    assert main(["questions", "list", "--file", str(path), "--format", "jsonl"]) == 0
    out = capsys.readouterr().out
    assert not any(char in out for char in RAW)
    assert "money\\u001b[2J\\u0000\\u000dfake\\u202eedoc" in out
    assert json.loads(out.splitlines()[-1])["category"] == hostile  # JSON output is lossless


def test_report_html_has_no_raw_bidi_or_controls():
    evil = "safe\u202etxt.exe\x1b]0;pwned\x07 <b>"
    table = table_html(pd.DataFrame({"rater": [evil]}))
    steps = {"steps": [evil], "stimulus_text": evil}
    pair = pair_html({"dtw": 0.0, "sri": 0.0, "stimulus_id": evil, "sample": 0}, steps, steps,
                     ["social.harmony"], ["social.harmony"])
    for html in (table, pair):
        assert not any(char in html for char in RAW + ["\x07"]) and "<b>" not in html
        assert "safe\\u202etxt.exe\\u001b]0;pwned\\u0007 &lt;b&gt;" in html


def test_long_step_texts_are_truncated_with_their_length():
    huge = "x" * 10_485_760
    steps = {"steps": [huge, "short", huge], "stimulus_text": ""}
    labels = ["social.harmony"] * 3
    pair = pair_html({"dtw": 0.0, "sri": 0.0, "stimulus_id": "s", "sample": 0}, steps, steps,
                     labels, labels)
    assert "[truncated, 10,485,760 characters in all]" in pair and "short" in pair
    # at most 20,000 characters of one response: 4,000 + 5 shown, the third step 4,000 more
    assert pair.count("x") <= 2 * 20_000 + 100
    assert len(pair) < 30_000
    assert "x" * 4000 in pair and "x" * 4001 not in pair
