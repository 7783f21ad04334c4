"""``memlens chat``: send one prompt to a model and print the reply (handy to check a backend)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags
from memlens.errors import MemlensError
from memlens.jsonl import parse_json, read_text
from memlens.textsafe import for_terminal

API_BACKENDS = ("openai", "anthropic")


def register(subparsers) -> None:
    """Add the ``chat`` sub-command."""
    parser = subparsers.add_parser(
        "chat", help="send one prompt to a model and print its reply",
        description="Send one prompt to MODEL and print the reply. Examples: "
                    "memlens chat --model embedded \"Hi\"; "
                    "memlens chat --model openai:qwen3-4b@http://127.0.0.1:8000/v1 \"Hi\".")
    parser.add_argument("prompt", help="the user message")
    parser.add_argument("--model", default="embedded",
                        help="model string: embedded, fake, openai:MODEL[@BASE_URL], "
                             "anthropic:MODEL, vllm:PATH_OR_ID, hf:PATH_OR_ID (default: embedded)")
    parser.add_argument("--system", help="system message")
    parser.add_argument("--temperature", type=at.temperature, default=0.7,
                        help="sampling temperature (default %(default)s)")
    parser.add_argument("--top-p", type=at.top_p, default=0.98,
                        help="nucleus sampling mass (default %(default)s)")
    parser.add_argument("--max-tokens", type=at.max_tokens, default=512,
                        help="completion token cap (default %(default)s)")
    parser.add_argument("--seed", type=at.nonneg_int,
                        help="sampling seed (default: none, the backend decides)")
    parser.add_argument("--json-schema", type=Path, metavar="FILE",
                        help="JSON schema file constraining the reply")
    parser.add_argument("--api-key-env", metavar="NAME",
                        help="environment variable holding the API key (API backends)")
    add_call_flags(parser, default_timeout=60.0, default_attempts=3)
    parser.add_argument("--usage", action="store_true",
                        help="print token counts and latency to stderr")
    parser.set_defaults(func=run_chat)


def load_schema(path: Path) -> dict:
    """Read a JSON schema file; MemlensError naming the file (and line) when unusable."""

    try:
        text = read_text(path, "JSON schema file")
    except MemlensError as error:  # missing, unreadable or not UTF-8
        raise MemlensError(f"--json-schema: {error}") from None
    try:
        json.loads(text)  # only for the line and column of a syntax error
    except json.JSONDecodeError as error:
        raise MemlensError(f"--json-schema: {path} line {error.lineno} column {error.colno}: "
                           f"{error.msg}") from None
    except (RecursionError, ValueError):
        pass  # too deep / too long a number: parse_json names it
    schema = parse_json(text, f"--json-schema: {path}")
    if not isinstance(schema, dict):
        raise MemlensError(f"--json-schema: {path} must hold a JSON object (a schema)")
    return schema


def _model_options(args: argparse.Namespace) -> dict:
    backend = args.model.partition(":")[0]
    if backend not in API_BACKENDS:
        if args.api_key_env:
            raise MemlensError(f"--api-key-env applies only to {' / '.join(API_BACKENDS)} models")
        return {}
    from memlens.models.registry import api_options  # lazy: keeps memlens --help light

    options = api_options(args.model, args.call_timeout, args.call_attempts)
    if args.api_key_env:
        options["api_key_env"] = args.api_key_env
    return options


def run_chat(args: argparse.Namespace) -> int:
    """Build the model, send the prompt, print the reply (tool calls as ``name(arguments)``)."""
    # lazy: keeps memlens --help light
    from memlens.models import GenerationParams, ModelCallError, get_model

    if args.max_tokens < 1:
        raise MemlensError(f"--max-tokens must be at least 1 (got {args.max_tokens})")
    params = GenerationParams(temperature=args.temperature, top_p=args.top_p,
                              max_tokens=args.max_tokens, seed=args.seed,
                              json_schema=load_schema(args.json_schema) if args.json_schema else None)
    messages = ([{"role": "system", "content": args.system}] if args.system else [])
    messages.append({"role": "user", "content": args.prompt})
    model = get_model(args.model, **_model_options(args))
    try:
        response = model.complete(messages, params)
    except ModelCallError as error:
        reason = error.reason if error.reason.startswith("gave up") else f"call failed: {error.reason}"
        raise MemlensError(f"{model.model_id}: {reason}") from None
    finally:
        close = getattr(model, "close", None)
        if close:
            close()

    print(for_terminal(response.text))  # model output: no raw ESC / bidi controls
    for call in response.tool_calls:
        print(for_terminal(f"tool_call: {call.name}({call.arguments_json})"))
    if args.usage:
        print(f"[{model.model_id}] prompt_tokens={response.prompt_tokens} "
              f"completion_tokens={response.completion_tokens} finish={response.finish_reason} "
              f"latency={response.latency_s:.2f}s", file=sys.stderr)
    return 0
