"""TRL entry points: ``train_grpo`` (drift + format rewards) and ``train_dpo`` (SymPreference).

Both take a model path (or a loaded model), a data set (see ``datasets_io.load_training_data``),
an output directory and settings with the paper's defaults; they train, save the final model and
tokenizer to ``output_dir``, write ``training_summary.json`` (settings, row counts, log history)
and return a ``TrainingResult``. For several GPUs or nodes run the CLI under ``accelerate launch``
(see docs/mitigation.md); TRL picks the distributed setup from the environment.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError, missing_extra
from memlens.fileio import atomic_write_text
from memlens.mitigation.config import (
    DPOSettings,
    GRPOSettings,
    TrainingSettings,
    to_trl_kwargs,
)
from memlens.mitigation.datasets_io import load_training_data
from memlens.models.fingerprint import fingerprint_path


@dataclass
class TrainingResult:
    """What a training run produced."""

    output_dir: Path
    log_history: list[dict]
    train_rows: int
    test_rows: int
    dropped_prompts: int = 0
    trainer: Any = field(default=None, repr=False)


def trl_config(kind: str, settings: TrainingSettings, output_dir: str | Path):
    """The TRL ``GRPOConfig`` / ``DPOConfig`` the settings resolve to (also for ``--dry-run``)."""
    try:
        import trl
    except ImportError:
        raise missing_extra("trl", "train") from None
    config_class = {"grpo": trl.GRPOConfig, "dpo": trl.DPOConfig}[kind]
    kwargs = to_trl_kwargs(settings, output_dir)
    try:
        return config_class(**kwargs)
    except (TypeError, ValueError) as error:
        raise MemlensError(f"invalid {kind.upper()} settings: {error}") from None


def _tokenizer(model, tokenizer):
    if tokenizer is not None:
        return tokenizer
    from transformers import AutoTokenizer

    source = model if isinstance(model, str | Path) else model.name_or_path
    try:
        return AutoTokenizer.from_pretrained(str(source))
    except (OSError, ValueError) as error:
        raise MemlensError(f"cannot load a tokenizer from {source}: {error}") from None


def _model_arg(model):
    if isinstance(model, Path):
        model = str(model)
    if isinstance(model, str) and not Path(model).exists():
        raise MemlensError(f"model not found: {model} (a local directory is needed offline)")
    return model


def peft_config(settings: TrainingSettings):
    """A peft ``LoraConfig`` when ``settings.lora``, else None."""
    if not settings.lora:
        return None
    try:
        from peft import LoraConfig
    except ImportError:
        raise missing_extra("peft", "train") from None
    return LoraConfig(task_type="CAUSAL_LM", r=settings.lora_r, lora_alpha=settings.lora_alpha,
                      lora_dropout=settings.lora_dropout, target_modules="all-linear")


def prompt_tokens(prompt, tokenizer) -> int:
    """Token count of a prompt (chat template applied to conversational prompts)."""
    if isinstance(prompt, str):
        return len(tokenizer(prompt)["input_ids"])
    ids = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return len(ids)


def drop_long_prompts(dataset, tokenizer, max_tokens: int):
    """Rows whose prompt fits in ``max_tokens``, and how many were dropped (paper: filtered)."""
    keep = [i for i, prompt in enumerate(dataset["prompt"])
            if prompt_tokens(prompt, tokenizer) <= max_tokens]
    return dataset.select(keep), len(dataset) - len(keep)


def train_grpo(model, data, output_dir: str | Path, settings: GRPOSettings | None = None, *,
               rewards: list | None = None, tokenizer=None, callbacks=None) -> TrainingResult:
    """GRPO on ``data`` (columns ``prompt`` and the reference column) with ``rewards``
    (default: ``paper_rewards(settings.rewards, settings.labeler)``)."""
    from memlens.mitigation.rewards import paper_rewards  # lazy: pulls numba

    settings = settings or GRPOSettings()
    rewards = rewards or paper_rewards(settings.rewards, settings.labeler,
                                       settings.reference_column)
    needs_reference = any(hasattr(r, "reference_column") for r in rewards)
    required = ("prompt", settings.reference_column) if needs_reference else ("prompt",)
    train, test = load_training_data(data, required, seed=settings.seed)
    tokenizer = _tokenizer(model, tokenizer)
    train, dropped = drop_long_prompts(train, tokenizer, settings.max_prompt_length)
    if len(train) == 0:
        raise MemlensError(f"no training prompt fits in --max-prompt-length "
                           f"{settings.max_prompt_length} tokens")
    from trl import GRPOTrainer

    config = trl_config("grpo", settings, output_dir)
    trainer = GRPOTrainer(model=_model_arg(model), reward_funcs=rewards, args=config,
                          train_dataset=train, processing_class=tokenizer,
                          peft_config=peft_config(settings), callbacks=callbacks)
    return _finish(trainer, settings, output_dir, len(train), len(test), dropped, model)


def train_dpo(model, data, output_dir: str | Path, settings: DPOSettings | None = None, *,
              tokenizer=None, callbacks=None) -> TrainingResult:
    """DPO on ``data`` with columns ``prompt`` / ``chosen`` / ``rejected``."""
    settings = settings or DPOSettings()
    train, test = load_training_data(data, ("prompt", "chosen", "rejected"), seed=settings.seed)
    tokenizer = _tokenizer(model, tokenizer)
    from trl import DPOTrainer

    config = trl_config("dpo", settings, output_dir)
    trainer = DPOTrainer(model=_model_arg(model), args=config, train_dataset=train,
                         processing_class=tokenizer, peft_config=peft_config(settings),
                         callbacks=callbacks)
    return _finish(trainer, settings, output_dir, len(train), len(test), 0, model)


def _finish(trainer, settings: TrainingSettings, output_dir: str | Path, train_rows: int,
            test_rows: int, dropped: int, model=None) -> TrainingResult:
    base = fingerprint_path(model) if isinstance(model, str | Path) else None
    trainer.train()
    output = Path(output_dir)
    trainer.save_model(str(output))
    trainer.processing_class.save_pretrained(str(output))
    history = list(trainer.state.log_history)
    summary = {"settings": dataclasses.asdict(settings), "train_rows": train_rows,
               "test_rows": test_rows, "dropped_prompts": dropped,
               "global_step": trainer.state.global_step, "log_history": history,
               # the weights trained from (memlens.models.fingerprint)
               "base_model_fingerprint": base.to_dict() if base else None}
    atomic_write_text(output / "training_summary.json", json.dumps(summary, indent=2, default=str))
    return TrainingResult(output, history, train_rows, test_rows, dropped, trainer)
