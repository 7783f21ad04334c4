"""Injection modes produce exactly the documented chat messages."""

import pytest

from memlens.errors import MemlensError
from memlens.stimuli import (
    ACKNOWLEDGEMENT,
    HISTORY_PREFIX,
    MEMORY_HEADER,
    MemoryTemplate,
    Stimulus,
    inject,
)

AGE = Stimulus("persona/age/older_adult", "persona", "age", "I'm 72 and retired.")
EMPTY = Stimulus("control/no_perturbation", "control", "no_perturbation", "")
SPACES = Stimulus("noise/whitespace/1", "noise", "whitespace", "   ")
Q = "Is it better to rent or to buy?"


def test_prefix():
    assert inject(Q, AGE) == [{"role": "user", "content": "I'm 72 and retired.\n" + Q}]
    assert inject(Q, SPACES) == [{"role": "user", "content": "   \n" + Q}]
    assert inject(Q, AGE, system_prompt="Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I'm 72 and retired.\n" + Q}]


def test_system():
    assert inject(Q, AGE, mode="system") == [
        {"role": "system", "content": f"{MEMORY_HEADER}\n- I'm 72 and retired."},
        {"role": "user", "content": Q}]
    combined = inject(Q, AGE, mode="system", system_prompt="Be brief.")
    assert combined[0] == {"role": "system",
                           "content": f"Be brief.\n\n{MEMORY_HEADER}\n- I'm 72 and retired."}
    assert combined[1] == {"role": "user", "content": Q}


def test_history():
    assert inject(Q, AGE, mode="history", system_prompt="Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": HISTORY_PREFIX + "I'm 72 and retired."},
        {"role": "assistant", "content": ACKNOWLEDGEMENT},
        {"role": "user", "content": Q}]


def test_prefix_control_is_just_the_question_as_in_the_paper():
    assert inject(Q, EMPTY) == [{"role": "user", "content": Q}]
    assert inject(Q, EMPTY, system_prompt="S") == [
        {"role": "system", "content": "S"}, {"role": "user", "content": Q}]


@pytest.mark.parametrize("mode", ["system", "history"])
def test_matched_scaffolding_conditions_differ_only_in_memory_text(mode):
    """The no-memory control goes through the same template as every other condition."""
    for stimulus in (AGE, SPACES):
        control, other = inject(Q, EMPTY, mode=mode), inject(Q, stimulus, mode=mode)
        assert [m["role"] for m in control] == [m["role"] for m in other]
        differing = [(a["content"], b["content"]) for a, b in zip(control, other, strict=True)
                     if a != b]
        assert len(differing) == 1
        empty, full = differing[0]
        assert full == empty + stimulus.text  # the memory slot is the template's last part
    assert inject(Q, EMPTY, mode="system")[0]["content"] == f"{MEMORY_HEADER}\n- "
    assert inject(Q, EMPTY, mode="history")[0]["content"] == HISTORY_PREFIX


def test_templates_are_user_settable():
    template = MemoryTemplate(header="Saved memories:", history_prefix="FYI: ",
                              acknowledgement="Noted.")
    assert inject(Q, AGE, mode="system", template=template)[0]["content"] == \
        "Saved memories:\n- I'm 72 and retired."
    assert [m["content"] for m in inject(Q, EMPTY, mode="history", template=template)] == \
        ["FYI: ", "Noted.", Q]


def test_pure_and_accepts_text():
    assert inject(Q, AGE, mode="history") == inject(Q, AGE, mode="history")
    assert inject(Q, AGE.text) == inject(Q, AGE)


def test_bad_mode_and_stimulus():
    with pytest.raises(MemlensError, match=r"unknown injection mode 'memory' \(valid: prefix"):
        inject(Q, AGE, mode="memory")
    with pytest.raises(MemlensError, match="must be a Stimulus or a string"):
        inject(Q, 42)
