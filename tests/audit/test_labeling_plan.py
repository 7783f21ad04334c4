"""The dry-run plan of an LLM labeler: calls and tokens from the real labeler prompt."""

import json

from memlens.audit.config import AuditConfig
from memlens.audit.plan import labeling_plan
from memlens.engine.plan import CHARS_PER_TOKEN
from memlens.models.loopback import LoopbackServer
from memlens.ontology import get_labeler, load_ontology


def test_embedded_labeler_makes_no_calls():
    assert labeling_plan(AuditConfig(labeler="embedded"), 100) is None


def test_plan_brackets_the_prompts_the_labeler_really_sends(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    steps = ["I weigh the risk to my savings first.", "Then I compare the two offers."]
    with LoopbackServer(responder=lambda body: json.dumps(
            {"labels": [{"step": 1, "label": "x"}]})) as server:
        spec = f"openai:loop@{server.base_url}"
        plan = labeling_plan(AuditConfig(labeler=spec, max_tokens=64), 3)
        labeler = get_labeler(spec, ontology=load_ontology())
        labeler.label([steps])
        sent = server.requests[0].body
    chars = sum(len(m["content"]) for m in sent["messages"])
    schema = sent.get("response_format", {}).get("json_schema", {}).get("schema")
    chars += len(json.dumps(schema)) if schema else 0
    real = chars / CHARS_PER_TOKEN
    steps_tokens = sum(len(s) for s in steps) / CHARS_PER_TOKEN
    assert plan.calls == 3
    assert plan.fixed_prompt_tokens > 2500  # the whole ontology rides on every call
    # the real request = the fixed part + the numbered steps (a few tokens of numbering each)
    assert abs(real - (plan.fixed_prompt_tokens + steps_tokens)) < 30
    assert plan.run_plan.est_prompt_tokens == 3 * (plan.fixed_prompt_tokens + 64)
    assert plan.max_completion_tokens == labeler.params.max_tokens
