"""Cache keys must never change: a resumed run finds its stored replies only by these bytes.

The hex values below were computed by the implementation before the cache key stopped calling
``dataclasses.asdict`` (commit e69865a); a change to them orphans every stored reply.
"""

import hashlib
import json

import pytest

from memlens.models import ChatRequest, GenerationParams

MODEL = "openai:gpt-4.1-mini@http://127.0.0.1:8000/v1"
MESSAGES = ({"role": "system", "content": "Answer step by step."},
            {"role": "user", "content": "Über 2 + 2? ünïcödé"})
TOOL = {"type": "function", "function": {"name": "recall", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}}}}
SCHEMA = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "array"}}}

KNOWN_KEYS = [
    (ChatRequest(MESSAGES),
     "16d1bd74e787a0b35100f222b4c941fd63c043d8eb6621ce325f4e0cbebda130"),
    (ChatRequest(MESSAGES, GenerationParams(temperature=0.0, max_tokens=64, seed=7), 3, "tag"),
     "e8abb030ab808f0c020c89df26c92117a97b3ad6ded4f0036268bcaee71d77af"),
    (ChatRequest(MESSAGES, GenerationParams(json_schema=SCHEMA, tools=(TOOL,), tool_choice="auto")),
     "7bff2c0c133c4887e04cc6f026b8f3a08425db67d4cb3c0caa3508e0d7c82690"),
]


@pytest.mark.parametrize(("request_", "key"), KNOWN_KEYS)
def test_cache_key_bytes_are_unchanged(request_, key):
    assert request_.cache_key(MODEL) == key


@pytest.mark.parametrize(("request_", "key"), KNOWN_KEYS)
def test_cache_key_is_the_sha256_of_the_documented_payload(request_, key):
    payload = json.dumps({"model": MODEL, "messages": list(request_.messages),
                          "params": request_.params.to_dict(),
                          "sample_index": request_.sample_index},
                         sort_keys=True, ensure_ascii=False, default=str)
    assert hashlib.sha256(payload.encode("utf-8")).hexdigest() == key

