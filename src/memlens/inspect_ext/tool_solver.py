"""``memlens_tool_call()``: one call offering the sample's tool through inspect's tool calling.

The tool is built from the entry's JSON schema (``ToolDef``); it is offered, forced by name when
the design forces it (``tool_choice`` ``entry``), and never executed: tool drift measures the
*arguments* the model chose, so the solver stops at the model's call (``tool_calls="none"``).
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolFunction, ToolParams

from memlens.inspect_ext.solver import generate_settings


def entry_tool(function: dict):
    """An inspect tool with the entry's name, description and parameter schema."""

    async def record(**arguments) -> str:
        return "recorded"

    return ToolDef(record, name=function["name"], description=function.get("description", ""),
                   parameters=ToolParams.model_validate(function["parameters"])).as_tool()


def inspect_tool_choice(choice: str):
    """memlens's ``--tool-choice`` value in inspect's terms."""
    return choice if choice in ("auto", "required", "none") else ToolFunction(name=choice)


@solver
def memlens_tool_call() -> Solver:
    """Offer the sample's tool and generate once with its seed (the call is not executed)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.tools = [entry_tool(state.metadata["tool"])]
        state.tool_choice = inspect_tool_choice(state.metadata["tool_choice"])
        settings = generate_settings(state.metadata.get("generation") or {}, str(state.model))
        return await generate(state, tool_calls="none", **settings)

    return solve
