import math

from memlens.engine import RunPlan, estimate_prompt_tokens, plan_requests, run_requests
from memlens.models import ChatRequest, ChatResponse, FakeModel, GenerationParams
from memlens.store import RunStore


def ask(text, max_tokens=100, tools=None):
    return ChatRequest(({"role": "system", "content": "be brief"}, {"role": "user", "content": text}),
                       GenerationParams(max_tokens=max_tokens, tools=tools))


def test_token_estimate_is_chars_over_four():
    assert estimate_prompt_tokens(ask("x" * 24)) == math.ceil((8 + 24) / 4)
    tool = ({"type": "function", "function": {"name": "f"}},)
    with_tools = estimate_prompt_tokens(ask("x" * 24, tools=tool))
    assert with_tools == math.ceil((32 + len('[{"type": "function", "function": {"name": "f"}}]')) / 4)


def test_plan_counts_calls_cached_duplicates_and_tokens(tmp_path):
    requests = [ask("a" * 40), ask("b" * 40), ask("a" * 40), ask("c" * 40, max_tokens=10)]
    model = FakeModel(lambda messages, params: ChatResponse("r", completion_tokens=30))
    plan = plan_requests(model, requests)
    assert plan == RunPlan(calls=3, cached=0, est_prompt_tokens=3 * 12,
                           est_completion_tokens=210, duplicates=1)
    with RunStore(tmp_path) as store:
        run_requests(model, requests[:1], store, progress=False)
        plan = plan_requests(model, requests, store)
        assert model.calls and len(model.calls) == 1  # planning made no call
    assert (plan.calls, plan.cached, plan.duplicates) == (2, 2, 0)
    assert plan.calls + plan.cached + plan.duplicates == len(requests)
    assert plan.est_prompt_tokens == 24 and plan.est_completion_tokens == 110
    assert plan.typical_completion_tokens == 60  # 2 calls x mean 30 stored
    assert str(plan) == ("2 calls to make, 2 cached; ~24 prompt tokens, at most 110 completion "
                         "tokens (typically ~60)")


def test_failed_requests_are_planned_again(tmp_path):
    request = ask("q")
    with RunStore(tmp_path) as store:
        store.put_failure(request.cache_key("fake"), request, "HTTP 500", 3)
        assert plan_requests(FakeModel(), [request], store).calls == 1
