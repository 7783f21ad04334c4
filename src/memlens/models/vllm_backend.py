"""vLLM offline engine backend (``vllm:PATH_OR_ID``): batched generation on local GPUs.

``LLM(model, tensor_parallel_size=…)`` is created once; ``complete_batch`` hands a whole list of
conversations to ``llm.chat`` (which applies the model's own chat template) so vLLM batches them —
the engine's runner uses it when present. JSON schemas use vLLM's structured outputs; tools are
emulated the same way (``memlens.models.tool_emulation``), so ``supports_tools`` is False.
vLLM is imported only when this backend is built (``pip install 'memlens[vllm]'``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from memlens.errors import MemlensError, missing_extra
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError
from memlens.models.fingerprint import fingerprint_model, with_fingerprint
from memlens.models.tool_emulation import (
    apply_emulated_calls,
    constraint_schema,
    prepare_messages,
)


def sampling_kwargs(params: GenerationParams) -> dict[str, Any]:
    """Keyword arguments for ``vllm.SamplingParams`` (without structured output).

    >>> sampling_kwargs(GenerationParams(temperature=0.0, top_k=None, max_tokens=5, seed=2))
    {'temperature': 0.0, 'top_p': 0.98, 'top_k': -1, 'max_tokens': 5, 'seed': 2}
    """
    return {"temperature": params.temperature, "top_p": params.top_p,
            "top_k": -1 if params.top_k is None else params.top_k,
            "max_tokens": params.max_tokens, "seed": params.seed}


def _sampling_params(vllm: Any, params: GenerationParams) -> Any:
    kwargs = sampling_kwargs(params)
    schema = constraint_schema(params)
    if schema is not None:
        try:  # vLLM >= 0.10
            from vllm.sampling_params import StructuredOutputsParams

            kwargs["structured_outputs"] = StructuredOutputsParams(json=schema)
        except ImportError:  # older vLLM
            from vllm.sampling_params import GuidedDecodingParams

            kwargs["guided_decoding"] = GuidedDecodingParams(json=schema)
    return vllm.SamplingParams(**kwargs)


def to_response(output: Any, params: GenerationParams, latency_s: float) -> ChatResponse:
    """A ``ChatResponse`` from one vLLM ``RequestOutput``."""
    completion = output.outputs[0]
    response = ChatResponse(text=completion.text,
                            prompt_tokens=len(output.prompt_token_ids or []),
                            completion_tokens=len(completion.token_ids or []),
                            finish_reason=str(completion.finish_reason or "stop"),
                            latency_s=latency_s)
    return apply_emulated_calls(response, params)


class VLLMModel:
    """A local model in vLLM's offline engine. ``complete_batch`` is the fast path."""

    supports_tools = False

    def __init__(self, model: str, tensor_parallel_size: int = 1, max_concurrency: int = 256,
                 dtype: str = "auto", gpu_memory_utilization: float = 0.9,
                 max_model_len: int | None = None, seed: int = 0):
        try:
            import vllm
        except ImportError:
            raise missing_extra("vllm", "vllm") from None

        self._vllm = vllm
        self.fingerprint = fingerprint_model(model)  # weights, so a retrained folder is new
        self.model_id = with_fingerprint(f"vllm:{model}", self.fingerprint)
        self.max_concurrency = max_concurrency
        try:
            self._llm = vllm.LLM(model=model, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
                                 gpu_memory_utilization=gpu_memory_utilization,
                                 max_model_len=max_model_len, seed=seed)
        except (OSError, ValueError) as error:
            raise MemlensError(f"vllm: cannot load model '{model}': {error}") from None

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """One reply (a batch of one)."""
        return self.complete_batch([messages], params)[0]

    def complete_batch(self, conversations: Sequence[list[Message]],
                       params: GenerationParams | Sequence[GenerationParams]) -> list[ChatResponse]:
        """Replies for many conversations in one batched ``llm.chat`` call, in order.

        ``params`` is one ``GenerationParams`` for all, or one per conversation. A failure of
        the engine raises ``ModelCallError`` for the whole batch.
        """
        per_item = [params] * len(conversations) if isinstance(params, GenerationParams) else list(params)
        if len(per_item) != len(conversations):
            raise ValueError("complete_batch: one GenerationParams per conversation expected")
        prepared = [prepare_messages(c, p) for c, p in zip(conversations, per_item, strict=True)]
        sampling = [_sampling_params(self._vllm, p) for p in per_item]
        started = time.perf_counter()
        try:
            outputs = self._llm.chat(prepared, sampling_params=sampling, use_tqdm=False)
        except Exception as error:  # noqa: BLE001 - engine errors are recorded per request
            raise ModelCallError(f"vllm error: {type(error).__name__}: {error}") from None
        latency = (time.perf_counter() - started) / max(1, len(outputs))
        return [to_response(o, p, latency) for o, p in zip(outputs, per_item, strict=True)]

    def close(self) -> None:
        """Drop the engine (frees GPU memory once garbage-collected)."""
        self._llm = None
