"""Model backends behind one ``ChatModel`` protocol, chosen by a model string.

Model strings: ``embedded``, ``fake``, ``openai:MODEL``, ``openai:MODEL@BASE_URL``,
``anthropic:MODEL``, ``vllm:PATH_OR_ID``, ``hf:PATH_OR_ID``. Optional backends are imported only
when asked for.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "CallableModel": "callable",
    "ChatModel": "base",
    "ChatRequest": "base",
    "ChatResponse": "base",
    "FakeModel": "fake",
    "GenerationParams": "base",
    "LoopbackServer": "loopback",
    "Message": "base",
    "ModelSpec": "modelstring",
    "ModelCallError": "base",
    "RetryPolicy": "retry",
    "ToolCall": "base",
    "as_chat_model": "callable",
    "get_model": "registry",
    "gguf_path": "embedded_weights",
    "model_fingerprint": "fingerprint",
    "model_id_for": "registry",
    "model_spec": "modelstring",
    "release_servers": "embedded",
    "tool_reply": "fake",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
