from memlens.models import ChatRequest, FakeModel, GenerationParams, get_model
from memlens.models.base import ToolCall


def test_fake_cycles_scripted_replies():
    model = FakeModel(["first", "second"])
    messages = [{"role": "user", "content": "hi"}]
    texts = [model.complete(messages, GenerationParams()).text for _ in range(3)]
    assert texts == ["first", "second", "first"]
    assert len(model.calls) == 3


def test_cache_key_depends_on_sample_index_and_params_not_tag():
    messages = ({"role": "user", "content": "q"},)
    base = ChatRequest(messages, GenerationParams(), sample_index=0, tag="a")
    assert base.cache_key("fake") == ChatRequest(messages, GenerationParams(), 0, "b").cache_key("fake")
    assert base.cache_key("fake") != ChatRequest(messages, GenerationParams(), 1).cache_key("fake")
    hotter = GenerationParams(temperature=1.0)
    assert base.cache_key("fake") != ChatRequest(messages, hotter).cache_key("fake")
    assert base.cache_key("fake") != base.cache_key("openai:x")


def test_tool_call_arguments_parse_or_none():
    assert ToolCall("f", '{"a": 1}').arguments() == {"a": 1}
    assert ToolCall("f", "{broken").arguments() is None
    assert ToolCall("f", "[1]").arguments() is None


def test_get_model_fake():
    assert get_model("fake").model_id == "fake"
