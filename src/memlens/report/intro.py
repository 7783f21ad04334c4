"""The report's opening paragraphs: what this run measured, in plain words and its own design
numbers, and what its validity verdict means for the reader.

Built only from what the run stores (its answers, configuration, data quality and verdict); the
verdict's causes and next steps are ``validity.explanation`` (``memlens.stats.validity``),
rendered in the validity section as given. Every inserted value is escaped.
"""

from __future__ import annotations

from collections import defaultdict

from memlens.questions.should_personalize import is_control_question
from memlens.report.glossary import hover
from memlens.report.html import VERDICT_MEANING
from memlens.textsafe import escape_html as escape

MODES = {"prefix": "written before the question in the same message",
         "system": "as a memory block in the system prompt",
         "history": "as an earlier turn of the chat"}
CLASS_WORDS = (("noise", "noise", "content-free noise text", "content-free noise texts"),
               ("persona", "persona", "persona fact", "persona facts"),
               ("life_event", "life_event", "life event", "life events"))


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _names(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(name.replace("_", " ") for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def design_counts(steps: list[dict] | tuple[dict, ...]) -> dict:
    """From the stored answers: benchmark questions, should-personalize questions, no-memory
    answers per question, and the categories of each condition class (sorted)."""
    questions, control_questions = set(), set()
    no_memory: dict[str, int] = defaultdict(int)
    categories: dict[str, set[str]] = defaultdict(set)
    for row in steps:
        question = row["question_id"]
        (control_questions if is_control_question(question) else questions).add(question)
        if row.get("condition_class") == "control":
            no_memory[question] += 1
        else:
            categories[row.get("condition_class", "")].add(row.get("category", ""))
    counts = sorted(set(no_memory.values()))
    return {"questions": len(questions), "control_questions": len(control_questions),
            "no_memory_per_question": counts,
            "categories": {k: sorted(v) for k, v in categories.items()}}


def measured_html(run) -> str:
    """The first paragraph: what was measured (questions, conditions, answers, steps, labels,
    drift and the floor), from ``run``'s own numbers."""
    config, quality = run.config, run.quality
    counts = design_counts(run.steps)
    if not counts["questions"] and not counts["control_questions"]:
        return ('<p class="lead"><b>What is measured.</b> Nothing yet: this run holds no answers '
                "(the audit has not generated any).</p>")
    per_question = counts["no_memory_per_question"]
    baseline_n = ("/".join(str(n) for n in per_question) if per_question else "0")
    cats = counts["categories"]
    kinds = []
    for klass, key, one, many in CLASS_WORDS:
        if cats.get(klass):
            word = one if len(cats[klass]) == 1 else many
            kinds.append(f"{len(cats[klass])} {hover(key, word)} ({escape(_names(cats[klass]))})")
    others = sorted(set(cats) - {k for k, *_ in CLASS_WORDS})
    kinds += [f"{len(cats[k])} {escape(k)} conditions" for k in others]
    conditions = sum(len(v) for v in cats.values())
    samples = f" ({config.samples} samples each)" if config.samples > 1 else ""
    mode = MODES.get(config.mode, f"in {config.mode} mode")
    control_set = (f" Another {_count(counts['control_questions'], 'question', 'questions')} "
                   "from the should-personalize set, where memory should matter, test "
                   f"{hover('selectivity', 'selectivity')}." if counts["control_questions"] else "")
    responses, failed = quality.get("responses", 0), quality.get("failed_calls", 0)
    answered = (f"{responses:,} answers in all"
                + (f" ({_count(failed, 'failed call', 'failed calls')})" if failed else ""))
    floor = ("the drift between the no-memory answers of the same question" if config.baselines > 1
             else "the drift of the extra no-memory samples from the baseline")
    labeler = run.manifest.get("labeler") or config.labeler  # public: read from the manifest
    return (
        '<p class="lead"><b>What was measured.</b> '
        f"{_count(counts['questions'], 'question was', 'questions were')} each answered "
        f"{escape(baseline_n)} time{'s' if per_question != [1] else ''} without any stored facts "
        f"about the user ({hover('baselines', 'no-memory baselines')}, K = {config.baselines}) "
        f"and once{samples} under each of {conditions} stored "
        f"{'memory' if conditions == 1 else 'memories'}, {escape(mode)}: "
        f"{'; '.join(kinds) or 'none yet'} — {answered}.{control_set} "
        f"Each answer was split into {hover('steps', 'reasoning steps')} and the labeler "
        f"<b>{escape(str(labeler))}</b> gave each step a value of the "
        f"{hover('ontology', 'ontology')} (such as safety, cost or fairness). "
        f"{hover('drift', 'Drift')} is how differently those labelled steps are ordered than in "
        f"a no-memory answer to the same question ({hover('dtw', 'DTW')}; 0 = the same values "
        f"in the same order, 1 = nothing aligns; {hover('sri', 'SRI')} also weighs the mix of "
        f"values), measured against the {hover('floor', 'floor')}: {floor}, which is what "
        f"sampling alone produces. {_count(quality.get('drift_rows', 0), 'drift row', 'drift rows')}"
        " enter the statistics.</p>")


def verdict_html(run) -> str:
    """The second paragraph: what the validity verdict means, in plain words (the audit ran —
    how many calls answered — and what the verdict allows the reader to conclude)."""
    stats = run.stats
    responses, failed = run.quality.get("responses", 0), run.quality.get("failed_calls", 0)
    ran = (f"The audit itself ran: {responses - failed:,} of {responses:,} calls answered."
           if responses else "")
    if not stats:
        return (f'<p class="lead"><b>What the verdict means.</b> No verdict yet: '
                f"{escape(run.stats_error or 'no statistics were computed')}. {ran}</p>")
    verdict = stats.validity.verdict
    meaning = VERDICT_MEANING.get(verdict, "the verdict is not one memlens knows; read the "
                                           "checks below.")
    return ('<p class="lead"><b>What the verdict means.</b> '
            f"{hover('validity', 'Instrument validity')} checks the measuring instrument — the "
            "model, the labeler and this design together — on this run: content-free noise must "
            "leave drift at the floor, life events (which should change reasoning) must raise "
            f"it, and DTW and SRI must agree. It is not a test of whether the audit worked. {ran} "
            f"Verdict <b>{escape(verdict)}</b>: {escape(meaning)} The validity section below "
            "says which check decided it and what to do next.</p>")


def intro_html(run) -> str:
    """Both opening paragraphs."""
    return measured_html(run) + verdict_html(run)
