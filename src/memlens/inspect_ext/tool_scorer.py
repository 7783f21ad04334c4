"""``tool_arguments()``: records the tool call a sample made (name and arguments) in the score
metadata; value 1 when the entry's own tool was called, else 0 (the mean is the call rate).
The drift statistics (Δ per bias dimension, paired bootstrap) come from ``memlens
import-inspect``, which scores the calls with the entry's rubric as ``memlens tooldrift run``
does."""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState


@scorer(metrics=[mean()])
def tool_arguments() -> Scorer:
    """Value 1 when the sample called its entry's tool; metadata = the call's arguments."""

    async def score(state: TaskState, target: Target) -> Score:
        calls = (state.output.message.tool_calls or []) if state.output else []
        wanted = state.metadata["tool"]["name"]
        call = calls[0] if calls else None
        meta = {key: state.metadata.get(key) for key in ("entry_id", "condition", "k")}
        meta |= {"tool": call.function if call else None,
                 "arguments": call.arguments if call else None}
        made = call is not None and call.function == wanted
        return Score(value=int(made), answer=None if call is None else call.function,
                     explanation="no tool call" if call is None else
                     f"{call.function}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})",
                     metadata=meta)

    return score
