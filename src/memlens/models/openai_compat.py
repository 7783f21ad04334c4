"""OpenAI-compatible chat backend (``openai:MODEL`` / ``openai:MODEL@BASE_URL``).

Works with api.openai.com and any OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
Ollama, Together, memlens' loopback server). The SDK's own retries are off; memlens retries
429 / 5xx / timeouts / connection errors itself with jittered exponential backoff and honours
``Retry-After``; garbled or empty HTTP-200 replies get a separate small budget of extra tries. ``top_k`` is not an OpenAI parameter: it is sent in the request body only to
servers other than api.openai.com (which accept it).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any
from urllib.parse import urlparse

from memlens.errors import missing_extra
from memlens.models.api_base import AsyncAPIModel, check_not_empty, sdk_failure
from memlens.models.base import ChatResponse, GenerationParams, Message, ToolCall
from memlens.models.keys import resolve_api_key
from memlens.models.public import api_model_id
from memlens.models.retry import Failure, MalformedReply, RetryPolicy


def is_official_openai(base_url: str | None) -> bool:
    """True when requests go to api.openai.com (the default with no base URL).

    >>> is_official_openai(None), is_official_openai("http://127.0.0.1:8000/v1")
    (True, False)
    """
    return base_url is None or (urlparse(base_url).hostname or "").endswith("api.openai.com")


def response_format_for(schema: dict) -> dict:
    """The ``response_format`` for a JSON schema (bare, or already ``{"name", "schema"}``).

    >>> response_format_for({"type": "object"})["json_schema"]["name"]
    'response'
    """
    if "schema" in schema and "name" in schema:
        return {"type": "json_schema", "json_schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}


def build_request(model: str, messages: list[Message], params: GenerationParams,
                  official: bool) -> dict[str, Any]:
    """Keyword arguments for ``chat.completions.create``.

    >>> request = build_request("m", [], GenerationParams(top_k=5, seed=1), official=False)
    >>> request["extra_body"], request["seed"], request["max_tokens"]
    ({'top_k': 5}, 1, 2048)
    >>> "extra_body" in build_request("m", [], GenerationParams(), official=True)
    False
    """
    request: dict[str, Any] = {"model": model, "messages": list(messages),
                               "temperature": params.temperature, "top_p": params.top_p}
    # api.openai.com's newer models accept only max_completion_tokens; other servers max_tokens.
    request["max_completion_tokens" if official else "max_tokens"] = params.max_tokens
    if params.seed is not None:
        request["seed"] = params.seed
    if params.json_schema is not None:
        request["response_format"] = response_format_for(params.json_schema)
    if params.tools:
        request["tools"] = [dict(tool) for tool in params.tools]
        if params.tool_choice:
            request["tool_choice"] = params.tool_choice
    if params.top_k is not None and not official:
        request["extra_body"] = {"top_k": params.top_k}
    return request


def parse_response(body_text: str) -> ChatResponse:
    """Parse a chat-completions body; ``MalformedReply("malformed reply: …")`` when unusable
    (not JSON, no choices, or an empty reply that claims to have finished: no text, no tool
    call, ``finish_reason`` stop).

    >>> parse_response('{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}').text
    'hi'
    >>> parse_response("{oops")
    Traceback (most recent call last):
    ...
    memlens.models.retry.MalformedReply: malformed reply: body is not JSON: '{oops'
    """
    try:
        data = json.loads(body_text)
    except ValueError:
        raise MalformedReply(f"malformed reply: body is not JSON: {body_text[:80]!r}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise MalformedReply(f"malformed reply: no choices in {body_text[:80]!r}")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedReply("malformed reply: choice without a message")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    response = ChatResponse(
        text=message.get("content") or "",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        finish_reason=str(choices[0].get("finish_reason") or "stop"),
        tool_calls=_tool_calls(message.get("tool_calls")),
        raw={key: data[key] for key in ("id", "model", "system_fingerprint") if key in data},
    )
    check_not_empty(response)
    return response


def _tool_calls(raw_calls: Any) -> list[ToolCall]:
    calls = []
    for call in raw_calls or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(ToolCall(name=str(function.get("name", "")), arguments_json=arguments))
    return calls


def split_model_string(name: str) -> tuple[str, str | None]:
    """``"qwen@http://h/v1"`` -> ``("qwen", "http://h/v1")``.

    >>> split_model_string("gpt-4.1-mini"), split_model_string("q@http://127.0.0.1:8/v1")
    (('gpt-4.1-mini', None), ('q', 'http://127.0.0.1:8/v1'))
    """
    index = name.lower().find("@http")
    if index < 0:
        return name, None
    return name[:index], name[index + 1:].rstrip("/")


def _fast_http_client(openai: Any, max_concurrency: int) -> Any:
    """The SDK's aiohttp transport when ``aiohttp`` is installed (``memlens[api]`` installs it),
    else None (the SDK's default httpx client).

    Client CPU per call fell from ~1.5 ms (httpx) to ~0.9 ms (aiohttp), which is what bounds
    throughput at 128 concurrent calls (benchmarks/bench_runner.py). The connection pool is
    sized to the concurrency so no call waits for a connection.
    """
    if importlib.util.find_spec("aiohttp") is None or not hasattr(openai, "DefaultAioHttpClient"):
        return None
    try:
        import httpx2 as httpx_module  # recent SDKs ship their own httpx fork
    except ImportError:
        import httpx as httpx_module

    limits = httpx_module.Limits(max_connections=max(100, max_concurrency),
                                 max_keepalive_connections=max(100, max_concurrency))
    return openai.DefaultAioHttpClient(limits=limits)


class OpenAIModel(AsyncAPIModel):
    """An OpenAI-compatible chat model. The key comes from ``$api_key_env`` only."""

    def __init__(self, model: str, base_url: str | None = None, *,
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 120.0,
                 max_concurrency: int = 32, retry: RetryPolicy | None = None):
        try:
            import openai  # noqa: F401
        except ImportError:
            raise missing_extra("openai", "api") from None
        self.model_name = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model_id = api_model_id("openai", model, self.base_url)  # no URL credentials
        self._official = is_official_openai(self.base_url)
        super().__init__(api_key=resolve_api_key(api_key_env, self.base_url, "openai"),
                         timeout_s=timeout_s, max_concurrency=max_concurrency, retry=retry,
                         api_key_env=api_key_env)

    def _make_client(self) -> Any:
        import openai

        # httpx sends a base URL's user:password as Basic auth; aiohttp refuses such a URL
        in_url = "@" in urlparse(self.base_url or "").netloc
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                  max_retries=0, timeout=self.timeout_s,
                                  http_client=None if in_url else
                                  _fast_http_client(openai, self.max_concurrency))

    async def _attempt(self, client: Any, messages: list[Message],
                       params: GenerationParams) -> ChatResponse:
        request = build_request(self.model_name, messages, params, self._official)
        raw = await client.chat.completions.with_raw_response.create(**request)
        return parse_response(raw.http_response.text)

    def _classify(self, error: BaseException) -> Failure | None:
        import openai

        return sdk_failure(error, openai, openai.OpenAIError, self.timeout_s)
