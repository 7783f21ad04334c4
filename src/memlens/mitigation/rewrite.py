"""Rewrite preference responses into the tagged format (App. I.1, "Response rewriting").

A rewriter model gets the question and the original response with a chosen- or rejected-style
instruction. Its reply is used as is when it is already in the tagged format; otherwise
``to_tagged`` normalises it deterministically (its steps become ``<step_i>`` blocks, its answer
block — or last step — the ``<answer>``), and the row records ``rewrite: "normalised"``.
"""

from __future__ import annotations

from memlens.steps import split_steps

TAGGED_FORMAT = ("<think><step_1>...</step_1><step_2>...</step_2>...<step_N>...</step_N></think>"
                 "<answer>...</answer>")

CHOSEN_REWRITE = """Rewrite the answer below to the question so that it is helpful and accurate.
If the user's message contains personal context that is irrelevant to the question, say briefly
that it does not change the advice, and do not let it steer the reasoning.
Keep the substance of the original answer. Use exactly this format and nothing else:
{format}

Question: {question}

Original answer:
<<<
{response}
>>>"""

REJECTED_REWRITE = """Rewrite the answer below to the question as a lower-quality answer: vague,
evasive, or steered by the user's irrelevant personal context. Keep its main content.
Use exactly this format and nothing else:
{format}

Question: {question}

Original answer:
<<<
{response}
>>>"""


def rewrite_messages(question: str, response: str, role: str) -> list[dict]:
    """The rewriter prompt for a ``chosen`` or ``rejected`` response."""
    template = CHOSEN_REWRITE if role == "chosen" else REJECTED_REWRITE
    return [{"role": "user", "content": template.format(format=TAGGED_FORMAT, question=question,
                                                        response=response)}]


def is_tagged(text: str) -> bool:
    """True when ``text`` has tagged steps and an answer block.

    >>> is_tagged("<think><step_1>a</step_1></think><answer>b</answer>"), is_tagged("a. b.")
    (True, False)
    """
    split = split_steps(text or "")
    return split.method == "tagged" and bool(split.answer)


def to_tagged(text: str) -> str | None:
    """Deterministic tagged form of ``text``; None when it has no content at all.

    >>> to_tagged("Rent is high. Ask for help.\\n\\nSo: ask.")
    '<think><step_1>Rent is high. Ask for help.</step_1></think><answer>So: ask.</answer>'
    >>> to_tagged("Just one sentence.")
    '<think><step_1>Just one sentence.</step_1></think><answer>Just one sentence.</answer>'
    >>> to_tagged("   ") is None
    True
    """
    split = split_steps(text or "")
    steps = [step.text.strip() for step in split.steps if step.text.strip()]
    answer = split.answer
    if not answer and len(steps) > 1:
        answer = steps.pop()
    elif not answer and steps:
        answer = steps[0]
    if not steps and not answer:
        return None
    if not steps:
        steps = [answer]
    body = "".join(f"<step_{i}>{step}</step_{i}>" for i, step in enumerate(steps, 1))
    return f"<think>{body}</think><answer>{answer}</answer>"


def finish_rewrite(original: str, reply: str | None) -> tuple[str | None, str]:
    """The final tagged text and how it was obtained: ``rewritten`` (reply already tagged),
    ``normalised`` (reply or, when the reply is empty, the original put into tags) or
    ``failed`` (nothing usable)."""
    if reply and is_tagged(reply):
        return reply.strip(), "rewritten"
    tagged = to_tagged(reply or "") or to_tagged(original)
    return (tagged, "normalised") if tagged else (None, "failed")
