"""Read an inspect eval log of ``memlens/reasoning_drift`` into what memlens's pipeline needs.

From the log: the task's memlens settings (``eval.metadata["memlens"]``, written by
``memlens.inspect_ext.tasks``), the audited model's inspect name, and per sample the messages
sent, the cell's seed, the reply (or the sample's error) and the scorer's steps and labels.
Everything a user can get wrong (not a memlens log, an epochs > 1 run, samples not logged, a
design that does not match the inputs) is a ``MemlensError`` naming the log and the problem.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from memlens.audit.config import build_config
from memlens.errors import MemlensError, missing_extra
from memlens.inspect_ext.replytext import raw_tool_calls, reply_text
from memlens.models.public import public_base_url

TASK_FORMAT = 1
"""The log layout this reader understands (``memlens.inspect_ext.tasks.TASK_FORMAT``)."""
SCORER = "reasoning_steps"
FINISH_REASONS = {"stop": "stop", "max_tokens": "length", "model_length": "length",
                  "tool_calls": "tool_calls", "content_filter": "content_filter"}
"""inspect's ``stop_reason`` -> the OpenAI-style finish reason memlens records."""


def reply_key(messages, seed: int | None) -> str:
    """The key of one logged call: its chat messages (role and text) and its seed.

    >>> reply_key([{"role": "user", "content": "hi"}], 7) == reply_key(
    ...     [{"role": "user", "content": "hi"}], 7)
    True
    >>> reply_key([{"role": "user", "content": "hi"}], 7) == reply_key(
    ...     [{"role": "user", "content": "hi"}], 8)
    False
    """
    turns = [[message["role"], message["content"]] for message in messages]
    payload = json.dumps([turns, seed], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class LoggedReply:
    """One sample's outcome: the reply text and accounting, or the sample's error."""

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    latency_s: float = 0.0
    error: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()
    """(name, arguments JSON) of each tool call (``memlens/tool_drift``)."""


@dataclass
class LoggedAudit:
    """What an inspect log of ``memlens/reasoning_drift`` (or ``memlens/tool_drift``) holds, in
    memlens's terms."""

    path: str
    config: object
    """``reasoning_drift``: the task's ``memlens.audit.AuditConfig`` (its ``model`` is the
    preset's: not used); ``tool_drift``: the task's settings (a dict)."""
    inputs: dict
    model: str
    """The audited model's inspect name (``mockllm/model``, ``openai-api/local/m``…)."""
    eval_info: dict
    replies: dict[str, LoggedReply] = field(default_factory=dict)
    """By :func:`reply_key`."""
    labels: list[dict] = field(default_factory=list)
    """``audit_labels`` rows from the scorer's metadata (failed labeler calls left out)."""
    cell_ids: list[str] = field(default_factory=list)
    kind: str = "reasoning_drift"
    """``reasoning_drift`` or ``tool_drift``."""


def read_log(path: str | Path):
    """The inspect ``EvalLog`` at ``path`` (MemlensError when missing or unreadable)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise missing_extra("inspect-ai", "inspect") from None
    path = Path(path)
    if not path.is_file():
        raise MemlensError(f"inspect log {path} does not exist")
    try:
        return read_eval_log(str(path), resolve_attachments=True)
    except Exception as error:  # noqa: BLE001 - inspect raises many kinds on a bad file
        raise MemlensError(f"cannot read inspect log {path}: {type(error).__name__}: "
                           f"{str(error)[:200]}") from None


def _messages(sample) -> list[dict]:
    if isinstance(sample.input, str):
        return [{"role": "user", "content": sample.input}]
    return [{"role": message.role, "content": message.text} for message in sample.input]


def _tool_calls(output) -> tuple[tuple[str, str], ...]:
    """(name, arguments JSON) of the reply's tool calls, from inspect's parsed message."""
    calls = (output.message.tool_calls or []) if output and output.message else []
    return tuple((call.function, json.dumps(call.arguments, ensure_ascii=False))
                 for call in calls)


def _reply(sample) -> LoggedReply:
    if sample.error is not None:
        return LoggedReply(error=f"inspect sample error: {str(sample.error.message)[:300]}")

    output = sample.output
    usage = output.usage if output else None
    return LoggedReply(
        text=reply_text(output.message if output else None, sample.events),
        prompt_tokens=(usage.input_tokens if usage else 0) or 0,
        completion_tokens=(usage.output_tokens if usage else 0) or 0,
        finish_reason=FINISH_REASONS.get(output.stop_reason if output else "stop", "stop"),
        latency_s=float((output.time if output else 0.0) or 0.0),
        tool_calls=raw_tool_calls(sample.events) or _tool_calls(output))


def _labels_row(sample) -> dict | None:
    score = (sample.scores or {}).get(SCORER)
    meta = score.metadata if score is not None else None
    if not meta or meta.get("labeler_failed") or "labels" not in meta:
        return None
    return {"id": meta["cell_id"], "steps_sha256": meta["steps_sha256"],
            "labels": list(meta["labels"]), "status": "ok"}


def _public_url(url: str | None) -> str | None:
    return public_base_url(url) if url else None


def read_audit_log(path: str | Path) -> LoggedAudit:
    """Read and check a ``memlens/reasoning_drift`` or ``memlens/tool_drift`` log (see the
    module docstring)."""

    log = read_log(path)
    metadata = log.eval.metadata or {}
    kind = "tool_drift" if isinstance(metadata.get("memlens_tooldrift"), dict) \
        else "reasoning_drift"
    meta = metadata.get("memlens_tooldrift") or metadata.get("memlens")
    if not isinstance(meta, dict) or not ("config" in meta or "settings" in meta):
        raise MemlensError(f"{path} is not a log of memlens/reasoning_drift or memlens/tool_drift "
                           f"(task {log.eval.task!r} has no memlens settings in its metadata)")
    if int(meta.get("task_format", 0)) > TASK_FORMAT:
        raise MemlensError(f"{path} was written by a newer memlens task (format "
                           f"{meta['task_format']}); upgrade memlens to import it")
    epochs = log.eval.config.epochs or 1
    if epochs != 1:
        raise MemlensError(f"{path} ran {epochs} epochs: memlens's design holds its own samples "
                           "(-T samples=N, -T baselines=K); run it with one epoch")
    if not log.samples:
        raise MemlensError(f"{path} holds no samples (was it run with --no-log-samples, or "
                           "stopped before the first sample?)")
    config = (dict(meta["settings"]) if kind == "tool_drift"
              else build_config(dict(meta["config"]), f"{path}: memlens settings"))
    logged = LoggedAudit(path=str(path), config=config, inputs=dict(meta.get("inputs") or {}),
                         kind=kind,
                         model=str(log.eval.model), eval_info={
                             "eval_id": log.eval.eval_id, "run_id": log.eval.run_id,
                             "task": log.eval.task, "created": log.eval.created,
                             "status": log.status,
                             "inspect_version": (log.eval.packages or {}).get("inspect_ai"),
                             "model_base_url": _public_url(log.eval.model_base_url)})
    for sample in log.samples:
        seed = ((sample.metadata or {}).get("generation") or {}).get("seed")
        logged.replies[reply_key(_messages(sample), seed)] = _reply(sample)
        logged.cell_ids.append(str(sample.id))
        row = _labels_row(sample)
        if row is not None:
            logged.labels.append(row)
    return logged
