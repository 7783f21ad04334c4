"""Injection modes produce exactly the documented chat messages."""

import pytest

from memlens.errors import MemlensError
from memlens.stimuli import ACKNOWLEDGEMENT, MEMORY_HEADER, Stimulus, inject

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
        {"role": "user", "content": "I'm 72 and retired."},
        {"role": "assistant", "content": ACKNOWLEDGEMENT},
        {"role": "user", "content": Q}]


@pytest.mark.parametrize("mode", ["prefix", "system", "history"])
def test_empty_stimulus_is_just_the_question(mode):
    assert inject(Q, EMPTY, mode=mode) == [{"role": "user", "content": Q}]
    assert inject(Q, EMPTY, mode=mode, system_prompt="S") == [
        {"role": "system", "content": "S"}, {"role": "user", "content": Q}]


def test_pure_and_accepts_text():
    assert inject(Q, AGE, mode="history") == inject(Q, AGE, mode="history")
    assert inject(Q, AGE.text) == inject(Q, AGE)


def test_bad_mode_and_stimulus():
    with pytest.raises(MemlensError, match=r"unknown injection mode 'memory' \(valid: prefix"):
        inject(Q, AGE, mode="memory")
    with pytest.raises(MemlensError, match="must be a Stimulus or a string"):
        inject(Q, 42)
