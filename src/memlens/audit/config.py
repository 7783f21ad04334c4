"""The audit's configuration: one pydantic model, three presets, YAML/JSON files, flag overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memlens.errors import MemlensError
from memlens.jsonl import parse_document, read_text
from memlens.pydantic_config import validation_message

StimulusClass = Literal["control", "noise", "persona", "life_event"]


class AuditConfig(BaseModel):
    """Everything that decides what an audit computes (recorded in the run manifest).

    >>> AuditConfig().model
    'embedded'
    >>> AuditConfig(samples=2).samples
    2
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = "embedded"
    """Model string of the audited model (see ``memlens.models.get_model``)."""
    labeler: str = "embedded-abstain"
    """``embedded-abstain`` (MiniLM, offline, leaves no-value steps unlabeled: the default),
    ``embedded`` (MiniLM, labels every step) or a model string for the LLM labeler."""
    questions: str | None = None
    """Path to a questions file (JSONL/CSV); None = the bundled benchmark."""
    n_questions: int | None = Field(default=None, ge=1)
    """Use a seeded, subcategory-stratified subset of this many questions; None = all."""
    stimuli: str | None = None
    """Path to a stimuli catalogue (JSONL); None = the bundled catalogue."""
    stimulus_categories: list[str] | None = None
    """Keep only these stimulus categories (``no_perturbation`` is always kept); None = all."""
    stimuli_per_category: int | None = Field(default=None, ge=1)
    """Seeded number of stimuli (exemplars / values) per category; None = all of them."""
    ontology: str | None = None
    """Path to an ontology file; None = the bundled DriftLens ontology."""
    mode: Literal["prefix", "system", "history"] = "prefix"
    """How memory reaches the model: prepended line, system-prompt block, or earlier turn."""
    system_prompt: str | None = None
    """Optional system prompt for every generation call."""
    reasoning_instruction: bool = True
    """Append the instruction of ``reasoning_format`` to every question."""
    reasoning_format: Literal["tagged", "list"] = "tagged"
    """``tagged``: the paper's ``<think><step_1>…`` format (``memlens.steps.REASONING_INSTRUCTION``);
    ``list``: three numbered steps and a one-sentence answer (``memlens.steps.LIST_INSTRUCTION``),
    which a small model follows — but on the embedded model the quick design then detects only
    +45.5 % DTW instead of +30.1 % (shorter steps, more of them unlabeled; docs/audit.md)."""
    samples: int = Field(default=1, ge=1, le=1000)
    """Responses per (question, perturbed condition)."""
    baselines: int = Field(default=5, ge=1, le=50)
    """K no-memory samples per question, all baselines: the floor is the mean drift over their
    pairs and every response's drift is its mean over the K baselines. K = 1 is the paper's
    design (one baseline plus ``samples`` extra no-memory samples for the floor)."""
    memory_header: str = Field(default="Memory about the user (saved from earlier conversations):",
                               max_length=2000)
    """``system`` mode: first line of the memory block (every condition, no-memory included)."""
    history_prefix: str = Field(default="Please remember this about me: ", max_length=2000)
    """``history`` mode: text before the memory in the earlier user turn (every condition)."""
    acknowledgement: str = Field(default="Thanks for telling me. I'll keep that in mind.",
                                 max_length=2000)
    """``history`` mode: the fixed assistant turn after the earlier user turn."""
    control_set: Literal["should-personalize", "memsyco"] | None = None
    """Also run a control set and report selectivity; None = off. ``should-personalize``: the
    bundled questions whose answer *should* depend on an attribute (the irrelevant side is the
    benchmark); ``memsyco``: MemSyco-Bench's memory-use items (relevant) against its
    scope-control items (irrelevant), each with its own dialogue as memory
    (``memlens.questions.memsyco``)."""
    control_set_dir: str | None = Field(default=None, min_length=1, max_length=4096)
    """``memsyco``: a folder with the release's two JSONL files; None = the bundled excerpt."""
    control_limit: int | None = Field(default=None, ge=1, le=10_000)
    """``memsyco``: at most this many items of each of the two tasks; None = all."""
    memory_sets: list[Literal["among_neutral", "combined"]] | None = None
    """Memory-set condition classes to add (``memlens.stimuli.memory_sets``): ``among_neutral``
    (each persona / life-event fact among neutral facts, plus the neutral facts alone) and
    ``combined`` (two attributes together); None = single stimuli only."""
    neutral_facts: int | None = Field(default=None, ge=1, le=12)
    """Neutral facts around the sensitive one in ``among_neutral`` sets; None = 4."""
    max_combinations: int | None = Field(default=None, ge=1, le=1000)
    """At most this many attribute pairs in ``combined`` sets (seeded draw); None = 10."""
    memory_template: str | None = Field(default=None, min_length=1, max_length=4096)
    """A memory template (bundled name or YAML/JSON file, ``memlens.stimuli.templates``) that
    renders every condition's messages; set, it replaces ``mode``, ``memory_header``,
    ``history_prefix`` and ``acknowledgement``. None = the ``mode``."""
    temperature: float = Field(default=0.7, ge=0.0, le=5.0, allow_inf_nan=False)
    """Sampling temperature of the audited model."""
    top_p: float = Field(default=0.98, gt=0.0, le=1.0, allow_inf_nan=False)
    """Nucleus sampling mass."""
    top_k: int | None = Field(default=50, ge=1, le=1_000_000)
    """Top-k cut-off where the backend supports it."""
    max_tokens: int = Field(default=2048, ge=1, le=1_000_000)
    """Maximum new tokens per response."""
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    """Master seed: question/stimulus subsets, per-sample seeds, bootstrap."""
    n_bootstrap: int = Field(default=10_000, ge=100, le=1_000_000)
    """Cluster-bootstrap replicates for the statistics."""
    concurrency: int | None = Field(default=None, ge=1, le=4096)
    """Parallel model calls; None = the backend's own default."""
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """API models: wall-time limit of one call attempt in seconds; None = backend default (120)."""
    attempts: int | None = Field(default=None, ge=1, le=100)
    """API models: attempts per call on transient failures; None = backend default (6)."""
    label_batch: int = Field(default=64, ge=1)
    """Responses per labeler call batch (each batch is stored before the next starts)."""
    orthogonality_rater: str | None = Field(default=None, min_length=1)
    """Model string of the orthogonality rater (SPEC §1.1, paper App. B.2): rates every
    (question, persona / life-event stimulus) pair for relevance; None = filter off."""
    orthogonality_threshold: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    """Pairs judged relevant with at least this confidence are excluded from the statistics."""
    preset: str | None = None
    """Name of the preset this config started from (recorded only)."""


PRESETS: dict[str, dict[str, Any]] = {
    # Budget on 2 cores, embedded model (~100-150 tok/s aggregate with parallel slots):
    # 16 questions x (5 no-memory baselines + 3 noise + 5 persona + 3 life-event) = 256 calls
    # x <= 160 tokens = 41k tokens. Five baselines, not more questions: with one baseline the
    # sensitivity check had ~3 % power here; measured with K = 5 on the embedded model the
    # minimum detectable life-event elevation was +10 % DTW with the never-abstaining labeler and
    # +30.1 % with the default abstaining one (docs/audit.md; paper-sized effect: +23 %).
    "quick": {
        "model": "embedded",
        "labeler": "embedded-abstain",
        "n_questions": 16,
        "stimulus_categories": [
            "filler", "whitespace", "punctuation",
            "age", "gender", "disability", "occupation", "income",
            "bereavement", "serious_illness", "job_loss",
        ],
        "stimuli_per_category": 1,
        "samples": 1,
        "baselines": 5,
        "max_tokens": 160,
        "n_bootstrap": 2_000,
    },
    # All categories, one exemplar each, on a 60-question subset: an afternoon on a laptop,
    # minutes against an API.
    "standard": {
        "n_questions": 60,
        "stimuli_per_category": 1,
        "samples": 1,
        "baselines": 5,
        "max_tokens": 512,
    },
    # The paper's design (App. I.3): every question and stimulus, T 0.7 / top-p 0.98 /
    # top-k 50, 2048 new tokens, B = 10,000; one sample per condition plus the extra
    # no-memory sample for the noise floor (K = 1 baseline).
    "paper": {
        "samples": 1,
        "baselines": 1,
        "temperature": 0.7,
        "top_p": 0.98,
        "top_k": 50,
        "max_tokens": 2048,
        "n_bootstrap": 10_000,
    },
}


def build_config(values: dict[str, Any], source: str = "audit config") -> AuditConfig:
    """Validate ``values`` into an ``AuditConfig``; problems -> MemlensError naming the key.

    >>> build_config({"samples": 2}).samples
    2
    >>> build_config({"sampels": 2})
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: audit config: unknown key 'sampels' (valid keys: ...
    """
    preset = values.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise MemlensError(f"{source}: unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    merged = {**PRESETS.get(preset, {}), **values} if preset else dict(values)
    try:
        return AuditConfig(**merged)
    except ValidationError as error:
        raise MemlensError(validation_message(error, source, AuditConfig.model_fields)) \
            from None


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML (``.yaml``/``.yml``) or JSON config file into a dict of settings."""

    path = Path(path)
    text = read_text(path, "config file")

    data = parse_document(text, str(path), path.suffix.lower() in (".yaml", ".yml"),
                          problem="malformed config file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MemlensError(f"{path}: a config file must hold a mapping of settings, "
                           f"got {type(data).__name__}")
    return {str(key): value for key, value in data.items()}


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None,
                preset: str | None = None) -> AuditConfig:
    """Preset, then config file, then explicit overrides (flags) — later ones win."""
    values: dict[str, Any] = {}
    source = "audit config"
    if path is not None:
        values.update(read_config_file(path))
        source = str(path)
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if preset is not None:
        values["preset"] = preset
    return build_config(values, source)
