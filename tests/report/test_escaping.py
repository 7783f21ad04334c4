"""Model text is untrusted: a reply containing <script> renders as text, never as markup."""

import sys
from pathlib import Path
from types import SimpleNamespace

from memlens.report.html import page, table_html, validity_html
from memlens.report.trajectory import aligned_rows, viewer_html
from memlens.rowkeys import join_key

sys.path.insert(0, str(Path(__file__).parents[1]))
from typed_stats import audit_stats  # noqa: E402

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def fixture_rows():
    steps = [
        {"id": "q|c|0", "steps": ["Think about cost.", EVIL], "question_text": "Which & why?",
         "stimulus_text": ""},
        {"id": "q|p|0", "steps": [EVIL, "Think about cost."], "question_text": "Which & why?",
         "stimulus_text": "I am <b>72</b>."},
    ]
    labels = [{"id": "q|c|0", "labels": ["practical.cost", "social.care"]},
              {"id": "q|p|0", "labels": ["social.care", "practical.cost"]}]
    drift = [{"id": "q|p|0", "baseline_id": "q|c|0", "question_id": "q",
              "stimulus_id": "persona/<age>/1", "sample": 0, "dtw": 1.0, "sri": 0.5}]
    return drift, steps, labels


def test_viewer_escapes_model_and_data_text():
    drift, steps, labels = fixture_rows()
    html = viewer_html(drift, steps, labels)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "I am &lt;b&gt;72&lt;/b&gt;." in html and "persona/&lt;age&gt;/1" in html
    assert html.count('class="mismatch"') == 2  # cost/care vs care/cost: both rows differ
    # the page's only script is the viewer's own
    full = page("t", [("viewer", html)], "")
    assert full.count("<script>") == 1


def test_tables_and_verdict_escape():
    import pandas as pd

    assert "&lt;script&gt;" in table_html(pd.DataFrame({"text": [EVIL]}))
    def evil(data):
        data["validity"].update(verdict="pass", explanation=EVIL)
        data["validity"]["checks"][0]["detail"] = EVIL

    html = validity_html(audit_stats(evil), None)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "instrument validity</abbr></a>: <b>pass</b>" in html
    assert html.count("&lt;script&gt;") == 2

    def failed(data):
        data["validity"].update(verdict="fail", explanation="")

    assert "not interpretable" in validity_html(audit_stats(failed), None)


def test_alignment_rows_follow_dtw_path():
    base = [(1, "A", "a1"), (2, "B", "b1"), (3, "C", "c1")]
    other = [(1, "A", "a2"), (2, "C", "c2")]
    rows = aligned_rows(base, other)
    assert [(b[0], o[0], mismatch) for b, o, mismatch, _ in rows] == [
        (1, 1, False), (2, 1, True), (3, 2, False)]
    assert rows[1][3] == (False, True)  # perturbed step 1 aligned again


def test_comparison_page_escapes_run_labels(tmp_path, monkeypatch):
    import pandas as pd

    from memlens.report.compare import compare_runs

    def evil(data):
        data["validity"].update(verdict="pass", persona_interpretable=True, explanation=EVIL)

    stats = audit_stats(evil)
    rows = [{"question_id": f"q{q}", "condition_class": klass, "category": category,
             "stimulus_id": f"{klass}/{category}", "sample": 0, "dtw": 0.1 * q + 0.05 * k,
             "n_baselines": 1}
            for q in range(4) for k, (klass, category) in enumerate(
                [("control", "no_perturbation"), ("noise", "filler"), ("noise", "whitespace"),
                 ("persona", EVIL + r" $\frac{$")])]  # "$" would start mathtext
    frame = pd.DataFrame(rows)
    config = SimpleNamespace(baselines=1, ontology=None)
    steps = ["social.relationships_care", "practical.resources_cost"]
    pairs = tuple({"response_id": join_key(r["question_id"], r["stimulus_id"], 0),
                   "question_id": r["question_id"], "category": r["category"],
                   "condition_class": r["condition_class"], "baseline_symbols": steps,
                   "compared_symbols": steps[::-1] if k % 2 else steps}
                  for k, r in enumerate(rows))  # the direction table shows the EVIL category
    runs = {name: SimpleNamespace(manifest={"model": model, "labeler": "embedded"}, stats=stats,
                                  stats_error=None, frame=frame, config=config, pairs=pairs)
            for name, model in (("a", EVIL), ("b", "fake"))}
    monkeypatch.setattr("memlens.report.compare.load_audit_run", lambda run_dir: runs[run_dir.name])
    compare_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_bootstrap=200)
    html = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    direction = html[html.index("Direction profile"):].split("</table>")[0]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in direction


def test_explaining_parts_escape(tmp_path):
    """The opening paragraphs (category names come from a user's stimuli file, the labeler
    string from the command line), the glossary's headers and hover notes, the data-quality
    items and the banner escape what they insert."""
    import pandas as pd

    from memlens.report.glossary import header_cell
    from memlens.report.html import invalid_banner, quality_html
    from memlens.report.intro import intro_html

    steps = [{"question_id": "q1", "condition_class": klass, "category": category}
             for klass, category in (("control", "no_perturbation"), ("persona", EVIL),
                                     ("life_event", "job_loss"), (EVIL, "x"))]
    run = SimpleNamespace(
        config=SimpleNamespace(samples=1, mode="prefix", baselines=1, labeler=EVIL),
        manifest={"labeler": "openai:" + EVIL}, quality={"responses": 4, "failed_calls": 0,
                                                         "drift_rows": 3},
        steps=steps, stats=None, stats_error=EVIL)
    html = intro_html(run)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert html.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") == 4
    for part in (header_cell(EVIL), quality_html({EVIL: 3, "steps": EVIL}),
                 invalid_banner(False, EVIL), table_html(pd.DataFrame({EVIL: ["a" * 200 + EVIL]}))):
        assert "<script>alert" not in part and "<img src=x" not in part, part
        assert "&lt;script&gt;" in part, part
