"""Model folders for training and evaluation: a GGUF de-quantised to a transformers folder, and a
LoRA adapter merged into its base.

``gguf_to_folder`` turns a GGUF checkpoint (e.g. the embedded SmolLM2-135M Q4_1) into a plain
``save_pretrained`` folder (float32 safetensors + tokenizer with its chat template), so TRL,
lm-eval and the ``hf:`` backend all load the same weights. ``merge_adapter`` folds a peft LoRA
adapter (what ``mitigate grpo|dpo --lora true`` saves) into the base weights and saves a full
folder, so the tuned model is evaluated like any other ``hf:`` model.
"""

from __future__ import annotations

import json
from pathlib import Path

from memlens.errors import MemlensError, missing_extra


def _transformers():
    try:
        import torch
        import transformers
    except ImportError:
        raise missing_extra("transformers", "hf") from None
    return torch, transformers


def gguf_to_folder(gguf_file: str | Path, out: str | Path) -> Path:
    """De-quantise ``gguf_file`` into the transformers folder ``out`` (float32); returns ``out``.

    Needs the ``gguf`` package (``pip install 'memlens[hf]'``).
    """
    torch, transformers = _transformers()
    source = Path(gguf_file)
    if not source.is_file():
        raise MemlensError(f"GGUF file not found: {source}")
    target = Path(out)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(source.parent),
                                                               gguf_file=source.name)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(source.parent), gguf_file=source.name, dtype=torch.float32)
    except ImportError:
        raise missing_extra("gguf", "hf") from None
    except (OSError, ValueError) as error:
        raise MemlensError(f"{source}: cannot load the GGUF: {error}") from None
    # the weights are de-quantised already; only the GGUF marker stops save_pretrained
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.mkdir(parents=True, exist_ok=True)
    model.generation_config.pad_token_id = tokenizer.pad_token_id or tokenizer.eos_token_id
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target


def is_adapter(folder: str | Path) -> bool:
    """True when ``folder`` holds a peft adapter (``adapter_config.json``), not a full model."""
    return (Path(folder) / "adapter_config.json").is_file()


def merge_adapter(adapter_dir: str | Path, out: str | Path, base: str | Path | None = None) -> Path:
    """Merge the LoRA adapter in ``adapter_dir`` into its base model (``base`` or the adapter's
    ``base_model_name_or_path``) and save the full model + tokenizer to ``out``."""
    torch, transformers = _transformers()
    try:
        from peft import PeftModel
    except ImportError:
        raise missing_extra("peft", "train") from None
    adapter = Path(adapter_dir)
    if not is_adapter(adapter):
        raise MemlensError(f"{adapter}: no adapter_config.json (not a LoRA adapter folder)")
    config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    base_path = str(base or config.get("base_model_name_or_path") or "")
    if not base_path or not Path(base_path).exists():
        raise MemlensError(f"{adapter}: base model '{base_path}' not found; pass base=")
    model = transformers.AutoModelForCausalLM.from_pretrained(base_path, dtype=torch.float32)
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    merged.save_pretrained(str(target))
    tokenizer_source = adapter if (adapter / "tokenizer_config.json").is_file() else base_path
    transformers.AutoTokenizer.from_pretrained(str(tokenizer_source)).save_pretrained(str(target))
    return target
