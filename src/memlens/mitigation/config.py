"""Training settings with the paper's defaults (SPEC §3, App. I.1–I.2), each overridable.

Settings resolve in order: dataclass defaults → a YAML file → CLI flags → ``--set KEY=VALUE``
pairs (any other field of TRL's ``GRPOConfig`` / ``DPOConfig``, passed through unchanged).
``to_trl_kwargs`` turns them into TRL config arguments, choosing CPU / bf16 / vLLM from the
hardware when left on ``auto`` (None). The settings are pydantic dataclasses: every value, from a
file, a flag or Python, is checked against its field's type and range, and a bad one is a
``MemlensError`` naming where it came from (``grpo.yaml: field 'beta'``, ``--beta``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le
from pydantic import Field, TypeAdapter, ValidationError

from memlens.errors import MemlensError
from memlens.jsonl import parse_json, parse_yaml, read_text
from memlens.pydantic_config import UNKNOWN_FIELD, config_dataclass, validation_message


def _number(kind: type, low: float, high: float, *, low_inclusive: bool = True) -> Any:
    """``kind`` (int or float) from ``low`` (excluded unless ``low_inclusive``) to ``high``,
    finite."""
    bound = {"ge" if low_inclusive else "gt": low, "le": high}
    if kind is float:
        return Annotated[float, Field(**bound, allow_inf_nan=False)]
    return Annotated[int, Field(**bound)]


# the ranges every value is checked against, from a file, a flag or Python
Epochs = _number(float, 0, 10_000, low_inclusive=False)
LearningRate = _number(float, 0, 1, low_inclusive=False)
BatchSize = _number(int, 1, 1 << 16)
MaxSteps = _number(int, -1, 10**9)
Steps = _number(int, 1, 10**9)
Seed = _number(int, 0, 2**32 - 1)
LoraRank = _number(int, 1, 4096)
Generations = _number(int, 2, 1024)
Temperature = _number(float, 0, 5, low_inclusive=False)
Tokens = _number(int, 1, 1_000_000)
Beta = _number(float, 0, 100)
Fraction = _number(float, 0, 1)


def setting_problem(cls: type, item: dict) -> str:
    """One pydantic error item about a settings field, phrased as before pydantic: an unknown
    setting lists the known ones, a range names its bounds and the value, a type names it.

    >>> setting_problem(GRPOSettings, {"type": "less_than_equal", "loc": ("learning_rate",),
    ...                                "input": "1e400", "msg": ""})
    "setting 'learning_rate' must be a finite number > 0 and <= 1, got inf"
    """
    name = str(item["loc"][0]) if item["loc"] else ""
    known = settings_fields(cls)
    if item["type"] in UNKNOWN_FIELD or name not in known:
        return (f"unknown setting '{name}' (known: {', '.join(sorted(known))}; other TRL fields "
                "go in 'extra' / --set KEY=VALUE)")
    info = cls.__pydantic_fields__[name]
    value = item.get("input")
    if value is None:
        return f"setting '{name}' needs a value"
    bounds = {type(rule): rule for rule in info.metadata if isinstance(rule, Ge | Gt | Le)}
    if bounds and item["type"] in ("greater_than", "greater_than_equal", "less_than_equal",
                                   "finite_number"):
        low = bounds[Ge].ge if Ge in bounds else bounds[Gt].gt
        value = TypeAdapter(info.annotation).validate_python(value)  # as converted: '1e400' -> inf
        return (f"setting '{name}' must be a finite number {'>=' if Ge in bounds else '>'} "
                f"{low:g} and <= {bounds[Le].le:g}, got {value!r}")
    kind = getattr(info.annotation, "__name__", None) or str(info.annotation)
    return f"setting '{name}' expects {kind}, got {value!r}"


@config_dataclass(describe=setting_problem)
class TrainingSettings:
    """Fields shared by GRPO and DPO."""

    num_train_epochs: Epochs = 3.0
    """Epochs over the training split (paper: 3)."""
    learning_rate: LearningRate = 1e-6
    per_device_train_batch_size: BatchSize = 8
    gradient_accumulation_steps: BatchSize = 1
    max_steps: MaxSteps = -1
    """Stop after this many optimizer steps (-1: run the epochs). Smoke runs set a few."""
    logging_steps: Steps = 10
    save_steps: Steps = 500
    seed: Seed = 0
    bf16: bool | None = None
    """bfloat16 training; None = on when a CUDA GPU supports it (always off on CPU)."""
    lora: bool = False
    """Train LoRA adapters through peft instead of all parameters."""
    lora_r: LoraRank = 16
    lora_alpha: BatchSize = 32
    lora_dropout: Fraction = 0.05
    deepspeed: str | None = None
    """DeepSpeed config JSON (e.g. the shipped ``deepspeed_zero3.json``); GPUs only."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Any other TRL config field, passed through (``--set KEY=VALUE``)."""


@config_dataclass(describe=setting_problem)
class GRPOSettings(TrainingSettings):
    """GRPO with the paper's settings (App. I.2): K = 4 at T = 1.0, 3 epochs, batch 8, prompts
    ≤ 640 and completions ≤ 1024 tokens, KL coefficient 0.01, 80/20 split."""

    num_generations: Generations = 4
    temperature: Temperature = 1.0
    max_prompt_length: Tokens = 640
    """Prompts longer than this (in tokens, chat template applied) are dropped, as in the paper."""
    max_completion_length: Tokens = 1024
    beta: Beta = 0.01
    """KL coefficient λ_KL against the reference policy (TRL's default is 0.0: no KL)."""
    loss_type: str = "grpo"
    """The paper's objective (eq. 23): per-sequence mean, group-standardised advantages."""
    scale_rewards: str = "group"
    rewards: str = "dtw+fmt"
    """'+'-joined rewards from dtw, sri, fmt (Table 2 variants: dtw+fmt, dtw+sri+fmt)."""
    labeler: str = "embedded"
    """Step labeler inside the drift rewards: embedded | keyword | a model string."""
    reference_column: str = "reference"
    use_vllm: bool | None = None
    """vLLM rollouts; None = on when vllm is importable and a CUDA GPU is present."""
    vllm_mode: str = "colocate"


@config_dataclass(describe=setting_problem)
class DPOSettings(TrainingSettings):
    """DPO with the paper's settings (App. I.1): sigmoid loss, lr 5e-6, cosine, warmup 0.1,
    3 epochs, bf16, max length 1024, batch 1 × accumulation 16, save every 500, log every 10."""

    learning_rate: LearningRate = 5e-6
    per_device_train_batch_size: BatchSize = 1
    gradient_accumulation_steps: BatchSize = 16
    loss_type: str = "sigmoid"
    beta: Beta = 0.1
    """DPO β (not stated in the paper; TRL's default)."""
    lr_scheduler_type: str = "cosine"
    warmup_ratio: Fraction = 0.1
    max_length: Tokens = 1024


# fields that are ours, not TRL's
_OWN_FIELDS = {"lora", "lora_r", "lora_alpha", "lora_dropout", "extra", "max_prompt_length",
               "rewards", "labeler", "reference_column", "warmup_ratio"}


def settings_fields(cls: type[TrainingSettings]) -> dict[str, dataclasses.Field]:
    """The settings' fields by name (``extra`` excluded)."""
    return {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}


def validate_settings(cls: type[TrainingSettings], values: dict[str, Any],
                      sources: dict[str, str], default_source: str) -> TrainingSettings:
    """``cls`` from ``values`` validated by pydantic; problems -> one ``MemlensError`` naming
    where each bad value came from (``sources[name]``: a file's field, a flag; else
    ``default_source``) and what was expected.

    >>> validate_settings(GRPOSettings, {"beta": "0.02"}, {}, "-").beta
    0.02
    >>> validate_settings(GRPOSettings, {"learning_rate": "nan"}, {"learning_rate":
    ...                   "--learning-rate"}, "-")
    Traceback (most recent call last):
    memlens.errors.MemlensError: --learning-rate: setting 'learning_rate' must be a finite number > 0 and <= 1, got nan
    """
    try:
        return TypeAdapter(cls).validate_python(values)
    except ValidationError as error:
        raise MemlensError(validation_message(
            error, lambda name: sources.get(name, default_source),
            describe=lambda item: setting_problem(cls, item))) from None


def _text_value(value: Any) -> Any:
    """A value from YAML or a flag: ``auto`` / ``none`` / ``null`` (any case) mean None."""
    if isinstance(value, str) and value.lower() in ("auto", "none", "null"):
        return None
    return value


def parse_extra(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs (values parsed as JSON when they parse, else kept as strings).

    >>> parse_extra(["weight_decay=0.01", "optim=adamw_torch"])
    {'weight_decay': 0.01, 'optim': 'adamw_torch'}
    """
    extra: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise MemlensError(f"--set: expected KEY=VALUE, got {pair!r}")
        try:
            json.loads(raw)
            is_json = True
        except json.JSONDecodeError:
            is_json = False
        except (ValueError, RecursionError):  # JSON over a limit: parse_json says which
            is_json = True
        extra[key.strip()] = parse_json(raw, f"--set {key.strip()}") if is_json else raw
    return extra


def resolve_settings(cls: type[TrainingSettings], config_file: str | Path | None = None,
                     overrides: dict[str, Any] | None = None,
                     extra: dict[str, Any] | None = None) -> TrainingSettings:
    """Defaults, then the YAML ``config_file``, then ``overrides`` (None values ignored), then
    ``extra`` TRL fields. Every value from the file is checked, also one a flag replaces."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    merged_extra: dict[str, Any] = {}
    if config_file is not None:
        data = _read_yaml(Path(config_file))
        file_extra = data.pop("extra", None) or {}
        if not isinstance(file_extra, dict):
            raise MemlensError(f"{config_file}: field 'extra' must be a mapping of TRL field: "
                               f"value, got {type(file_extra).__name__}")
        merged_extra.update({str(key): value for key, value in file_extra.items()})
        values = {str(name): _text_value(value) for name, value in data.items()}
        sources = {name: f"{config_file}: field '{name}'" for name in values}
        validate_settings(cls, values, sources, str(config_file))
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = _text_value(value)
            sources[name] = f"--{name.replace('_', '-')}"
    for name, value in (extra or {}).items():
        merged_extra[name] = value
        sources[name] = f"--set {name}"
    for name in list(merged_extra):  # a memlens setting given as a TRL field is still checked
        if name in settings_fields(cls):
            values[name] = _text_value(merged_extra.pop(name))
            sources.setdefault(name, f"extra field '{name}'")
    _check_extra(merged_extra, sources)
    return validate_settings(cls, {**values, "extra": merged_extra}, sources, "training settings")


MANAGED_TRL_FIELDS = frozenset({"output_dir", "use_cpu", "report_to", "save_strategy",
                                "activation_checkpointing", "warmup_steps", "logging_dir"})
"""TRL fields memlens sets itself (``to_trl_kwargs``): ``--output`` decides where the model goes,
so ``--set output_dir=/etc`` must not silently override it."""


def _check_extra(extra: dict[str, Any], sources: dict[str, str]) -> None:
    """Refuse TRL pass-through fields memlens manages and numbers that are not finite (``nan``,
    ``inf`` as JSON-like text included): TRL would accept them and train on garbage."""
    import math

    for name, value in extra.items():
        where = sources.get(name, f"extra field '{name}'")
        if name in MANAGED_TRL_FIELDS:
            raise MemlensError(f"{where}: '{name}' is set by memlens (use --output for where the "
                               "model is written); it cannot be overridden")
        number = value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                continue
        if isinstance(number, float) and not math.isfinite(number):
            raise MemlensError(f"{where}: setting '{name}' must be a finite number, got {value!r}")


def _read_yaml(path: Path) -> dict[str, Any]:
    data = parse_yaml(read_text(path, "training config"), str(path), "not valid YAML")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MemlensError(f"{path}: expected a mapping of setting: value at the top level")
    return data


def hardware() -> dict[str, bool]:
    """What the machine offers: ``cuda``, ``bf16`` (CUDA with bf16 support) and ``vllm``."""
    try:
        import torch

        cuda = bool(torch.cuda.is_available())
        bf16 = cuda and bool(torch.cuda.is_bf16_supported())
    except ImportError:
        cuda = bf16 = False
    return {"cuda": cuda, "bf16": bf16, "vllm": cuda and importlib.util.find_spec("vllm") is not None}


def to_trl_kwargs(settings: TrainingSettings, output_dir: str | Path,
                  machine: dict[str, bool] | None = None) -> dict[str, Any]:
    """Keyword arguments for TRL's ``GRPOConfig`` / ``DPOConfig`` from ``settings``."""
    machine = machine or hardware()
    kwargs = {name: getattr(settings, name) for name in settings_fields(type(settings))
              if name not in _OWN_FIELDS}
    kwargs["bf16"] = machine["bf16"] if settings.bf16 is None else settings.bf16
    if kwargs["bf16"] and not machine["cuda"]:
        raise MemlensError("--bf16 true needs a CUDA GPU; this machine has none")
    if isinstance(settings, GRPOSettings):
        kwargs["use_vllm"] = machine["vllm"] if settings.use_vllm is None else settings.use_vllm
        if kwargs["use_vllm"] and not machine["vllm"]:
            raise MemlensError("--use-vllm true needs the 'vllm' package and a CUDA GPU")
        if not kwargs["use_vllm"]:
            kwargs.pop("vllm_mode")
    if isinstance(settings, DPOSettings):
        kwargs["warmup_steps"] = settings.warmup_ratio  # TRL: a float in [0, 1) is a ratio
    if settings.deepspeed is None:
        kwargs.pop("deepspeed")
    elif not machine["cuda"]:
        raise MemlensError("--deepspeed needs CUDA GPUs; leave it out on CPU")
    kwargs.update(output_dir=str(output_dir), use_cpu=not machine["cuda"], report_to="none",
                  save_strategy="steps", activation_checkpointing=False)
    kwargs.update(settings.extra)
    return kwargs
