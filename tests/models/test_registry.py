"""Model strings resolve to backends that satisfy the ChatModel protocol."""

import pytest

from memlens.errors import MemlensError
from memlens.models import ChatModel, get_model
from memlens.models.modelstring import parse_model_string


@pytest.mark.parametrize(("string", "model_id"), [
    ("fake", "fake"),
    ("openai:qwen3-4b@http://127.0.0.1:8000/v1/", "openai:qwen3-4b@http://127.0.0.1:8000/v1"),
    ("anthropic:claude-x@http://localhost:9000/v1", "anthropic:claude-x@http://127.0.0.1:9000"),
])
def test_backends_follow_the_protocol(string, model_id, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = get_model(string)
    assert isinstance(model, ChatModel)
    assert model.model_id == model_id
    assert getattr(model, "max_concurrency", 1) >= 1
    getattr(model, "close", lambda: None)()


@pytest.mark.parametrize(("string", "message"), [
    ("gpt-4", "unknown or unavailable model 'gpt-4'"),
    ("openai:", "needs a name after 'openai:'"),
    ("embedded:big", "'embedded' takes no name"),
    ("hf:", "needs a name after 'hf:'"),
])
def test_bad_model_strings(string, message):
    with pytest.raises(MemlensError, match=message):
        parse_model_string(string)


def test_unknown_option_lists_accepted_ones(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with pytest.raises(MemlensError, match="unknown option 'n_parallel' for the openai backend "
                                           r"\(accepted: base_url, api_key_env, timeout_s"):
        get_model("openai:gpt-4.1-mini", n_parallel=2)


@pytest.mark.parametrize("model", [
    "fake", "embedded", "openai:qwen3-4b@http://127.0.0.1:8000/v1/",
    "anthropic:claude-x@http://127.0.0.1:8001", "openai:m@http://127.0.0.1:9/v1",
])
def test_model_id_for_equals_the_built_backend(model, monkeypatch):
    """--dry-run plans with model_id_for: it must be the id the real backend caches under."""
    from memlens.models import model_id_for

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert model_id_for(model) == get_model(model).model_id


def test_model_id_for_needs_no_backend_or_key(monkeypatch):
    from memlens.models import model_id_for

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert model_id_for("openai:gpt-4.1-mini") == "openai:gpt-4.1-mini"
    assert model_id_for("vllm:Qwen/Qwen3-4B") == "vllm:Qwen/Qwen3-4B"
    assert model_id_for("hf:/models/tiny") == "hf:/models/tiny"
    with pytest.raises(MemlensError, match="unknown or unavailable model"):
        model_id_for("nope:x")
