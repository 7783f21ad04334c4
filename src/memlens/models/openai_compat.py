"""OpenAI-compatible chat backend (``openai:MODEL`` / ``openai:MODEL@BASE_URL``).

Works with api.openai.com and any OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
Ollama, Together, memlens' loopback server). The SDK's own retries are off; memlens retries
429 / 5xx / timeouts / connection errors itself with jittered exponential backoff and honours
``Retry-After``; garbled or empty HTTP-200 replies get a separate small budget of extra tries. ``top_k`` is not an OpenAI parameter: it is sent in the request body only to
servers other than api.openai.com (which accept it).

Tool choice: ``"auto"`` / ``"required"`` / ``"none"`` are sent as they are; any other string
names the function to force and is sent as ``{"type": "function", "function": {"name": …}}``
(llama.cpp answers a bare name with HTTP 400 "Invalid tool_choice").

Forced calls on servers that cannot force: llama.cpp's server accepts ``tools`` and
``tool_choice: required`` / a named function for a model whose chat template has no tool support
(SmolLM2: ``chat_template_caps.supports_tools`` false) and silently answers in prose. When a
forced call (``required`` or a name) comes back with no tool call, the call is made again with
the tool's parameters as a ``response_format`` JSON schema (constrained decoding, which
llama.cpp, vLLM and OpenAI support) and the output becomes the tool call; the reply says so in
``raw["tool_emulation"] = "response_format"``, and later forced calls of the same model go
straight to that path (``forced_tools="auto"``). ``forced_tools="native"`` never falls back (a
no-call reply is kept as it is); ``"schema"`` always uses the JSON schema.
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
from memlens.models.modelstring import api_model_id
from memlens.models.public import split_base_url
from memlens.models.retry import Failure, MalformedReply, RetryPolicy
from memlens.models.tool_emulation import (
    apply_emulated_calls,
    tool_instruction,
    tool_schema,
    with_instruction,
)

TOOL_CHOICE_KEYWORDS = ("auto", "required", "none")
FORCED_TOOLS = ("auto", "native", "schema")


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
            request["tool_choice"] = tool_choice_for(params.tool_choice)
    if params.top_k is not None and not official:
        request["extra_body"] = {"top_k": params.top_k}
    return request


def tool_choice_for(choice: str) -> str | dict:
    """The wire form of ``GenerationParams.tool_choice``: a keyword as is, a name as the
    OpenAI named-function object.

    >>> tool_choice_for("required"), tool_choice_for("book_flight")["function"]
    ('required', {'name': 'book_flight'})
    """
    if choice in TOOL_CHOICE_KEYWORDS:
        return choice
    return {"type": "function", "function": {"name": choice}}


def forces_call(params: GenerationParams) -> bool:
    """True when ``params`` ask for a tool call that must happen (``required`` or a name).

    >>> tools = ({"function": {"name": "f"}},)
    >>> forces_call(GenerationParams(tools=tools, tool_choice="f"))
    True
    >>> forces_call(GenerationParams(tools=tools, tool_choice="auto"))
    False
    """
    return bool(params.tools) and params.tool_choice not in (None, "auto", "none")


def tools_to_force(params: GenerationParams) -> tuple:
    """The tools a forced call may use: the named one, or all of them for ``required`` (and
    for a name that is not among the tools: the server, not the backend, judges the request)."""
    named = [tool for tool in params.tools or ()
             if tool.get("function", tool).get("name") == params.tool_choice]
    return tuple(named) if named else tuple(params.tools or ())


def schema_call_request(model: str, messages: list[Message], params: GenerationParams,
                        official: bool) -> tuple[dict[str, Any], GenerationParams]:
    """The request that emulates a forced call with a ``response_format`` JSON schema (no
    ``tools`` sent), and the params ``apply_emulated_calls`` reads the output with.

    The tool instruction is merged into a leading system message rather than added as a
    second one (some chat templates refuse a system message that is not first).

    >>> tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    >>> request, _ = schema_call_request("m", [{"role": "user", "content": "hi"}],
    ...     GenerationParams(tools=(tool,), tool_choice="required"), official=False)
    >>> "tools" in request, request["response_format"]["json_schema"]["schema"]
    (False, {'type': 'object'})
    """
    tools = tools_to_force(params)
    emulated = params.replace(tools=tools, tool_choice="required")
    schema, _ = tool_schema(tools)
    plain = params.replace(tools=None, tool_choice=None, json_schema=schema)
    sent = with_instruction(messages, tool_instruction(tools))
    return build_request(model, sent, plain, official), emulated


async def post_chat(client: Any, request: dict[str, Any]) -> str:
    """POST ``request`` (``build_request``'s keyword arguments, ``extra_body`` merged in) to
    ``/chat/completions`` through the SDK client — its auth, timeout and error classes — and
    return the body text. The SDK's ``chat.completions.create`` re-walks every request body
    against its typed schema first; at 128 calls in flight that was about 40 % of the client's
    CPU per call (issue 12), for a body ``build_request`` already made valid.
    """
    import httpx

    body = {key: value for key, value in request.items() if key != "extra_body"}
    body.update(request.get("extra_body") or {})
    response = await client.post("/chat/completions", body=body, cast_to=httpx.Response)
    return response.text


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


def server_context_tokens(base_url: str, api_key: str = "", timeout_s: float = 5.0) -> int:
    """``n_ctx`` from an OpenAI-compatible server's ``/props`` (llama.cpp reports it per slot,
    under ``default_generation_settings``), 0 when the server does not say."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    url = urlunsplit((parts.scheme, parts.netloc, f"{root}/props", "", ""))
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}"}
                                     if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            data = json.loads(reply.read(1_000_000))
    except (OSError, ValueError, urllib.error.URLError):
        return 0
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    value = (settings or {}).get("n_ctx") if isinstance(settings, dict) else None
    value = data.get("n_ctx") if value is None and isinstance(data, dict) else value
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


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
                 max_concurrency: int = 32, retry: RetryPolicy | None = None,
                 forced_tools: str = "auto"):
        if forced_tools not in FORCED_TOOLS:
            raise ValueError(f"forced_tools must be one of {FORCED_TOOLS}, got {forced_tools!r}")
        self.forced_tools = forced_tools
        """How a forced tool call is made: "auto" (native, JSON-schema fallback when the
        server ignores the force), "native" or "schema" (see the module docstring)."""
        self.forcing_ignored = False
        """Set once this server answered a forced call without a tool call (from then on forced
        calls go through the JSON schema)."""
        try:
            import openai  # noqa: F401
        except ImportError:
            raise missing_extra("openai", "api") from None
        self.model_name = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model_id = api_model_id("openai", model, self.base_url)  # no URL credentials
        self._official = is_official_openai(self.base_url)
        self._context: int | None = None
        super().__init__(api_key=resolve_api_key(api_key_env, self.base_url, "openai"),
                         timeout_s=timeout_s, max_concurrency=max_concurrency, retry=retry,
                         api_key_env=api_key_env)

    def context_tokens(self) -> int | None:
        """The context size (prompt + reply tokens of one call) the server reports, or None:
        llama.cpp's ``GET /props`` (``default_generation_settings.n_ctx``, per slot), asked once
        with a 5-s limit. Hosted APIs report none."""
        if self._context is None:
            self._context = (server_context_tokens(self.base_url, self._api_key)
                             if self.base_url and not self._official else 0)
        return self._context or None

    @property
    def forces_tool_choice(self) -> bool:
        """Whether a forced ``tool_choice`` is honoured natively, as far as is known: False with
        ``forced_tools="schema"`` or once the server ignored a force, else True."""
        return self.forced_tools != "schema" and not self.forcing_ignored

    def _make_client(self) -> Any:
        import openai

        # httpx sends a base URL's user:password as Basic auth; aiohttp refuses such a URL
        in_url = "@" in urlparse(self.base_url or "").netloc
        base_url, query = split_base_url(self.base_url) if self.base_url else (None, {})
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=base_url,
                                  default_query=query or None, max_retries=0,
                                  timeout=self.timeout_s,
                                  http_client=None if in_url else
                                  _fast_http_client(openai, self.max_concurrency))

    async def _attempt(self, client: Any, messages: list[Message],
                       params: GenerationParams) -> ChatResponse:
        forced = forces_call(params) and self.forced_tools != "native"
        if forced and (self.forced_tools == "schema" or self.forcing_ignored):
            return await self._schema_call(client, messages, params)
        request = build_request(self.model_name, messages, params, self._official)
        response = parse_response(await post_chat(client, request))
        if forced and not response.tool_calls:
            self.forcing_ignored = True  # the server took the force and ignored it
            emulated = await self._schema_call(client, messages, params)
            # both calls were paid for
            emulated.prompt_tokens += response.prompt_tokens
            emulated.completion_tokens += response.completion_tokens
            return emulated
        return response

    async def _schema_call(self, client: Any, messages: list[Message],
                           params: GenerationParams) -> ChatResponse:
        request, emulated = schema_call_request(self.model_name, messages, params, self._official)
        response = apply_emulated_calls(parse_response(await post_chat(client, request)), emulated)
        response.raw = {**(response.raw or {}), "tool_emulation": "response_format"}
        return response

    def _classify(self, error: BaseException) -> Failure | None:
        import openai

        return sdk_failure(error, openai, openai.OpenAIError, self.timeout_s)
