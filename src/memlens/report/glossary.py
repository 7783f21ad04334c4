"""The report's glossary: one plain-language entry per term it uses, each linked to the docs
section that defines it, and a hover note for every table column.

``TERMS`` holds the entries (section "Glossary" of the report, anchors ``#g-<key>``);
``COLUMNS`` says which entry explains a column header and how (the hover text); ``column_note``
also explains headers built from a pattern (``alone (age)``, ``relevant_ci``). Links are paths
in the memlens repository (``docs/…``), so the page stays self-contained and opens offline; the
anchors are GitHub's heading slugs (checked against the docs by ``tests/report``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlens.textsafe import escape_html as escape


@dataclass(frozen=True)
class Term:
    """One glossary entry: its name, a plain definition and the docs section behind it."""

    name: str
    text: str
    doc: str  # "docs/FILE.md#anchor" (a GitHub heading slug)


STATS = "docs/statistics.md#what-is-computed-per-metric"
BOOT = "docs/statistics.md#the-cluster-bootstrap"
VALIDITY = "docs/statistics.md#convergence-and-the-validity-verdict"
DESIGN = "docs/audit.md#design-and-what-each-stage-stores"
STIMULI = "docs/content.md#memory-stimuli-memlensstimuli"
HOW = "docs/how-drift.md"

_ENTRIES = [
    ("drift", Term("Drift", "How differently an answer with a stored memory reasons than a "
                   "no-memory answer to the same question: both answers are split into reasoning "
                   "steps, each step is labelled with a value of the ontology, and the two "
                   "sequences of values are compared (DTW, SRI). 0 = same values in the same "
                   "order.", "docs/metrics.md#pair-forms")),
    ("dtw", Term("DTW", "Dynamic time warping distance between the two sequences of step values: "
                 "the cheapest alignment of the steps, one unit per mismatched step, divided by "
                 "the longer length. 0 = identical order, 1 = no step matches.",
                 "docs/metrics.md#pair-forms")),
    ("sri", Term("SRI", "Sequence-robustness index: half the normalised edit distance of the two "
                 "value sequences (order) plus half the Jensen–Shannon distance of their value "
                 "histograms (mix). 0 = same, 1 = nothing shared; 1 − SRI is the robustness.",
                 "docs/metrics.md#pair-forms")),
    ("floor", Term("Floor", "The drift between two no-memory answers to the same question "
                   "(category no_perturbation): what sampling alone produces. Every elevation is "
                   "measured against it.", STATS)),
    ("baselines", Term("K (baselines)", "How many no-memory answers each question gets. Every "
                       "memory answer's drift is its mean over the K baselines, and the floor is "
                       "the drift among them; more baselines remove error every category would "
                       "otherwise share with the floor.",
                       "docs/statistics.md#convergence-and-the-validity-verdict")),
    ("control", Term("Control", "The no-memory condition (category no_perturbation): the "
                     "baselines and the floor.", STIMULI)),
    ("noise", Term("Pragmatic noise", "Memories without content (filler words, whitespace, "
                   "punctuation): they must not move reasoning. They are the reference of d_rel "
                   "and the specificity check.", STIMULI)),
    ("persona", Term("Persona", "A stored fact about who the user is (age, gender, disability, "
                     "occupation, income…) on questions where it should not matter: what the "
                     "audit is for.", STIMULI)),
    ("life_event", Term("Life event", "A stored fact about something that happened to the user "
                        "(bereavement, serious illness, job loss): it should move reasoning, so it "
                        "is the positive control of the sensitivity check.", STIMULI)),
    ("condition_class", Term("Condition class", "control, noise, persona or life_event: the kind "
                             "of memory a category belongs to.", STIMULI)),
    ("category", Term("Category", "One kind of memory within a class (age, filler, bereavement…); "
                      "statistics are per category.", STIMULI)),
    ("elevation", Term("Elevation", "How much higher a category's mean drift is than the floor, "
                       "in % of the floor: 100·(mean − floor)/floor. Its p-value is a paired t-test "
                       "over questions.", STATS)),
    ("d_rel", Term("d_rel", "Relative drift: (mean drift of the category − mean drift of the "
                   "pragmatic noise) / SD of the noise. 0 = drifts like content-free noise; "
                   "1 = one noise SD more.", STATS)),
    ("ci", Term("CI", "95 % confidence interval from a cluster bootstrap: questions are resampled "
                "with replacement (every row of a drawn question comes along), so the interval "
                "counts questions, not rows, as the independent units.", BOOT)),
    ("p", Term("p", "p-value: how often a difference at least this large would appear by chance "
               "if the memory changed nothing. Small = unlikely by chance; it is not the size of "
               "the effect.", STATS)),
    ("q", Term("q / BH", "A p-value corrected for testing many categories at once "
               "(Benjamini–Hochberg): among the results with q ≤ 0.05, at most 5 % are expected "
               "to be false discoveries.", STATS)),
    ("cohen_d", Term("Cohen's d", "The difference between a category's drift and the floor in "
                     "pooled standard deviations (0.2 small, 0.5 medium, 0.8 large).", STATS)),
    ("letters", Term("Compact letters", "Welch tests between every pair of categories, BH "
                     "corrected: categories sharing a letter do not differ at q < 0.05; 'a' is "
                     "the lowest tier.", STATS)),
    ("mde", Term("MDE", "Minimum detectable effect: the smallest effect this run would detect "
                 "with 80 % power at its number of questions and spread.",
                 "docs/statistics.md#planning-power-before-the-run")),
    ("power", Term("Power", "The chance that the run detects an effect of a given size if it is "
                   "there (80 % is the usual target). An underpowered run cannot tell 'no effect' "
                   "from 'too small to see'.", "docs/statistics.md#planning-power-before-the-run")),
    ("validity", Term("Instrument validity", "A check of the measuring instrument (model × "
                      "labeler × design) on this run, not of whether the audit ran: noise must "
                      "not drift (specificity), life events must (sensitivity), DTW and SRI must "
                      "agree (convergence). Only 'pass' makes persona results interpretable.",
                      VALIDITY)),
    ("check", Term("Check", "specificity (noise stays at the floor), sensitivity (life events "
                   "rise above it) or convergence (DTW and SRI rank categories alike); status "
                   "pass, fail, inconclusive (the run cannot decide), floor_unstable or "
                   "skipped.", VALIDITY)),
    ("not_interpretable", Term("Not interpretable", "Shown for diagnosis only: the instrument "
                               "did not pass its validity checks (or a cell rests on too few "
                               "questions), so the number cannot be read as the effect of the "
                               "memory, whatever its q-value.", VALIDITY)),
    ("coverage", Term("Coverage", "Usable drift rows against the planned ones, per class; below "
                      "80 % no verdict is stated.", VALIDITY)),
    ("n", Term("n", "Number of drift rows (answers compared with their baselines) behind a "
               "number; n questions counts the independent units.", STATS)),
    ("mean", Term("Mean, SD", "Mean and standard deviation of the drift rows of a category.",
                  STATS)),
    ("mixed_model", Term("Mixed model", "A regression of drift on category with a random "
                         "intercept per question (statsmodels MixedLM): each term is a "
                         "category's difference from the floor, with SE, CI and p.", STATS)),
    ("ontology", Term("Root, symbol", "The value ontology: 4 roots (Social, Practical, "
                      "Protective, Personal) split into 11 symbols; every reasoning step gets "
                      "one.", "docs/ontology.md#the-bundled-ontology")),
    ("direction", Term("Direction profile", "How the share of each root / symbol among an "
                       "answer's steps changes with the memory, minus the same change between "
                       "no-memory answers; in percentage points (pp).",
                       f"{HOW}#direction-profiles-statsdirection-memlensstatsdirection")),
    ("substitution", Term("Substitution", "Which baseline value the DTW alignment paired with "
                          "which value of the memory answer, as a rate of aligned steps, minus the "
                          "same rate between no-memory answers.",
                          f"{HOW}#substitutions-statssubstitutions-memlensstatssubstitution")),
    ("answer_drift", Term("Answer drift", "Drift of the final answer itself (not the reasoning): "
                          "cosine distance of the answers' MiniLM embeddings, word-length ratio, "
                          "change of hedging and refusal markers.",
                          f"{HOW}#answer-drift-statsanswer-drift-columns-answer_")),
    ("contrast", Term("Value contrast", "Two values of one attribute (a 19- vs a 72-year-old) on "
                      "the same question: does the model reason differently about them, beyond "
                      "the floor?", f"{HOW}#value-contrasts-statscontrasts-memlensstatscontrasts")),
    ("selectivity", Term("Selectivity", "Drift where memory should matter (should-personalize "
                         "questions) minus drift where it should not (the benchmark), per "
                         "attribute; 'selective' is the goal.", "docs/audit.md#usage")),
    ("memory_sets", Term("Memory sets", "The sensitive fact alone vs the same fact among neutral "
                         "facts, and two attributes together vs each alone.",
                         "docs/audit.md#usage")),
    ("orthogonality", Term("Orthogonality filter", "A rater judges whether a memory is relevant "
                           "to a question; relevant pairs are left out of the statistics.",
                           "docs/content.md#orthogonality-is-the-memory-relevant-to-the-question"
                           "-memlensquestionsorthogonality")),
    ("quality", Term("Data quality", "Counts of answers, steps and drift rows, and of what was "
                     "excluded (failed calls, answers without steps, unlabeled steps): nothing is "
                     "dropped silently.",
                     "docs/audit.md#responses-without-steps-unlabeled-steps-failed-calls")),
    ("steps", Term("Step, label", "A reply is split into reasoning steps; the labeler gives each "
                   "step one symbol of the ontology (or 'unlabeled').",
                   "docs/content.md#reasoning-steps-memlenssteps")),
]
TERMS: dict[str, Term] = dict(_ENTRIES)
"""Glossary entries by key, in the order the glossary lists them."""


COLUMNS: dict[str, tuple[str, str]] = {  # header: (glossary key, hover text)
    # validity
    "check": ("check", "Which validity check: specificity, sensitivity or convergence."),
    "metric": ("drift", "The drift metric: dtw or sri."),
    "status": ("check", "pass, fail, inconclusive (the run cannot decide), floor_unstable or "
                 "skipped."),
    "detail": ("check", "The numbers behind the check's status."),
    "questions": ("n", "Questions with both life-event and no-memory answers (the units of "
                    "the paired test)."),
    "minimum detectable elevation": ("mde", "The smallest life-event elevation this run "
                                       "would detect with 80 % power (α = 0.001)."),
    "paper-sized effect": ("power", "The life-event elevation the paper found (Qwen3-4B)."),
    "detectable?": ("power", "Whether the run could detect a paper-sized effect."),
    "questions needed for it": ("power", "Questions the design would need to detect a "
                                  "paper-sized effect at this spread."),
    "questions to plan on (80 % sure)": ("power", "Questions that reach 80 % power in 4 of "
                                           "5 cases however far this run's spread was off "
                                           "(its upper 80 % limit): the number to re-run "
                                           "with."),
    "class": ("condition_class", "control, noise, persona or life_event."),
    "usable of planned": ("coverage", "Usable drift rows of the planned ones."),
    # category statistics
    "category": ("category", "The kind of memory (age, filler, bereavement…)."),
    "condition_class": ("condition_class", "control, noise, persona or life_event."),
    "n": ("n", "Drift rows behind the statistics (one per answer with memory)."),
    "n_questions": ("n", "Questions behind the number (the independent units)."),
    "mean": ("mean", "Mean drift of the category's rows."),
    "sd": ("mean", "Standard deviation of the category's drift rows."),
    "d_rel": ("d_rel", "(mean − noise mean) / noise SD."),
    "d_rel_ci_low": ("ci", "Lower end of the 95 % cluster-bootstrap CI of d_rel."),
    "d_rel_ci_high": ("ci", "Upper end of the 95 % cluster-bootstrap CI of d_rel."),
    "d_rel_p": ("p", "Bootstrap p-value of d_rel (two-sided)."),
    "d_rel_q": ("q", "d_rel's p-value after Benjamini–Hochberg within the class."),
    "cohen_d": ("cohen_d", "Category vs floor in pooled SDs."),
    "letters": ("letters", "Categories sharing a letter do not differ at q < 0.05."),
    "elevation_pct": ("elevation", "% above the floor's mean drift."),
    "elevation_p": ("p", "Paired t-test over questions, category vs floor."),
    "elevation_ci_low": ("ci", "Lower end of the 95 % cluster-bootstrap CI of the elevation."),
    "elevation_ci_high": ("ci", "Upper end of the 95 % cluster-bootstrap CI of the "
                            "elevation."),
    "interpretable": ("not_interpretable", "'no' when the instrument did not pass or too few "
                        "questions back the row."),
    # mixed model
    "term": ("mixed_model", "Intercept (the floor) or a category's difference from it."),
    "estimate": ("mixed_model", "The fitted coefficient, in drift units."),
    "se": ("mixed_model", "Standard error of the estimate."),
    "ci_low": ("ci", "Lower end of the 95 % Wald CI of the estimate."),
    "ci_high": ("ci", "Upper end of the 95 % Wald CI of the estimate."),
    "p_value": ("p", "Wald test of the coefficient against 0."),
    # data quality
    "item": ("quality", "What is counted (hover an item for its meaning)."),
    "count": ("quality", "How many."),
    # how drift
    "level": ("ontology", "root (the 4 roots) or symbol (the 11 symbols)."),
    "symbol": ("ontology", "The root or symbol whose share changed."),
    "baseline share %": ("direction", "Share of the no-memory steps with this value."),
    "net change pp [95% CI]": ("direction", "Change of the share with memory minus the change "
                                 "between no-memory answers, percentage points, 95 % CI."),
    "q": ("q", "Benjamini–Hochberg q-value."),
    "n responses / questions": ("n", "Answers and questions behind the row."),
    "substitution": ("substitution", "baseline value → value in the memory answer."),
    "aligned steps": ("substitution", "DTW path cells behind the rate."),
    "rate % (floor %)": ("substitution", "Share of aligned steps with this substitution, and "
                           "the same between no-memory answers."),
    "net pp [95% CI]": ("substitution", "Rate minus floor rate, percentage points, 95 % CI."),
    "reasoning DTW": ("dtw", "Elevation of reasoning DTW over the floor, 95 % CI, p."),
    "answer cosine distance": ("answer_drift", "Elevation of the final answers' embedding "
                                 "distance over the floor, 95 % CI, p."),
    "answer length ratio": ("answer_drift", "Elevation of the answers' word-length ratio."),
    "hedging change": ("answer_drift", "Change of hedging markers, pp of answers."),
    "refusal change": ("answer_drift", "Change of refusal markers, pp of answers."),
    "reading": ("answer_drift", "Which of reasoning and answer moved (p < 0.05 upwards)."),
    "value A": ("contrast", "One value of the attribute."),
    "value B": ("contrast", "The other value."),
    "pairs / questions": ("contrast", "Answer pairs and questions answered under both values."),
    "DTW A vs B (floor)": ("contrast", "Mean DTW between the two values' answers, and the "
                             "floor's."),
    "difference [95% CI]": ("contrast", "Mean DTW minus the floor, 95 % CI."),
    "reasons differently?": ("contrast", "yes when q ≤ 0.05 and above the floor."),
    "pair": ("drift", "The question, memory and sample of the pair, with its DTW and SRI."),
    "baseline (no memory)": ("steps", "The no-memory answer's steps and their values."),
    "with memory": ("steps", "The memory answer's steps and their values."),
    # selectivity, memory sets, orthogonality
    "verdict": ("selectivity", "selective, over-sensitive, memory-blind, misdirected, unclear, "
                  "inconclusive or not interpretable."),
    "reason": ("selectivity", "Why this verdict."),
    "selectivity": ("selectivity", "Relevant minus irrelevant elevation."),
    "alone": ("memory_sets", "Elevation with the fact alone, 95 % CI."),
    "among_neutral": ("memory_sets", "Elevation with the fact among neutral facts, 95 % CI."),
    "net_of_neutral_set": ("memory_sets", "Among neutral facts minus what the neutral facts "
                             "add alone."),
    "difference": ("memory_sets", "The difference the verdict rests on, 95 % CI."),
    "combined": ("memory_sets", "Elevation with both attributes together, 95 % CI."),
    "stronger_alone": ("memory_sets", "The attribute with the larger effect alone."),
    "question_id": ("orthogonality", "The question of the excluded pair."),
    "question": ("orthogonality", "Its text."),
    "stimulus_id": ("orthogonality", "The memory of the excluded pair."),
    "stimulus": ("orthogonality", "Its text."),
    "confidence": ("orthogonality", "The rater's confidence that the memory is relevant."),
    "rationale": ("orthogonality", "The rater's reason."),
    "drift_rows_excluded": ("orthogonality", "Drift rows left out of the statistics."),
}

_PATTERNS = [
    (re.compile(r"^(ir)?relevant_elevation$"), ("selectivity", "Drift above the floor on the "
                                                 "{0}relevant side.")),
    (re.compile(r"^((ir)?relevant|selectivity)_ci$"), ("ci", "95 % cluster-bootstrap CI.")),
    (re.compile(r"^(ir)?relevant_questions$"), ("n", "Questions on this side.")),
    (re.compile(r"^(ir)?relevant_rows$"), ("n", "Drift rows on this side.")),
    (re.compile(r"^alone \((.+)\)$"), ("memory_sets", "Elevation with {0} alone, 95 % CI.")),
]

QUALITY_ITEMS = {
    "questions": "Questions answered.",
    "responses": "Answers stored (every condition and sample), failed calls included.",
    "failed_calls": "Calls that failed after their retries (re-run the audit to retry them).",
    "responses_without_steps": "Answers with no reasoning step found.",
    "responses_with_steps": "Answers split into at least one step.",
    "steps": "Reasoning steps in all.",
    "unlabeled_steps": "Steps the labeler could not label (left out of the value sequence).",
    "responses_all_steps_unlabeled": "Answers none of whose steps got a label (excluded).",
    "drift_rows": "Answers compared with their no-memory baselines (rows of the statistics).",
    "responses_excluded_from_drift": "Answers left out of drift: failed call, no steps or no "
                                     "labels (counted, never scored as empty).",
    "questions_without_drift_rows": "Questions whose baselines were unusable.",
    "failed_calls_in_request_log": "Failed calls still in the run store's request log.",
    "pairs_rated_orthogonality": "(question, memory) pairs the orthogonality rater judged.",
    "pairs_excluded_orthogonality": "Pairs judged relevant, so left out of the statistics.",
    "drift_rows_excluded_orthogonality": "Drift rows of those pairs (kept in the store, flagged).",
    "orthogonality_rater_errors": "Pairs the rater could not judge (never excluded).",
}
_QUALITY_PATTERNS = [
    (re.compile(r"^step_split_(.+)$"), "Answers split by the '{1}' method."),
    (re.compile(r"^(floor_)?(same|different)_split_pairs$"),
     "{0}Drift pairs whose two answers were split by the {1} method."),
    (re.compile(r"^(floor_)?(same|different)_split_mean_dtw$"),
     "{0}Mean DTW of the pairs split by the {1} method (a large gap between same and different "
     "means the split, not memory, moved drift)."),
]
"""Data-quality items named by a pattern; a ``floor_`` item is about the no-memory pairs."""


def column_note(header: str) -> tuple[str, str] | None:
    """(glossary key, hover text) of a table column header; None when it has no entry."""
    if header in COLUMNS:
        return COLUMNS[header]
    for pattern, (key, text) in _PATTERNS:
        match = pattern.match(header)
        if match:
            return key, text.format(*(group or "" for group in match.groups()))
    return None


def quality_note(item: str) -> str:
    """The meaning of one data-quality item ('' when unknown)."""
    if item in QUALITY_ITEMS:
        return QUALITY_ITEMS[item]
    for pattern, text in _QUALITY_PATTERNS:
        match = pattern.match(item)
        if match:
            floor, *rest = match.groups() if len(match.groups()) > 1 else ("", *match.groups())
            return text.format("Floor (no-memory pairs): " if floor else "", *rest)
    return ""


def hover(key: str, shown: str, note: str | None = None) -> str:
    """``shown`` (raw text) with the glossary entry ``key`` as a hover note and a link to it."""
    term = TERMS[key]
    title = f"{note} — {term.name}: {term.text}" if note else f"{term.name}: {term.text}"
    return (f'<a class="term" href="#g-{key}"><abbr title="{escape(title)}">{escape(shown)}'
            "</abbr></a>")


def header_cell(header: str, attrs: str = "") -> str:
    """A ``<th>`` for a column, with its hover note when the glossary explains it."""
    note = column_note(header)
    inner = hover(note[0], header, note[1]) if note else escape(header)
    return f"<th{attrs}>{inner}</th>"


CORE = ("drift", "dtw", "sri", "floor", "baselines", "control", "noise", "persona", "life_event",
        "elevation", "d_rel", "ci", "p", "q", "cohen_d", "letters", "mde", "power", "validity",
        "not_interpretable")
"""The entries every audit report's glossary lists, whether or not a section links to them."""


def used_terms(html: str) -> list[str]:
    """The core entries plus every entry ``html`` links to (``#g-<key>``), in glossary order."""
    linked = set(re.findall(r'href="#g-([a-z_]+)"', html)) | set(CORE)
    return [key for key in TERMS if key in linked]


def glossary_html(keys: list[str] | None = None) -> str:
    """The glossary section: one entry per term (``keys``, default all), each linked to the docs."""
    items = "".join(
        f'<dt id="g-{key}">{escape(TERMS[key].name)}</dt><dd>{escape(TERMS[key].text)} '
        f'<a href="{escape(TERMS[key].doc)}">{escape(_doc_label(TERMS[key].doc))}</a></dd>'
        for key in (keys or TERMS))
    return ('<p class="meta">Hover a column header or an underlined term for its note; links '
            "point to the docs in the memlens repository (paths from its root).</p>"
            f'<dl class="glossary">{items}</dl>')


def _doc_label(doc: str) -> str:
    """``docs/statistics.md#the-cluster-bootstrap`` → ``docs/statistics.md § the cluster
    bootstrap``."""
    path, _, anchor = doc.partition("#")
    return f"{path} § {anchor.replace('-', ' ')}" if anchor else path
