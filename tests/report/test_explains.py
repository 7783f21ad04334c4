"""The report explains itself (issue 25): a first paragraph from the run's own design numbers,
a glossary entry (hover note + docs link) for every column header and term, the
not-interpretable banner on every section it applies to, counts as integers, wide tables in a
scrolling container.

One real audit (loopback server, scripted replies and labels, should-personalize control set and
memory sets on) whose benchmark answers never drift: the life events cannot pass the
sensitivity check, so its instrument is not valid and every persona section must say so.
"""

import re
import sys
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlens.audit import build_config, run_audit
from memlens.models.loopback import LoopbackServer
from memlens.questions.should_personalize import load_should_personalize
from memlens.report import build_report
from memlens.report.build import PERSONA_COLUMNS
from memlens.report.glossary import TERMS, column_note, quality_note
from memlens.report.html import fmt, quality_html, table_html
from memlens.report.selectivity import selectivity_table
from memlens.stats.memory_sets import MemorySets, memory_set_tables
from memlens.stats.selectivity import Selectivity

sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import scripted  # noqa: E402

ROOT = Path(__file__).parents[2]
CONTROL_TEXTS = {q.text for q in load_should_personalize()}
PERSONA_SECTIONS = ("Persona drift", "All categories", "How reasoning drifts: direction",
                    "Substitutions along", "Answer drift beside", "Value contrasts",
                    "What changed", "Selectivity", "Memory sets", "Mixed-effects model",
                    "All category statistics")
"""Sections that show persona results: each must open with the banner on an invalid run."""


def _responder():
    """Drift (another step sequence) only on should-personalize questions with a memory."""
    labeler = scripted.make_responder(0)
    memories = [s["text"] for s in scripted.STIMULI if s["class"] in ("persona", "life_event")]

    def responder(request: dict):
        if request.get("model") == "labeler":
            return labeler(request)
        prompt = request["messages"][-1]["content"]
        drift = any(m in prompt for m in memories) and any(t in prompt for t in CONTROL_TEXTS)
        return scripted.reply_for("EEDDE" if drift else "ABCD")

    return responder


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("explains")
    questions, stimuli = scripted.write_inputs(directory)
    with LoopbackServer(responder=_responder()) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 5, "n_bootstrap": 200, "max_tokens": 64,
            "baselines": 2, "control_set": "should-personalize",
            "memory_sets": ["among_neutral", "combined"], "neutral_facts": 3})
        result = run_audit(config, directory / "run", progress=False)
    assert not result.stats.validity.persona_interpretable  # the premise of the banner tests
    html = build_report(directory / "run").read_text(encoding="utf-8")
    return result, html


def _sections(html: str) -> dict[str, str]:
    """Heading text -> the section's html (up to the next h2)."""
    parts = re.split(r'<h2 id="s\d+">', html)[1:]
    return {unescape(part.split("</h2>", 1)[0]): part.split("</h2>", 1)[1] for part in parts}


@pytest.mark.slow  # one real loopback audit (~20 s on a loaded machine), shared
def test_first_paragraph_states_the_design_in_plain_words(report):
    result, html = report
    lead = unescape(re.sub(r"<[^>]+>", "", html.split('<p class="lead">')[1].split("</p>")[0]))
    # 4 benchmark questions, K = 2 no-memory answers each; 3 noise, 2 persona, 1 life event
    assert lead.startswith("What was measured. 4 questions were each answered 2 times without "
                           "any stored facts about the user (no-memory baselines, K = 2)")
    assert "3 content-free noise texts (filler, punctuation, whitespace)" in lead
    assert "2 persona facts (age, gender)" in lead and "1 life event (bereavement)" in lead
    assert f"{result.quality['responses']} answers in all" in lead
    assert "Another 14 questions from the should-personalize set" in lead
    assert f"{result.quality['drift_rows']} drift rows enter the statistics" in lead
    verdict = result.stats.validity.verdict
    meaning = unescape(re.sub(r"<[^>]+>", "", html.split('<p class="lead">')[2].split("</p>")[0]))
    assert f"Verdict {verdict}:" in meaning and "not interpretable" in meaning
    assert "It is not a test of whether the audit worked" in meaning
    answered = result.quality["responses"] - result.quality["failed_calls"]
    assert f"{answered} of {result.quality['responses']} calls answered" in meaning
    # the verdict's causes are the statistics' own text, rendered as given
    assert html.count(result.stats.validity.explanation.split(".")[0]) >= 1


@pytest.mark.slow  # one real loopback audit (~20 s on a loaded machine), shared
def test_every_column_header_has_a_glossary_note(report):
    _, html = report
    sections = _sections(html)
    for heading, section in sections.items():
        if heading == "Trajectory viewer":  # side-by-side steps, headed by the pair itself
            continue
        for header in re.findall(r"<th[^>]*>(.*?)</th>", section):
            assert '<abbr title="' in header, (heading, header, "add it to report/glossary.py")
    # every hover link lands on an entry of this page's glossary, every entry links to the docs
    glossary = sections["Glossary"]
    for key in set(re.findall(r'href="#g-([a-z_]+)"', html)):
        assert f'<dt id="g-{key}">' in glossary, key
    assert glossary.count("<dt") == glossary.count('<a href="docs/')
    for key in ("dtw", "sri", "d_rel", "elevation", "floor", "noise", "baselines", "q", "p", "ci",
                "cohen_d", "letters", "mde", "power", "persona", "life_event", "control",
                "not_interpretable", "selectivity", "memory_sets"):
        assert f'<dt id="g-{key}">' in glossary, key


def test_columns_of_every_report_table_are_in_the_glossary():
    """Tables this run does not show too: selectivity, memory sets, orthogonality, the
    category, persona and mixed-model tables (their CSV column names)."""
    entry = {"mean": 0.1, "ci": [0.0, 0.2], "n_questions": 4, "n_rows": 8}
    compared = {"verdict": "selective", "reason": "r", "relevant": entry, "irrelevant": entry,
                "selectivity": entry}
    settings = {"metric": "dtw", "n_bootstrap": 100, "seed": 0, "min_questions": 3}
    sel = Selectivity.from_dict(settings | {
        "min_effect": 0.01, "min_effect_pct": 10.0, "categories": {"age": compared},
        "overall": compared, "rows_without_floor": 0, "unmatched_categories": []})
    value = {"mean": 0.1, "ci": [0.0, 0.2]}
    sets = MemorySets.from_dict(settings | {
        "neutral_set": value | {"n_questions": 4},
        "among_neutral": {"age": {"verdict": "diluted", "n_questions": 4, "alone": value,
                                  "among_neutral": value, "net": value, "difference": value}},
        "combined": {"age+gender": {"verdict": "no clear difference", "n_questions": 4,
                                    "combined": value, "age": value, "gender": value,
                                    "stronger_alone": "age", "difference": value}}})
    among, pairs = memory_set_tables(sets)
    columns = [*selectivity_table(sel).columns, *among[0], *pairs[0], *PERSONA_COLUMNS,
               "interpretable", "condition_class", "sd", "d_rel_p", "elevation_ci_low",
               "elevation_ci_high", "term", "estimate", "se", "ci_low", "ci_high", "p_value",
               "question_id", "question", "stimulus_id", "stimulus", "confidence", "rationale",
               "drift_rows_excluded", "item", "count"]
    missing = [column for column in columns if column_note(column) is None]
    assert missing == []
    assert column_note("alone (gender)") == ("memory_sets", "Elevation with gender alone, 95 % CI.")
    assert column_note("no such column") is None


def test_glossary_links_point_at_real_docs_sections():
    def slug(heading: str) -> str:  # GitHub's heading anchors
        return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")

    for key, term in TERMS.items():
        path, _, anchor = term.doc.partition("#")
        text = (ROOT / path).read_text(encoding="utf-8")
        anchors = {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
        assert anchor in anchors, (key, term.doc)


@pytest.mark.slow  # one real loopback audit (~20 s on a loaded machine), shared
def test_every_persona_section_carries_the_banner(report):
    result, html = report
    sections = _sections(html)
    verdict = result.stats.validity.verdict
    for prefix in PERSONA_SECTIONS:
        heading = next((h for h in sections if h.startswith(prefix)), None)
        assert heading is not None, prefix
        assert sections[heading].startswith('<p class="warn banner">'), heading
        assert f"(verdict: <b>{verdict}</b>)" in sections[heading].split("</p>")[0], heading
    # the persona table says it row by row, too
    persona = sections["Persona drift (d_rel, 95% cluster-bootstrap CI)"]
    assert persona.count("<td>no (instrument not valid)</td>") == 4  # 2 metrics x age, gender
    assert "<td>yes</td>" not in persona
    # sections without persona results carry no banner
    for heading in ("Instrument validity", "Data quality", "Glossary"):
        assert "warn banner" not in sections[heading], heading


@pytest.mark.slow  # one real loopback audit (~20 s on a loaded machine), shared
def test_counts_are_integers_and_tables_scroll(report):
    result, html = report
    quality = _sections(html)["Data quality"]
    assert f'<td class="n">{result.quality["responses"]}</td>' in quality
    assert not re.search(r'<td class="n">\d+\.000</td>', quality)
    assert "<abbr title=\"Answers stored" in quality  # the items say what they count
    every = _sections(html)["All category statistics"]
    assert every.startswith('<p class="warn banner">') and '<div class="scroll"><table>' in every
    assert re.findall(r"<th>.*?d_rel_ci_low", every)
    # a float column of counts (a NaN made pandas store it as float) still prints integers
    frame = pd.DataFrame({"category": ["a", "b"], "n": [16.0, np.nan], "mean": [16.0, 0.25],
                          "n_questions": np.array([4, 5], dtype=np.int64)})
    table = table_html(frame)
    assert '<td class="n">16</td><td class="n">16.000</td><td class="n">4</td>' in table
    assert "16.000</td><td class=\"n\">4" in table and fmt(np.int64(7)) == "7"
    assert quality_html({"steps": 124, "mean_dtw": 0.25}).count('<td class="n">124</td>') == 1


def test_long_cells_are_cut_with_the_full_text_on_hover():
    text = "word " * 100 + "<script>alert(1)</script>"
    table = table_html(pd.DataFrame({"rationale": [text]}))
    cell = re.search(r"<td title=\"([^\"]*)\">([^<]*)</td>", table)
    assert cell, table
    assert unescape(cell.group(1)) == text  # the whole text, escaped, on hover
    assert unescape(cell.group(2)).startswith("word word") and "[truncated, 525 characters" in \
        unescape(cell.group(2))
    assert "<script>" not in table


def test_quality_items_are_explained():
    assert quality_note("step_split_tagged") == "Answers split by the 'tagged' method."
    assert quality_note("floor_same_split_pairs") == (
        "Floor (no-memory pairs): Drift pairs whose two answers were split by the same method.")
    assert quality_note("unknown_item") == ""


def test_any_page_with_hover_notes_gets_its_glossary():
    """compare.html and other pages built with ``page`` list the entries their notes link to."""
    from memlens.report.html import page

    html = page("t", [("Table", table_html(pd.DataFrame({"d_rel": [0.5], "letters": ["a"]})))],
                "")
    glossary = _sections(html)["Glossary"]
    assert '<dt id="g-d_rel">' in glossary and '<dt id="g-letters">' in glossary
    assert page("t", [("Plain", "<p>x</p>")], "").count("Glossary") == 0
