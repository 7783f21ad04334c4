"""The replies of an inspect log as a memlens ``ChatModel``, so memlens's own runner, store and
stages process an inspect run exactly as they process their own calls.

It answers a request only with the logged reply to the same messages and seed
(``memlens.inspect_ext.logread.reply_key``); a request the log does not hold, or a sample that
failed in inspect, is a failed call (``ModelCallError``), recorded and counted like any other.
Its model id ``inspect:<inspect model name>`` keys the run's request cache.
"""

from __future__ import annotations

from memlens.inspect_ext.logread import LoggedAudit, reply_key
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError, ToolCall

MODEL_PREFIX = "inspect:"
"""Model ids of imported inspect runs start with this."""


class LoggedReplies:
    """``ChatModel`` over a :class:`LoggedAudit` (in memory, thread-safe: read only).

    >>> from memlens.inspect_ext.logread import LoggedReply
    >>> log = LoggedAudit(path="x.eval", config=None, inputs={}, model="mockllm/model",
    ...                   eval_info={}, replies={reply_key([{"role": "user", "content": "q"}], 1):
    ...                                          LoggedReply(text="a")})
    >>> model = LoggedReplies(log)
    >>> model.model_id, model.complete([{"role": "user", "content": "q"}],
    ...                                GenerationParams(seed=1)).text
    ('inspect:mockllm/model', 'a')
    """

    max_concurrency = 8

    def __init__(self, logged: LoggedAudit):
        self.model_id = MODEL_PREFIX + logged.model
        self.supports_tools = logged.kind == "tool_drift"  # the calls were made natively
        self._logged = logged

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """The logged reply to these messages and seed (``ModelCallError`` when there is none
        or the sample failed in inspect)."""
        reply = self._logged.replies.get(reply_key(messages, params.seed))
        if reply is None:
            raise ModelCallError(f"{self._logged.path} holds no sample with these messages and "
                                 f"seed {params.seed}")
        if reply.error is not None:
            raise ModelCallError(reply.error)
        return ChatResponse(text=reply.text, prompt_tokens=reply.prompt_tokens,
                            completion_tokens=reply.completion_tokens,
                            finish_reason=reply.finish_reason, latency_s=reply.latency_s,
                            tool_calls=[ToolCall(name, arguments)
                                        for name, arguments in reply.tool_calls],
                            raw={"source": "inspect log"})
