"""Where ``memlens tooldrift scan`` reads tool schemas from (nothing here classifies them).

- an MCP server over stdio (a command line) or streamable HTTP (a URL), through the official
  ``mcp`` SDK: ``initialize`` then ``tools/list`` (every page) — no tool is ever called; every
  step has a timeout and the server subprocess is ended when the scan leaves;
- an OpenAI / Anthropic tools JSON file (also a saved MCP ``tools/list`` result);
- a Python module of annotated functions: **importing it runs its code** — that is what the user
  asks for with ``--module``; the schema of each public function comes from its signature
  (pydantic, as MCP frameworks do).

Every failure is one ``MemlensError`` naming the source and what went wrong.
"""

from __future__ import annotations

import importlib
import inspect
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError
from memlens.jsonl import parse_json, read_text

DEFAULT_TIMEOUT_S = 30.0
"""Seconds a server gets for ``initialize`` plus every ``tools/list`` page together."""


@dataclass(frozen=True)
class ScannedTool:
    """One tool as its source declared it: the JSON schema of its arguments."""

    name: str
    description: str
    input_schema: dict


@dataclass(frozen=True)
class ToolSource:
    """The tools read from one source, with what is known about the source."""

    kind: str
    """``mcp-stdio``, ``mcp-http``, ``tools-json`` or ``module``."""
    target: str
    """The command line, URL, file or module name as the user gave it."""
    label: str
    """A short name for the source (the MCP server's own name, the file stem, the module)."""
    tools: tuple[ScannedTool, ...]
    seconds: float
    server: dict = field(default_factory=dict)
    """MCP only: ``{name, version, protocol_version}`` from ``initialize``."""

    def to_dict(self) -> dict:
        """JSON form (``tools.json`` of a scan, read back by ``tooldrift build``)."""
        return {"kind": self.kind, "target": self.target, "label": self.label,
                "seconds": round(self.seconds, 3), "server": self.server,
                "tools": [{"name": t.name, "description": t.description,
                           "input_schema": t.input_schema} for t in self.tools]}


def source_from_dict(raw: dict, where: str) -> ToolSource:
    """A ``ToolSource`` from its ``to_dict`` form (a scan's ``tools.json``)."""
    try:
        tools = tuple(ScannedTool(t["name"], t.get("description") or "", t["input_schema"])
                      for t in raw["tools"])
        return ToolSource(raw["kind"], raw["target"], raw["label"], tools,
                          float(raw.get("seconds", 0.0)), dict(raw.get("server") or {}))
    except (KeyError, TypeError) as error:
        raise MemlensError(f"{where}: not a scan's tools file (missing {error})") from None


def _leaf(error: BaseException) -> BaseException:
    """The first non-group exception inside (anyio wraps task failures in groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _stderr_tail(log, limit: int = 600) -> str:
    try:
        log.flush()
        log.seek(0)
        text = log.read().strip()
    except (OSError, ValueError):
        return ""
    return f"; its stderr ends: {text[-limit:]!r}" if text else ""


async def _list_over(streams, timeout_s: float, where: str, stage: list[str]) -> tuple[dict, list]:
    """``initialize`` + every ``tools/list`` page on an open transport."""
    import anyio
    from mcp import ClientSession

    read, write = streams[0], streams[1]
    with anyio.fail_after(timeout_s):
        async with ClientSession(read, write) as session:
            stage[0] = "initialize"
            init = await session.initialize()
            info = {"name": init.server_info.name, "version": init.server_info.version,
                    "protocol_version": str(init.protocol_version)}
            tools, cursor = [], None
            stage[0] = "tools/list"
            for _ in range(1000):  # a server that pages forever is a broken server
                if cursor is None:
                    page = await session.list_tools()
                else:
                    from mcp import types

                    page = await session.list_tools(params=types.PaginatedRequestParams(
                        cursor=cursor))
                tools += page.tools
                cursor = getattr(page, "next_cursor", None)
                if not cursor:
                    return info, tools
            raise MemlensError(f"{where}: tools/list returned more than 1000 pages")


def _explain(error: BaseException, where: str, stage: str, timeout_s: float, tail: str) -> str:
    """One sentence for an MCP failure (the SDK's own exception types vary by transport)."""
    error = _leaf(error)
    text = str(error) or type(error).__name__
    if isinstance(error, TimeoutError):
        return (f"{where}: no answer to '{stage}' within {timeout_s:g} s (a server that hangs, "
                f"or is not an MCP server; --timeout changes the limit){tail}")
    if isinstance(error, FileNotFoundError):
        return f"{where}: command not found ({text})"
    if isinstance(error, PermissionError):
        return f"{where}: command cannot be run ({text})"
    if "protocol version" in text.lower():
        return f"{where}: speaks a protocol version this mcp SDK does not support ({text}){tail}"
    if "closed" in text.lower() or isinstance(error, EOFError | BrokenPipeError):
        return (f"{where}: the server closed the connection during '{stage}' (it crashed or is "
                f"not an MCP server){tail}")
    if type(error).__name__ == "ValidationError":
        return f"{where}: '{stage}' returned a result that is not valid MCP: {text[:400]}"
    if type(error).__name__.startswith(("ConnectError", "ConnectTimeout", "HTTPStatusError")):
        return f"{where}: cannot reach the server ({text[:300]})"
    return f"{where}: '{stage}' failed: {type(error).__name__}: {text[:400]}{tail}"


def _tools_of(listed: list) -> tuple[ScannedTool, ...]:
    return tuple(ScannedTool(t.name, t.description or "", dict(t.input_schema or {}))
                 for t in listed)


def _need_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MemlensError("scanning an MCP server needs the mcp SDK: "
                           "pip install 'memlens[scan]'") from None


def scan_mcp_stdio(command: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                   env: dict | None = None) -> ToolSource:
    """List the tools of the MCP server started by ``command`` (a shell-like command line, run
    without a shell, with the SDK's default environment plus ``env``). The subprocess is ended
    when this returns or fails."""
    import anyio

    _need_mcp()
    from mcp.client.stdio import StdioServerParameters, stdio_client

    where = f"MCP server '{command}'"
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise MemlensError(f"{where}: cannot parse the command line ({error})") from None
    if not argv:
        raise MemlensError("--mcp: empty command")
    # The SDK's default environment (HOME, PATH, USER, …): a third-party server never sees the
    # API keys of this one; ``env`` adds what a server needs to start.
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    stage = ["start"]

    async def run() -> tuple[dict, list]:
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
            try:
                async with stdio_client(params, errlog=log) as streams:
                    return await _list_over(streams, timeout_s, where, stage)
            except MemlensError:
                raise
            except BaseException as error:  # noqa: BLE001 — every failure becomes one message
                if isinstance(_leaf(error), KeyboardInterrupt):
                    raise
                raise MemlensError(_explain(error, where, stage[0], timeout_s,
                                            _stderr_tail(log))) from None

    started = time.perf_counter()
    info, listed = anyio.run(run)
    return ToolSource("mcp-stdio", command, info.get("name") or argv[-1], _tools_of(listed),
                      time.perf_counter() - started, info)


def scan_mcp_http(url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolSource:
    """List the tools of a streamable-HTTP MCP server at ``url``."""
    import anyio

    _need_mcp()
    from mcp.client.streamable_http import streamable_http_client

    where = f"MCP server at {url}"
    if not url.startswith(("http://", "https://")):
        raise MemlensError(f"--url '{url}': expected an http:// or https:// URL")
    stage = ["connect"]

    async def run() -> tuple[dict, list]:
        try:
            async with streamable_http_client(url) as streams:
                return await _list_over(streams, timeout_s, where, stage)
        except MemlensError:
            raise
        except BaseException as error:  # noqa: BLE001
            if isinstance(_leaf(error), KeyboardInterrupt):
                raise
            raise MemlensError(_explain(error, where, stage[0], timeout_s, "")) from None

    started = time.perf_counter()
    info, listed = anyio.run(run)
    return ToolSource("mcp-http", url, info.get("name") or url, _tools_of(listed),
                      time.perf_counter() - started, info)


def _tool_from_json(item: Any, where: str) -> ScannedTool:
    """OpenAI chat (``{"type": "function", "function": {...}}``), OpenAI responses
    (``{"type": "function", "name", "parameters"}``), Anthropic (``{"name", "input_schema"}``)
    or MCP (``{"name", "inputSchema"}``)."""
    if not isinstance(item, dict):
        raise MemlensError(f"{where}: must be a JSON object, got {type(item).__name__}")
    spec = item["function"] if isinstance(item.get("function"), dict) else item
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MemlensError(f"{where}: field 'name' must be a non-empty string")
    for key in ("parameters", "input_schema", "inputSchema"):
        if key in spec:
            schema = spec[key]
            break
    else:
        raise MemlensError(f"{where} ({name}): no 'parameters', 'input_schema' or 'inputSchema'")
    if not isinstance(schema, dict):
        raise MemlensError(f"{where} ({name}): the argument schema must be a JSON object")
    return ScannedTool(name, str(spec.get("description") or ""), schema)


def scan_tools_json(path: str | Path) -> ToolSource:
    """Read an OpenAI / Anthropic tools file: a list of tools or ``{"tools": [...]}``."""
    started = time.perf_counter()
    path = Path(path)
    value = parse_json(read_text(path, "tools JSON file"), str(path))
    items = value.get("tools") if isinstance(value, dict) else value
    if not isinstance(items, list) or not items:
        raise MemlensError(f"{path}: expected a non-empty list of tools or {{\"tools\": [...]}}")
    tools = tuple(_tool_from_json(item, f"{path}: tool {i}") for i, item in enumerate(items))
    return ToolSource("tools-json", str(path), path.stem, tools, time.perf_counter() - started)


def _function_schema(function, where: str) -> dict:
    """The JSON schema of a function's arguments, from its annotations (pydantic)."""
    import pydantic

    fields = {}
    for name, param in inspect.signature(function).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name in ("self", "cls"):
            continue
        annotation = Any if param.annotation is param.empty else param.annotation
        fields[name] = (annotation, ... if param.default is param.empty else param.default)
    try:
        model = pydantic.create_model(f"{function.__name__}_arguments", **fields)
        return model.model_json_schema()
    except Exception as error:  # noqa: BLE001 — pydantic raises several types for odd annotations
        raise MemlensError(f"{where}: cannot derive a JSON schema from the annotations "
                           f"({type(error).__name__}: {str(error)[:300]})") from None


def scan_module(name: str) -> ToolSource:
    """The public functions defined in module ``name`` (``__all__`` when it has one).
    Importing the module runs its code: only scan modules you trust."""
    started = time.perf_counter()
    try:
        module = importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 — user code may raise anything on import
        raise MemlensError(f"--module '{name}': cannot import it ({type(error).__name__}: "
                           f"{str(error)[:300]})") from None
    names = getattr(module, "__all__", None)
    functions = [(n, f) for n, f in inspect.getmembers(module, inspect.isfunction)
                 if (n in names if names is not None else
                     not n.startswith("_") and f.__module__ == module.__name__)]
    if not functions:
        raise MemlensError(f"--module '{name}': defines no public function")
    tools = tuple(ScannedTool(n, (inspect.getdoc(f) or "").split("\n\n")[0],
                              _function_schema(f, f"--module '{name}': function '{n}'"))
                  for n, f in functions)
    return ToolSource("module", name, name.rsplit(".", 1)[-1], tools,
                      time.perf_counter() - started)
