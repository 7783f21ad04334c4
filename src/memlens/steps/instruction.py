"""The instructions that ask a model for its reasoning in steps: the tagged format of SPEC §1.3,
and a short numbered list a small model follows."""

REASONING_INSTRUCTION = (
    "Think through the question step by step before answering. Write each reasoning step "
    "inside numbered step tags, all steps inside one think block, then give your final answer "
    "inside answer tags, exactly in this format:\n"
    "<think><step_1>first reasoning step</step_1><step_2>second reasoning step</step_2>"
    "...<step_N>last reasoning step</step_N></think><answer>your final answer</answer>"
)
"""Appended to (or sent before) a question to request
``<think><step_1>…</step_1>…<step_N>…</step_N></think><answer>…</answer>``."""

LIST_INSTRUCTION = (
    "Reason in exactly three steps. Format:\n"
    "1. <first step>\n2. <second step>\n3. <third step>\n"
    "Answer: <one sentence>"
)
"""A numbered list of three steps and a one-sentence answer: what SmolLM2-135M (the embedded
model) follows. With the tagged instruction it often echoes the template ("Step 1: First
reasoning step: …") and 7 of 8 replies ran into a 160-token cap; with this one 179 of 256 quick
audit replies split as lists, at 90 tokens on average. It is not the default: the short steps
left the audit less sensitive (quick design MDE +45.5 % vs +30.1 % DTW, docs/audit.md)."""

INSTRUCTIONS = {"tagged": REASONING_INSTRUCTION, "list": LIST_INSTRUCTION}
"""The reasoning formats an audit can ask for (``AuditConfig.reasoning_format``)."""
