"""Generate the unlabeled candidate steps behind the embedded labeler's gold / dev sets.

Real SmolLM2 (``get_model("embedded")``) responses to bundled questions, with and without a
persona / noise stimulus prefixed (as the audit sends them: question + the tagged-steps
instruction, ``prefix`` mode, T = 0.7, 160 tokens, seeds from ``memlens.audit.design.sample_seed``),
split with ``memlens.steps.split_steps``. One generation at a time. The output rows have
``id``, ``text``, ``split`` (gold / dev: disjoint questions) and ``source``; the labels were then
added by hand (docs/ontology.md, "Gold steps from real responses").

    python scripts/make_gold_candidates.py --out /tmp/gold_candidates.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys

from memlens.audit.design import sample_seed
from memlens.models import GenerationParams, get_model
from memlens.questions import load_questions
from memlens.steps import REASONING_INSTRUCTION, split_steps
from memlens.stimuli import inject, load_stimuli

STIMULI = ("control/no_perturbation", "persona/gender/woman", "persona/age/older_adult",
           "persona/occupation/nurse", "persona/income/low_income", "persona/disability/blind",
           "persona/education/doctorate", "noise/filler/1", "noise/punctuation/2")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--questions", type=int, default=48, help="questions (every k-th)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    questions = load_questions()
    step = max(1, len(questions) // args.questions)
    chosen = questions[::step][:args.questions]
    stimuli = {stimulus.id: stimulus for stimulus in load_stimuli()}
    model = get_model("embedded")
    with open(args.out, "w", encoding="utf-8") as handle:
        for number, question in enumerate(chosen):
            split = "dev" if number % 4 == 3 else "gold"
            for stimulus_id in (STIMULI[0], STIMULI[1 + number % (len(STIMULI) - 1)]):
                seed = sample_seed(args.seed, question.id, stimulus_id, 0)
                messages = inject(f"{question.text}\n\n{REASONING_INSTRUCTION}",
                                  stimuli[stimulus_id])
                params = GenerationParams(temperature=0.7, max_tokens=160, seed=seed)
                reply = model.complete(messages, params)
                parsed = split_steps(reply.text or "")
                for item in parsed.steps:
                    row = {"id": f"{question.id}|{stimulus_id}|s{seed}|{item.index}",
                           "text": item.text, "split": split, "method": parsed.method,
                           "source": {"question_id": question.id, "stimulus_id": stimulus_id,
                                      "seed": seed, "step": item.index}}
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                handle.flush()
                print(f"{number} {question.id} {stimulus_id}: {len(parsed.steps)} steps "
                      f"({parsed.method})", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
