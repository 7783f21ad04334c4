"""The reply text as the model wrote it, from an inspect sample.

inspect moves a ``<think>…</think>`` block out of the reply into a ``ContentReasoning`` part (and
strips the whitespace around it), so ``output.completion`` is not the text memlens's own backends
record: a reasoning model's steps would vanish. The raw reply of the sample's last model call
(``ModelEvent.call.response``: an OpenAI-style ``choices[0].message.content``, or mockllm's
``content``) is used when the log has it; otherwise the reply is rebuilt from the message parts
(``<think>reasoning</think>`` + text; whitespace inspect stripped cannot come back). A live
sample's events may already hold the content as an ``attachment://`` reference (resolved only when
the log is read with ``resolve_attachments``): that counts as absent.
"""

from __future__ import annotations

ATTACHMENT = "attachment://"


def _text(content) -> str | None:
    return content if isinstance(content, str) and not content.startswith(ATTACHMENT) else None


def raw_reply(events) -> str | None:
    """The content of the last model call's raw response among ``events`` (None if absent).

    >>> from types import SimpleNamespace as NS
    >>> call = NS(response={"choices": [{"message": {"content": "<think>a</think>\\nb"}}]})
    >>> raw_reply([NS(event="model", call=call)])
    '<think>a</think>\\nb'
    >>> raw_reply([NS(event="model", call=NS(response={"content": "hi"}))])
    'hi'
    >>> raw_reply([NS(event="model", call=NS(response={"content": "attachment://3f"}))]) is None
    True
    """
    for event in reversed(list(events or [])):
        if getattr(event, "event", None) != "model":
            continue
        response = getattr(getattr(event, "call", None), "response", None)
        if not isinstance(response, dict):
            return None
        choices = response.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return _text((choices[0].get("message") or {}).get("content"))
        return _text(response.get("content"))
    return None


def raw_tool_calls(events) -> tuple[tuple[str, str], ...]:
    """(name, arguments JSON as the server sent it) of the last model call's tool calls.

    >>> from types import SimpleNamespace as NS
    >>> call = {"function": {"name": "f", "arguments": '{"a": 1}'}}
    >>> raw_tool_calls([NS(event="model", call=NS(response={"choices": [
    ...     {"message": {"content": None, "tool_calls": [call]}}]}))])
    (('f', '{"a": 1}'),)
    """
    for event in reversed(list(events or [])):
        if getattr(event, "event", None) != "model":
            continue
        response = getattr(getattr(event, "call", None), "response", None)
        choices = response.get("choices") if isinstance(response, dict) else None
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            return ()
        calls = (choices[0].get("message") or {}).get("tool_calls") or []
        found = []
        for call in calls:
            function = call.get("function") or {} if isinstance(call, dict) else {}
            name, arguments = function.get("name"), _text(function.get("arguments"))
            if not isinstance(name, str) or arguments is None:
                return ()
            found.append((name, arguments))
        return tuple(found)
    return ()


def rebuilt_reply(message) -> str:
    """The reply rebuilt from an inspect assistant message's parts.

    >>> from types import SimpleNamespace as NS
    >>> rebuilt_reply(NS(content=[NS(type="reasoning", reasoning="r", redacted=False),
    ...                           NS(type="text", text="t")]))
    '<think>r</think>t'
    """
    if message is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    parts = []
    for part in message.content:
        if part.type == "reasoning" and not part.redacted:
            parts.append(f"<think>{part.reasoning}</think>")
        elif part.type == "text":
            parts.append(part.text)
    return "".join(parts)


def reply_text(message, events=None) -> str:
    """The raw reply when ``events`` hold it, else the reply rebuilt from ``message``."""
    raw = raw_reply(events)
    return raw if raw is not None else rebuilt_reply(message)
