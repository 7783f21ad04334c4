"""Named presets for the paper's seven candidate sources (App. G, Table 12).

A preset says which column(s) of a user-provided local copy hold the question text, how to compose
them when the question spans several columns, which rows to skip, and what provenance to record
(preset name, dataset reference, license as stated on the dataset card, original row index).
Rows are read by ``memlens.questions.sources.read_rows`` (the same JSONL / CSV / local HF
``datasets`` readers as ``load_candidates``); nothing is downloaded.

No copy of any dataset was available when the presets were written (no network), so every preset
records where its column names come from (``evidence``) and whether they were seen on the card /
dataset viewer or in code that reads the dataset (``verified=True``) or are a best guess
(``verified=False``). A column the file does not have raises an error listing the file's columns
and suggesting ``--text-field``, which overrides the preset's text columns and keeps the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memlens.errors import MemlensError
from memlens.questions.sources import Candidate, read_rows

PLACEHOLDER_TEXTS = frozenset({"[removed]", "[deleted]"})
"""Reddit placeholders for removed content, treated as empty."""


@dataclass(frozen=True)
class TextPart:
    """One piece of the question: the first of ``names`` present in the file is used."""

    names: tuple[str, ...]
    optional: bool = False
    """An optional part may be absent from the file or empty in a row."""


@dataclass(frozen=True)
class SourcePreset:
    """How to read one public source into candidate questions, with its provenance."""

    name: str
    title: str
    """Source name and reference as in the paper's App. G."""
    dataset: str
    """Hugging Face dataset id (and subset, if any) the preset was written for."""
    url: str
    license: str
    """License as stated on the dataset card (or where it was found)."""
    parts: tuple[TextPart, ...]
    verified: bool
    evidence: str
    """Where the column names come from (card, viewer or code), or why they are a guess."""
    joiner: str = "\n\n"
    category: tuple[str, ...] = ()
    """Column(s) whose value becomes the candidate's category, first present wins."""
    skip_if: tuple[tuple[str, frozenset[str]], ...] = ()
    """``(column, values)``: skip a row whose value, lower-cased, is one of ``values``."""
    dedupe_text: bool = False
    """Keep only the first row of each composed text (e.g. one row per dilemma action)."""
    note: str = ""


PRESETS: dict[str, SourcePreset] = {p.name: p for p in (
    SourcePreset(
        name="career-guidance",
        title="Career Guidance (Pradeep 2025)",
        dataset="Pradeep016/career-guidance-qa-dataset",
        url="https://huggingface.co/datasets/Pradeep016/career-guidance-qa-dataset",
        license="CC-BY-4.0 (as stated in the paper, App. G; the card's license not seen)",
        parts=(TextPart(("question", "Question")),),
        category=("role", "Role"),
        verified=True,
        evidence="third-party code reading this dataset with load_dataset uses row['question'] "
                 "and row['answer']; a project README describes the CSV fields as Role, "
                 "Question, Answer (so both spellings are accepted)",
    ),
    SourcePreset(
        name="ethics-commonsense",
        title="ETHICS, commonsense morality (Hendrycks et al. 2021)",
        dataset="hendrycks/ethics (subset commonsense)",
        url="https://huggingface.co/datasets/hendrycks/ethics",
        license="MIT (dataset card metadata; github.com/hendrycks/ethics)",
        parts=(TextPart(("input",)),),
        verified=True,
        evidence="lighteval's ETHICS task (its copy lighteval/hendrycks_ethics, subset "
                 "commonsense) formats line['input'] and line['label']",
        note="scenarios are first-person statements, not questions; the keyword rules and the "
             "rater decide what survives",
    ),
    SourcePreset(
        name="ethics-justice",
        title="ETHICS, justice (Hendrycks et al. 2021)",
        dataset="hendrycks/ethics (subset justice)",
        url="https://huggingface.co/datasets/hendrycks/ethics",
        license="MIT (dataset card metadata; github.com/hendrycks/ethics)",
        parts=(TextPart(("scenario",)),),
        verified=True,
        evidence="lighteval's ETHICS justice prompt (its copy lighteval/hendrycks_ethics, "
                 "subset justice) formats line['scenario'] and line['label']",
    ),
    SourcePreset(
        name="medical-qa",
        title="Medical QA (Malikeh1375 2025)",
        dataset="Malikeh1375/medical-question-answering-datasets",
        url="https://huggingface.co/datasets/Malikeh1375/medical-question-answering-datasets",
        license="MIT (hub tag license:mit)",
        parts=(TextPart(("input",)),),
        verified=True,
        evidence="third-party code reads ds['train']['input'] (subset chatdoctor_icliniq); a "
                 "mirror's card lists features instruction, input, output; 'instruction' is the "
                 "task prompt, not the patient's question, so only 'input' is used",
        note="several subsets (all-processed, chatdoctor_healthcaremagic, chatdoctor_icliniq, "
             "...): save the one you want with save_to_disk or export it",
    ),
    SourcePreset(
        name="financial-advisor",
        title="Financial Advisor-100 (nihiluis 2025)",
        dataset="nihiluis/financial-advisor-100",
        url="https://huggingface.co/datasets/nihiluis/financial-advisor-100",
        license="not specified on the dataset card (paper App. G: treat as research-only)",
        parts=(TextPart(("question",)),),
        verified=True,
        evidence="third-party code loads nihiluis/financial-advisor-100 and formats "
                 "row['question'] / row['answer']; the card itself lists no features",
        note="questions are /r/personalfinance submissions (100 rows), often long and personal",
    ),
    SourcePreset(
        name="legal-advice",
        title="Legal Advice Reddit (Li et al. 2022)",
        dataset="jonathanli/legal-advice-reddit",
        url="https://huggingface.co/datasets/jonathanli/legal-advice-reddit",
        license="not specified on the dataset card (paper App. G: treat as research-only)",
        parts=(TextPart(("title",)), TextPart(("body",), optional=True)),
        category=("text_label",),
        verified=True,
        evidence="the card says the dataset maps the title and text of each post to one of "
                 "eleven flair classes; code using it reads title, body, text_label (fields id, "
                 "title, body, text_label, flair_label, full_link, created_utc)",
        note="the question is the post title followed by its body; a removed body is dropped",
    ),
    SourcePreset(
        name="reddit-questions",
        title="1M Reddit Questions (SocialGrep 2025)",
        dataset="SocialGrep/one-million-reddit-questions",
        url="https://huggingface.co/datasets/SocialGrep/one-million-reddit-questions",
        license="CC-BY-4.0 (dataset card metadata)",
        parts=(TextPart(("title",)),),
        skip_if=(("subreddit.nsfw", frozenset({"true", "1"})),),
        verified=False,
        evidence="inferred, not seen for this dataset: SocialGrep's other Reddit exports and a "
                 "third-party card with the same schema have type, id, subreddit.id, "
                 "subreddit.name, subreddit.nsfw, created_utc, permalink, domain, url, selftext, "
                 "title, score; this dataset's card and viewer showed no columns",
        note="AskReddit questions are post titles; selftext is not used; NSFW posts are skipped",
    ),
    SourcePreset(
        name="dailydilemmas",
        title="DailyDilemmas (Chiu et al. 2024)",
        dataset="kellycyy/daily_dilemmas (subset Dilemmas_with_values_aggregated)",
        url="https://huggingface.co/datasets/kellycyy/daily_dilemmas",
        license="CC-BY-4.0 (dataset card metadata)",
        parts=(TextPart(("dilemma_situation",)),),
        category=("topic_group",),
        dedupe_text=True,
        verified=True,
        evidence="dataset viewer: idx, dilemma_idx, basic_situation, dilemma_situation, "
                 "action_type, action, negative_consequence, values_aggregated, topic, "
                 "topic_group; each dilemma has a to_do and a not_to_do row",
        note="dilemma_situation already ends with the question ('Should you ...?'); the second "
             "(not_to_do) row of each dilemma repeats it and is skipped. The GitHub release's "
             "data/dilemma.csv (columns ,idx,basic_situation,dilemma_situation; one row per "
             "dilemma, no topic_group) reads as it is: seen in a real copy (issue 27)",
    ),
)}


def get_preset(name: str) -> SourcePreset:
    """The preset called ``name``; an unknown name lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise MemlensError(f"unknown source preset {name!r} (known: {', '.join(PRESETS)})") from None


def load_preset_candidates(
    path: str | Path,
    preset: str | SourcePreset,
    text_field: str | None = None,
    source: str | None = None,
    split: str | None = None,
) -> list[Candidate]:
    """Read ``path`` (``.jsonl``, ``.csv`` or a local datasets folder) with a source preset.

    ``text_field`` replaces the preset's text columns with one column (for a copy whose columns
    differ). Rows that are skipped by the preset, empty after composition or a repeat (with
    ``dedupe_text``) are left out; every candidate keeps its original ``row_index`` and records
    ``preset``, ``dataset`` and ``dataset_url`` next to ``source`` and ``license``.
    """
    preset = preset if isinstance(preset, SourcePreset) else get_preset(preset)
    parts = (TextPart((text_field,)),) if text_field is not None else preset.parts
    source = source or preset.name
    rows, label = read_rows(path, split)
    provenance = {"preset": preset.name, "dataset": preset.dataset, "dataset_url": preset.url}
    columns: list[str | None] | None = None
    category_column: str | None = None
    seen: set[str] = set()
    candidates = []
    for index, (where, row) in enumerate(rows):
        if columns is None:
            columns = [_resolve(part, row, preset, label, text_field) for part in parts]
            category_column = next((c for c in preset.category if c in row), None)
        if any(str(row.get(column, "")).strip().lower() in values
               for column, values in preset.skip_if):
            continue
        pieces = []
        for part, column in zip(parts, columns, strict=True):
            piece = _cell(row, column, where, part.optional)
            if not piece and not part.optional:
                pieces = []
                break
            if piece:
                pieces.append(piece)
        text = " ".join(preset.joiner.join(pieces).split())
        if not text or (preset.dedupe_text and text in seen):
            continue
        seen.add(text)
        category = row.get(category_column) if category_column else None
        candidates.append(Candidate(
            id=f"{source}:{index}", text=text, source=source, row_index=index,
            category=str(category).strip() if category not in (None, "") else "uncategorized",
            license=preset.license, extra=dict(provenance),
        ))
    return candidates


def _resolve(part: TextPart, row: dict, preset: SourcePreset, label: str,
             text_field: str | None) -> str | None:
    for name in part.names:
        if name in row:
            return name
    if part.optional:
        return None
    wanted = " or ".join(repr(n) for n in part.names)
    if text_field is not None:
        basis = "given with --text-field"
    elif preset.verified:
        basis = f"per {preset.dataset}: {preset.evidence}"
    else:
        basis = f"a best guess, not verified: {preset.evidence}"
    raise MemlensError(
        f"{label}: source preset '{preset.name}' needs column {wanted} ({basis}); the file has "
        f"columns: {', '.join(map(str, row))}. Name the column holding the question with "
        "--text-field COLUMN (the preset's provenance is kept)")


def _cell(row: dict, column: str | None, where: str, optional: bool) -> str:
    if column is None:
        return ""
    if column not in row:
        if optional:
            return ""
        raise MemlensError(f"{where}: field '{column}' is missing")
    value = row[column]
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MemlensError(f"{where}: field '{column}' must be text, got {type(value).__name__}")
    value = value.strip()
    return "" if value.lower() in PLACEHOLDER_TEXTS else value


def describe_presets() -> str:
    """One block per preset: name, source, dataset, license, columns and their evidence."""
    blocks = []
    for p in PRESETS.values():
        text = " + ".join("/".join(part.names) + (" (optional)" if part.optional else "")
                          for part in p.parts)
        lines = [f"{p.name}", f"  source    {p.title}", f"  dataset   {p.dataset}",
                 f"  url       {p.url}", f"  license   {p.license}", f"  text      {text}"]
        if p.category:
            lines.append(f"  category  {'/'.join(p.category)}")
        if p.skip_if:
            lines.append("  skips     " + "; ".join(f"{c} in {sorted(v)}" for c, v in p.skip_if))
        if p.dedupe_text:
            lines.append("  skips     repeated texts (first row kept)")
        lines.append(f"  columns   {'verified' if p.verified else 'BEST GUESS'}: {p.evidence}")
        if p.note:
            lines.append(f"  note      {p.note}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
