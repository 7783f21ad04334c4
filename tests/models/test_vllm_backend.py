"""vLLM backend: parameter mapping and batching, with a stand-in ``vllm`` module (unit test —
vLLM needs a GPU and cannot be installed here)."""

import sys
import types
from types import SimpleNamespace

import pytest

from memlens.errors import MemlensError
from memlens.models import GenerationParams, ModelCallError, get_model

TOOL = {"type": "function", "function": {"name": "pick", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}}}}


class FakeLLM:
    instances: list = []

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.calls = []
        FakeLLM.instances.append(self)

    def chat(self, conversations, sampling_params, use_tqdm):
        self.calls.append((conversations, sampling_params))
        if conversations[0][-1]["content"] == "explode":
            raise RuntimeError("CUDA out of memory")
        return [SimpleNamespace(prompt_token_ids=[1] * (10 + i), outputs=[SimpleNamespace(
            text='{"n": 3}' if s.structured_outputs else f"reply {i}",
            token_ids=[7, 8, 9], finish_reason="stop")]) for i, s in enumerate(sampling_params)]


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    module.SamplingParams = lambda **kwargs: SimpleNamespace(**{"structured_outputs": None, **kwargs})
    sampling_module = types.ModuleType("vllm.sampling_params")
    sampling_module.StructuredOutputsParams = lambda json: {"json": json}
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling_module)
    FakeLLM.instances.clear()
    return module


def test_engine_arguments_and_batched_chat(fake_vllm):
    model = get_model("vllm:org/model-7b", tensor_parallel_size=4)
    assert model.model_id == "vllm:org/model-7b"
    assert FakeLLM.instances[0].kwargs["tensor_parallel_size"] == 4
    assert FakeLLM.instances[0].kwargs["model"] == "org/model-7b"
    conversations = [[{"role": "user", "content": f"q{i}"}] for i in range(3)]
    params = [GenerationParams(seed=i, top_k=None, max_tokens=20) for i in range(3)]
    replies = model.complete_batch(conversations, params)
    assert [r.text for r in replies] == ["reply 0", "reply 1", "reply 2"]
    assert [r.prompt_tokens for r in replies] == [10, 11, 12]
    assert all(r.completion_tokens == 3 for r in replies)
    sent, sampling = FakeLLM.instances[0].calls[0]
    assert sent == conversations  # one batched call
    assert [(s.seed, s.top_k, s.max_tokens) for s in sampling] == [(0, -1, 20), (1, -1, 20), (2, -1, 20)]


def test_tools_are_emulated_with_structured_outputs(fake_vllm):
    model = get_model("vllm:m")
    reply = model.complete([{"role": "user", "content": "choose"}], GenerationParams(tools=(TOOL,)))
    assert [(c.name, c.arguments()) for c in reply.tool_calls] == [("pick", {"n": 3})]
    assert reply.finish_reason == "tool_calls"
    sent, sampling = FakeLLM.instances[0].calls[0]
    assert sent[0][0]["role"] == "system" and "pick" in sent[0][0]["content"]
    assert sampling[0].structured_outputs == {"json": TOOL["function"]["parameters"]}


def test_engine_failure_is_recorded(fake_vllm):
    model = get_model("vllm:m")
    with pytest.raises(ModelCallError, match="vllm error: RuntimeError: CUDA out of memory"):
        model.complete([{"role": "user", "content": "explode"}], GenerationParams())


def test_missing_vllm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(MemlensError, match=r"pip install 'memlens\[vllm\]'"):
        get_model("vllm:m")
