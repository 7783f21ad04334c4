"""Training settings with the paper's defaults (SPEC §3, App. I.1–I.2), each overridable.

Settings resolve in order: dataclass defaults → a YAML file → CLI flags → ``--set KEY=VALUE``
pairs (any other field of TRL's ``GRPOConfig`` / ``DPOConfig``, passed through unchanged).
``to_trl_kwargs`` turns them into TRL config arguments, choosing CPU / bf16 / vLLM from the
hardware when left on ``auto`` (None).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError
from memlens.jsonl import parse_json, parse_yaml, read_text


@dataclass
class TrainingSettings:
    """Fields shared by GRPO and DPO."""

    num_train_epochs: float = 3.0
    """Epochs over the training split (paper: 3)."""
    learning_rate: float = 1e-6
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    max_steps: int = -1
    """Stop after this many optimizer steps (-1: run the epochs). Smoke runs set a few."""
    logging_steps: int = 10
    save_steps: int = 500
    seed: int = 0
    bf16: bool | None = None
    """bfloat16 training; None = on when a CUDA GPU supports it (always off on CPU)."""
    lora: bool = False
    """Train LoRA adapters through peft instead of all parameters."""
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    deepspeed: str | None = None
    """DeepSpeed config JSON (e.g. the shipped ``deepspeed_zero3.json``); GPUs only."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Any other TRL config field, passed through (``--set KEY=VALUE``)."""


@dataclass
class GRPOSettings(TrainingSettings):
    """GRPO with the paper's settings (App. I.2): K = 4 at T = 1.0, 3 epochs, batch 8, prompts
    ≤ 640 and completions ≤ 1024 tokens, KL coefficient 0.01, 80/20 split."""

    num_generations: int = 4
    temperature: float = 1.0
    max_prompt_length: int = 640
    """Prompts longer than this (in tokens, chat template applied) are dropped, as in the paper."""
    max_completion_length: int = 1024
    beta: float = 0.01
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


@dataclass
class DPOSettings(TrainingSettings):
    """DPO with the paper's settings (App. I.1): sigmoid loss, lr 5e-6, cosine, warmup 0.1,
    3 epochs, bf16, max length 1024, batch 1 × accumulation 16, save every 500, log every 10."""

    learning_rate: float = 5e-6
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 16
    loss_type: str = "sigmoid"
    beta: float = 0.1
    """DPO β (not stated in the paper; TRL's default)."""
    lr_scheduler_type: str = "cosine"
    warmup_ratio: float = 0.1
    max_length: int = 1024


# fields that are ours, not TRL's
_OWN_FIELDS = {"lora", "lora_r", "lora_alpha", "lora_dropout", "extra", "max_prompt_length",
               "rewards", "labeler", "reference_column", "warmup_ratio"}


# numeric ranges, checked on every value from a file or a flag: (low, high, low inclusive)
LIMITS: dict[str, tuple[float, float, bool]] = {
    "num_train_epochs": (0, 10_000, False), "learning_rate": (0, 1, False),
    "per_device_train_batch_size": (1, 1 << 16, True),
    "gradient_accumulation_steps": (1, 1 << 16, True), "max_steps": (-1, 10**9, True),
    "logging_steps": (1, 10**9, True), "save_steps": (1, 10**9, True),
    "seed": (0, 2**32 - 1, True), "lora_r": (1, 4096, True), "lora_alpha": (1, 1 << 16, True),
    "lora_dropout": (0, 1, True), "num_generations": (2, 1024, True),
    "temperature": (0, 5, False), "max_prompt_length": (1, 1_000_000, True),
    "max_completion_length": (1, 1_000_000, True), "max_length": (1, 1_000_000, True),
    "beta": (0, 100, True), "warmup_ratio": (0, 1, True),
}


def check_range(name: str, value: Any, where: str) -> Any:
    """``value`` if it is finite and within ``LIMITS[name]``, else ``MemlensError``.

    >>> check_range("learning_rate", 1e-6, "--learning-rate")
    1e-06
    >>> check_range("learning_rate", float("nan"), "--learning-rate")
    Traceback (most recent call last):
    memlens.errors.MemlensError: --learning-rate: setting 'learning_rate' must be a finite number > 0 and <= 1, got nan
    """
    if name not in LIMITS or isinstance(value, bool) or not isinstance(value, int | float):
        return value
    low, high, low_inclusive = LIMITS[name]
    inside = low <= value <= high if low_inclusive else low < value <= high
    if not (math.isfinite(value) and inside):
        raise MemlensError(f"{where}: setting '{name}' must be a finite number "
                           f"{'>=' if low_inclusive else '>'} {low:g} and <= {high:g}, "
                           f"got {value!r}")
    return value


def settings_fields(cls: type[TrainingSettings]) -> dict[str, dataclasses.Field]:
    """The settings' fields by name (``extra`` excluded)."""
    return {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}


def coerce(cls: type[TrainingSettings], name: str, value: Any, where: str) -> Any:
    """Convert ``value`` (from YAML or the command line) to the type of field ``name``.

    >>> coerce(GRPOSettings, "beta", "0.02", "--beta")
    0.02
    >>> coerce(GRPOSettings, "use_vllm", "auto", "--use-vllm") is None
    True
    """
    fields = settings_fields(cls)
    if name not in fields:
        raise MemlensError(f"{where}: unknown setting '{name}' (known: {', '.join(sorted(fields))};"
                           " other TRL fields go in 'extra' / --set KEY=VALUE)")
    kind = str(fields[name].type)
    if value is None or (isinstance(value, str) and value.lower() in ("auto", "none", "null")):
        if "None" in kind:
            return None
        raise MemlensError(f"{where}: setting '{name}' needs a value")
    try:
        if kind.startswith("bool"):
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return value.lower() in ("true", "1", "yes")
            return bool(value)
        if kind.startswith("int"):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return check_range(name, int(value), where)
        if kind.startswith("float"):
            return check_range(name, float(value), where)
        if isinstance(value, dict | list):
            raise TypeError(value)
        return str(value)
    except (TypeError, ValueError, OverflowError):
        raise MemlensError(f"{where}: setting '{name}' expects {kind}, got {value!r}") from None


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
    ``extra`` TRL fields."""
    values: dict[str, Any] = {}
    merged_extra: dict[str, Any] = {}
    if config_file is not None:
        data = _read_yaml(Path(config_file))
        file_extra = data.pop("extra", None) or {}
        if not isinstance(file_extra, dict):
            raise MemlensError(f"{config_file}: field 'extra' must be a mapping of TRL field: "
                               f"value, got {type(file_extra).__name__}")
        merged_extra.update({str(key): value for key, value in file_extra.items()})
        for name, value in data.items():
            values[name] = coerce(cls, name, value, f"{config_file}: field '{name}'")
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = coerce(cls, name, value, f"--{name.replace('_', '-')}")
    merged_extra.update(extra or {})
    return cls(**values, extra=merged_extra)


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
