"""Model backends behind one ``ChatModel`` protocol, chosen by a model string.

Model strings: ``embedded``, ``fake``, ``openai:MODEL``, ``openai:MODEL@BASE_URL``,
``anthropic:MODEL``, ``vllm:PATH_OR_ID``, ``hf:PATH_OR_ID``. Optional backends are imported only
when asked for.
"""

from memlens.models.base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    GenerationParams,
    Message,
    ModelCallError,
    ToolCall,
)
from memlens.models.fake import FakeModel
from memlens.models.registry import get_model, model_id_for
from memlens.models.retry import RetryPolicy

__all__ = [
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "FakeModel",
    "GenerationParams",
    "Message",
    "ModelCallError",
    "RetryPolicy",
    "ToolCall",
    "get_model",
    "model_id_for",
]
