"""``memlens_generate()``: one model call per sample with the cell's own sampling settings.

memlens derives a seed per cell (``sha256(seed|question|stimulus|sample)``, 31 bits) and fixes
temperature, top-p, top-k and the token budget in the design; the solver passes them on every
call, so inspect's own ``--temperature`` / ``--seed`` do not change a memlens design (set them
with ``-T temperature=…``, ``-T seed=…``). ``top_k`` is not an OpenAI parameter: for inspect's
``openai-api/…`` providers (vLLM, llama.cpp, SGLang…) it also goes in the request body, as
memlens's own ``openai:MODEL@URL`` backend sends it.
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

OPENAI_COMPATIBLE = "openai-api/"
"""inspect's provider prefix for any OpenAI-compatible server."""


def generate_settings(generation: dict, model_name: str) -> dict:
    """inspect ``GenerateConfig`` arguments for a sample's ``generation`` metadata.

    >>> generate_settings({"seed": 7, "temperature": 0.7, "top_p": 0.98, "top_k": 50,
    ...                    "max_tokens": 64}, "openai-api/local/m")["extra_body"]
    {'top_k': 50}
    >>> "extra_body" in generate_settings({"seed": 7, "top_k": 50}, "mockllm/model")
    False
    """
    settings = {key: generation[key] for key in ("seed", "temperature", "top_p", "top_k",
                                                 "max_tokens") if generation.get(key) is not None}
    if generation.get("top_k") is not None and model_name.startswith(OPENAI_COMPATIBLE):
        settings["extra_body"] = {"top_k": generation["top_k"]}
    return settings


@solver
def memlens_generate() -> Solver:
    """Generate once with the sample's memlens seed and sampling settings (no tools)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        settings = generate_settings(state.metadata.get("generation") or {}, str(state.model))
        return await generate(state, tool_calls="none", **settings)

    return solve
