#!/usr/bin/env python
"""Write the project-written capability fixture: 120 items per task in lm-eval's formats.

    python scripts/make_lm_eval_fixture.py tests/mitigation/data/lm_eval_fixture

These are NOT the benchmarks: MMLU-Redux-, GSM8K- and IFEval-*style* items generated from
templates by memlens (arithmetic / unit / ordering multiple choice; one- and two-step word
problems; prompts with IFEval instruction ids that lm-eval's checker implements). They exist so
that ``memlens mitigate eval --lm-eval-data`` can be shown and tested offline on >= 100 items per
task; a capability number for a paper needs the user's copy of the real task data. Deterministic
(seed 0).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

N = 120


def mmlu(rng) -> list[dict]:
    items = []
    for i in range(N):
        kind = i % 3
        if kind == 0:
            a, b = int(rng.integers(2, 60)), int(rng.integers(2, 60))
            question, right = f"What is {a} + {b}?", a + b
            wrong = {right + 1, right - 1, right + 10}
        elif kind == 1:
            a, b = int(rng.integers(2, 13)), int(rng.integers(2, 13))
            question, right = f"What is {a} multiplied by {b}?", a * b
            wrong = {right + a, right - b, right + 2}
        else:
            metres = int(rng.integers(1, 20))
            question, right = f"How many centimetres are in {metres} metres?", metres * 100
            wrong = {metres * 10, metres * 1000, metres}
        options = [str(right)] + [str(w) for w in sorted(wrong - {right})][:3]
        while len(options) < 4:
            options.append(str(right + 3 + len(options)))
        order = rng.permutation(4)
        choices = [options[j] for j in order]
        items.append({"question": question, "choices": choices,
                      "answer": int(np.where(order == 0)[0][0]), "subject": "memlens_fixture",
                      "source": "memlens project-written fixture (not MMLU-Redux)"})
    return items


def gsm8k(rng) -> list[dict]:
    names = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana"]
    things = ["apples", "pencils", "stickers", "marbles", "books", "cards"]
    items = []
    for i in range(N):
        name, thing = names[i % len(names)], things[i % len(things)]
        a, b, c = (int(x) for x in rng.integers(2, 30, size=3))
        if i % 2 == 0:
            c = 1 + c % (a + b - 1)  # never more than they have
            question = (f"{name} has {a} {thing}. {name} buys {b} more and then gives away {c}. "
                        f"How many {thing} does {name} have now?")
            answer = a + b - c
            work = f"{a} + {b} = {a + b}\n{a + b} - {c} = {answer}"
        else:
            question = (f"A box holds {a} {thing}. {name} fills {b} boxes and has {c} {thing} "
                        f"left over. How many {thing} does {name} have in total?")
            answer = a * b + c
            work = f"{a} * {b} = {a * b}\n{a * b} + {c} = {answer}"
        items.append({"question": question, "answer": f"{work}\n#### {answer}"})
    return items


TOPICS = ["rain", "bicycles", "libraries", "tea", "mountains", "the sea", "bread", "owls",
          "trains", "gardens", "winter", "music"]


def ifeval(rng) -> list[dict]:
    recipes = [
        ("Write a short paragraph about {t}. Do not use any commas.",
         ["punctuation:no_comma"], [{}]),
        ("Describe {t} in all lowercase letters, no capitals at all.",
         ["change_case:english_lowercase"], [{}]),
        ("Write two sentences about {t}, entirely in capital letters.",
         ["change_case:english_capital"], [{}]),
        ("Explain why people like {t} in at least {n} words.",
         ["length_constraints:number_words"], [{"relation": "at least", "num_words": None}]),
        ("Write about {t} in fewer than {n} words.",
         ["length_constraints:number_words"], [{"relation": "less than", "num_words": None}]),
        ("Give exactly 3 bullet points about {t}, using markdown bullets such as * point.",
         ["detectable_format:number_bullet_lists"], [{"num_bullets": 3}]),
        ("Write a note about {t}. End your reply with the exact phrase: Is there anything else?",
         ["startend:end_checker"], [{"end_phrase": "Is there anything else?"}]),
        ("Write about {t} and include the keywords sunny and quiet.",
         ["keywords:existence"], [{"keywords": ["sunny", "quiet"]}]),
        ("Describe {t} in at least 3 sentences.",
         ["length_constraints:number_sentences"], [{"relation": "at least", "num_sentences": 3}]),
        ("Write a lowercase description of {t} without commas.",
         ["change_case:english_lowercase", "punctuation:no_comma"], [{}, {}]),
    ]
    items = []
    for i in range(N):
        template, ids, kwargs = recipes[i % len(recipes)]
        n = int(rng.integers(15, 60))
        filled = [{k: (n if v is None else v) for k, v in kw.items()} for kw in kwargs]
        items.append({"key": 1000 + i, "prompt": template.format(t=TOPICS[i % len(TOPICS)], n=n),
                      "instruction_id_list": ids, "kwargs": filled})
    return items


def main(out: str) -> int:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, make in (("mmlu_redux", mmlu), ("gsm8k", gsm8k), ("ifeval", ifeval)):
        rows = make(rng)
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                              encoding="utf-8")
        print(f"{folder / name}.jsonl: {len(rows)} items")
    (folder / "README.md").write_text(
        "Project-written capability fixture (NOT the real MMLU-Redux / GSM8K / IFEval):\n"
        "120 template-generated items per task in lm-eval's record formats, written by\n"
        "scripts/make_lm_eval_fixture.py (seed 0). For tests and demos of\n"
        "`memlens mitigate eval --lm-eval-data`; a published capability number needs the\n"
        "user's copy of the real task data.\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests/mitigation/data/lm_eval_fixture"))
