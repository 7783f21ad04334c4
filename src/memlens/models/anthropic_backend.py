"""Anthropic Messages API backend (``anthropic:MODEL`` / ``anthropic:MODEL@BASE_URL``).

Same retry, timeout, concurrency and key rules as the OpenAI backend (``api_base``). Mapping:
system messages become the ``system`` field; OpenAI-format tools become Anthropic tools
(``tool_choice`` ``required`` -> ``any``); ``json_schema`` is served by a forced tool named
``respond`` whose input is returned as the reply text. Anthropic takes no seed, and temperature is
clamped to [0, 1]; ``top_p`` is sent only with ``send_top_p=True`` because newer Claude models
refuse temperature and top_p together.
"""

from __future__ import annotations

import json
from typing import Any

from memlens.errors import missing_extra
from memlens.models.api_base import AsyncAPIModel, check_not_empty, sdk_failure
from memlens.models.base import ChatResponse, GenerationParams, Message, ToolCall
from memlens.models.keys import resolve_api_key
from memlens.models.modelstring import api_model_id
from memlens.models.public import split_base_url
from memlens.models.retry import Failure, MalformedReply, RetryPolicy

SCHEMA_TOOL = "respond"
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                 "tool_use": "tool_calls"}
_TOOL_CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def build_request(model: str, messages: list[Message], params: GenerationParams,
                  send_top_p: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``messages.create``.

    >>> request = build_request("claude", [{"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": "hi"}], GenerationParams(temperature=1.3, top_k=5))
    >>> request["system"], request["messages"], request["extra_body"]
    ('Be brief.', [{'role': 'user', 'content': 'hi'}], {'temperature': 1.0, 'top_k': 5})
    """
    system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
    request: dict[str, Any] = {
        "model": model, "max_tokens": params.max_tokens,
        "messages": [{"role": m["role"], "content": m["content"]}
                     for m in messages if m.get("role") != "system"],
    }
    # Sampling goes in extra_body: recent SDKs dropped these keyword arguments, the API takes them.
    sampling: dict[str, Any] = {"temperature": min(1.0, max(0.0, params.temperature))}
    if params.top_k is not None:
        sampling["top_k"] = params.top_k
    if send_top_p:
        sampling["top_p"] = params.top_p
    request["extra_body"] = sampling
    if system:
        request["system"] = system
    if params.tools:
        request["tools"] = [_anthropic_tool(tool) for tool in params.tools]
        if params.tool_choice:
            # any other string names the tool to force
            request["tool_choice"] = _TOOL_CHOICES.get(params.tool_choice,
                                                       {"type": "tool", "name": params.tool_choice})
    elif params.json_schema is not None:
        request["tools"] = [{"name": SCHEMA_TOOL, "description": "Reply with this structure.",
                             "input_schema": params.json_schema}]
        request["tool_choice"] = {"type": "tool", "name": SCHEMA_TOOL}
    return request


def _anthropic_tool(tool: dict) -> dict:
    function = tool.get("function", tool)
    return {"name": function["name"], "description": function.get("description", ""),
            "input_schema": function.get("parameters") or {"type": "object"}}


def parse_response(body_text: str, params: GenerationParams) -> ChatResponse:
    """Parse a Messages API body; ``MalformedReply("malformed reply: …")`` if unusable
    (also an empty reply that says it stopped normally).

    >>> parse_response('{"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",'
    ...                ' "usage": {"input_tokens": 3, "output_tokens": 1}}', GenerationParams()).text
    'hi'
    """
    try:
        data = json.loads(body_text)
    except ValueError:
        raise MalformedReply(f"malformed reply: body is not JSON: {body_text[:80]!r}") from None
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list):
        raise MalformedReply(f"malformed reply: no content in {body_text[:80]!r}")
    texts, calls = [], []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(ToolCall(str(block.get("name", "")), json.dumps(block.get("input", {}))))
    finish = _STOP_REASONS.get(str(data.get("stop_reason")), str(data.get("stop_reason")))
    if params.json_schema is not None and not params.tools:
        schema_calls = [c for c in calls if c.name == SCHEMA_TOOL]
        texts, calls, finish = [c.arguments_json for c in schema_calls[:1]], [], "stop"
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    response = ChatResponse(text="".join(texts), prompt_tokens=int(usage.get("input_tokens") or 0),
                            completion_tokens=int(usage.get("output_tokens") or 0),
                            finish_reason=finish, tool_calls=calls,
                            raw={key: data[key] for key in ("id", "model") if key in data})
    check_not_empty(response)
    return response


class AnthropicModel(AsyncAPIModel):
    """A Claude model over the Messages API. The key comes from ``$api_key_env`` only."""

    def __init__(self, model: str, base_url: str | None = None, *,
                 api_key_env: str = "ANTHROPIC_API_KEY", timeout_s: float = 120.0,
                 max_concurrency: int = 16, retry: RetryPolicy | None = None,
                 send_top_p: bool = False):
        try:
            import anthropic  # noqa: F401
        except ImportError:
            raise missing_extra("anthropic", "api") from None
        self.model_name = model
        self.base_url = base_url.rstrip("/") if base_url else None
        if self.base_url and self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]  # the SDK appends /v1/messages itself
        self.model_id = api_model_id("anthropic", model, self.base_url)  # no URL credentials
        self.send_top_p = send_top_p
        super().__init__(api_key=resolve_api_key(api_key_env, self.base_url, "anthropic"),
                         timeout_s=timeout_s, max_concurrency=max_concurrency, retry=retry,
                         api_key_env=api_key_env)

    def _make_client(self) -> Any:
        import anthropic

        base_url, query = split_base_url(self.base_url) if self.base_url else (None, {})
        if base_url and base_url.endswith("/v1"):
            base_url = base_url[:-3]  # the SDK appends /v1/messages itself
        return anthropic.AsyncAnthropic(api_key=self._api_key, base_url=base_url,
                                        default_query=query or None, max_retries=0,
                                        timeout=self.timeout_s)

    async def _attempt(self, client: Any, messages: list[Message],
                       params: GenerationParams) -> ChatResponse:
        request = build_request(self.model_name, messages, params, self.send_top_p)
        raw = await client.messages.with_raw_response.create(**request)
        return parse_response(raw.http_response.text, params)

    def _classify(self, error: BaseException) -> Failure | None:
        import anthropic

        return sdk_failure(error, anthropic, anthropic.AnthropicError, self.timeout_s)
