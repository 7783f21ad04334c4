"""transformers backend (``hf:PATH_OR_ID``): a local causal LM on CPU or GPU.

Loads ``AutoTokenizer`` + ``AutoModelForCausalLM`` (from a local folder, or the HF cache — no
download happens with ``HF_HUB_OFFLINE=1``), formats messages with the tokenizer's chat template
and calls ``generate``. Sampling seeds are applied inside ``torch.random.fork_rng`` so the global
torch generator is left untouched. No constrained decoding: tools are requested in a system
message and the reply is parsed as a call (``tool_emulation``), so ``supports_tools`` is False.
``complete_batch`` runs the conversations one after another (one model, one lock).

``hf:FILE.gguf`` loads a GGUF checkpoint through transformers' GGUF support (de-quantised to
torch; needs the ``gguf`` package), e.g. the embedded SmolLM2's file. The ``model_id`` carries a
fingerprint of the weights (``memlens.models.fingerprint``), so a checkpoint retrained in place
is a different model to the cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError, missing_extra
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError
from memlens.models.fingerprint import fingerprint_model, with_fingerprint
from memlens.models.tool_emulation import apply_emulated_calls, prepare_messages


def generate_kwargs(params: GenerationParams) -> dict[str, Any]:
    """Keyword arguments for ``model.generate``; temperature 0 means greedy.

    >>> generate_kwargs(GenerationParams(temperature=0.0, max_tokens=4))
    {'max_new_tokens': 4, 'do_sample': False}
    >>> generate_kwargs(GenerationParams(top_k=None, max_tokens=4))
    {'max_new_tokens': 4, 'do_sample': True, 'temperature': 0.7, 'top_p': 0.98, 'top_k': 0}
    """
    kwargs: dict[str, Any] = {"max_new_tokens": params.max_tokens,
                              "do_sample": params.temperature > 0}
    if kwargs["do_sample"]:
        kwargs.update(temperature=params.temperature, top_p=params.top_p,
                      top_k=0 if params.top_k is None else params.top_k)
    return kwargs


def load_arguments(model: str) -> tuple[str, dict[str, str]]:
    """``(source, extra from_pretrained kwargs)``: a ``.gguf`` file loads from its folder with
    ``gguf_file``; anything else as given.

    >>> load_arguments("/m/SmolLM2.Q4_1.gguf")
    ('/m', {'gguf_file': 'SmolLM2.Q4_1.gguf'})
    >>> load_arguments("org/name")
    ('org/name', {})
    """
    if model.lower().endswith(".gguf"):
        path = Path(model)
        return str(path.parent), {"gguf_file": path.name}
    return model, {}


class TransformersModel:
    """A local transformers chat model; ``device`` is ``"cpu"``, ``"cuda"``, ``"cuda:1"``, …"""

    supports_tools = False

    def __init__(self, model: str, device: str = "cpu", dtype: str = "auto",
                 max_concurrency: int = 1):
        try:
            import torch
            import transformers
        except ImportError:
            raise missing_extra("transformers", "hf") from None

        self._torch = torch
        self.fingerprint = fingerprint_model(model)
        self.model_id = with_fingerprint(f"hf:{model}", self.fingerprint)
        self.max_concurrency = max_concurrency
        self.device = device
        self._lock = threading.Lock()
        source, extra = load_arguments(model)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, **extra)
            try:
                self.model = transformers.AutoModelForCausalLM.from_pretrained(
                    source, dtype="float32" if extra and dtype == "auto" else dtype, **extra)
            except TypeError:  # transformers < 4.56 names it torch_dtype
                self.model = transformers.AutoModelForCausalLM.from_pretrained(
                    source, torch_dtype=dtype, **extra)
        except (OSError, ValueError, ImportError) as error:
            raise MemlensError(f"hf: cannot load '{model}' (a local folder, or a model already in "
                               f"the Hugging Face cache): {str(error).splitlines()[0]}") from None
        self.model.to(device).eval()
        if not getattr(self.tokenizer, "chat_template", None):
            raise MemlensError(f"hf: the tokenizer of '{model}' has no chat template")

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """One reply; generation errors raise ``ModelCallError``."""
        prompt_ids = self.tokenizer.apply_chat_template(
            prepare_messages(messages, params), add_generation_prompt=True, return_tensors="pt",
            return_dict=True)["input_ids"].to(self.device)
        started = time.perf_counter()
        with self._lock, self._torch.random.fork_rng(devices=self._cuda_devices()):
            if params.seed is not None:
                self._torch.manual_seed(params.seed)
            try:
                output = self.model.generate(
                    prompt_ids, attention_mask=self._torch.ones_like(prompt_ids),
                    pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                    **generate_kwargs(params))
            except (RuntimeError, ValueError) as error:
                raise ModelCallError(f"hf generate failed: {error}") from None
        new_ids = output[0, prompt_ids.shape[1]:]
        text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        stopped = bool(len(new_ids)) and int(new_ids[-1]) == self.tokenizer.eos_token_id
        finish = "length" if len(new_ids) >= params.max_tokens and not stopped else "stop"
        response = ChatResponse(text=text, prompt_tokens=int(prompt_ids.shape[1]),
                                completion_tokens=int(len(new_ids)), finish_reason=finish,
                                latency_s=time.perf_counter() - started)
        return apply_emulated_calls(response, params)

    def complete_batch(self, conversations: Sequence[list[Message]],
                       params: GenerationParams | Sequence[GenerationParams]) -> list[ChatResponse]:
        """Replies for many conversations, in order (sequential)."""
        per_item = [params] * len(conversations) if isinstance(params, GenerationParams) else list(params)
        return [self.complete(c, p) for c, p in zip(conversations, per_item, strict=True)]

    def _cuda_devices(self) -> list[int]:
        if self.device.startswith("cuda"):
            return [int(self.device.partition(":")[2] or 0)]
        return []

    def close(self) -> None:
        """Release the model."""
        self.model = None
