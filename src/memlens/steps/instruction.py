"""The instruction that asks a model for the tagged reasoning format (SPEC §1.3)."""

REASONING_INSTRUCTION = (
    "Think through the question step by step before answering. Write each reasoning step "
    "inside numbered step tags, all steps inside one think block, then give your final answer "
    "inside answer tags, exactly in this format:\n"
    "<think><step_1>first reasoning step</step_1><step_2>second reasoning step</step_2>"
    "...<step_N>last reasoning step</step_N></think><answer>your final answer</answer>"
)
"""Appended to (or sent before) a question to request
``<think><step_1>…</step_1>…<step_N>…</step_N></think><answer>…</answer>``."""
