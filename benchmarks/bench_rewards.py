"""Reward speed: batched + cached step labeling against a per-completion, uncached baseline.

Run by hand: ``HF_HUB_OFFLINE=1 python benchmarks/bench_rewards.py [--labeler embedded|keyword]``.
A GRPO step scores B prompts × K completions; completions of one group share many steps, and
later epochs see the same steps again. The baseline labels each completion with its own
``label`` call and keeps no label cache; ``DTWReward`` makes one batched call per reward call and
caches labels by step text. (The embedded labeler's own MiniLM embedding cache is emptied before
each arm and stays active within both.) ``--unique`` gives every step its own text, so only
batching can help. Prints times and ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memlens.mitigation import DTWReward, format_reward
from memlens.mitigation.labeling import build_labeler
from memlens.steps import split_steps

STEP_POOL = [
    "Split the rent so each roommate pays a fair share.", "Budget the monthly cost first.",
    "Check the lease for legal obligations.", "Talk to your partner about how you feel.",
    "Consider your own values and what you want.", "Make a timeline with concrete steps.",
    "Ask an expert for advice on the details.", "Avoid the risk of injury on the trip.",
    "Think about the effect on your friendship.", "Be honest; it is the right thing to do.",
    "Follow the usual etiquette for the event.", "Your stress matters; take a break.",
]


def completions(count: int, seed: int, unique: bool = False) -> list[str]:
    """Tagged completions of 3–6 steps drawn from a pool (groups share steps); with ``unique``
    every step gets its own suffix, so no cache can help (batching alone is measured)."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(count):
        steps = rng.choice(len(STEP_POOL), size=int(rng.integers(3, 7)), replace=True)
        body = "".join(f"<step_{i}>{STEP_POOL[s]} (v{f'{seed}.{len(texts)}.{i}' if unique else int(rng.integers(3))})</step_{i}>"
                       for i, s in enumerate(steps, 1))
        texts.append(f"<think>{body}</think><answer>Do it.</answer>")
    return texts


def baseline(labeler, batch: list[str], references: list[list[str]]) -> list[float]:
    """Per-completion label calls, no cache."""
    from memlens.metrics import dtw

    out = []
    for text, reference in zip(batch, references, strict=True):
        labels = labeler.label([[s.text for s in split_steps(text).steps]])[0]
        out.append(-dtw(labels, reference))
    return out


def clear_embedding_cache() -> None:
    """Empty MiniLM's process-wide text cache so neither arm profits from the other's work
    (the labeler keeps its prototype matrix)."""
    from memlens.ontology import embedding

    embedding._SHARED_CACHE.clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labeler", default="embedded")
    parser.add_argument("--steps", type=int, default=6, help="simulated GRPO steps")
    parser.add_argument("--batch", type=int, default=32, help="completions per step (B × K)")
    parser.add_argument("--unique", action="store_true", help="no repeated steps")
    args = parser.parse_args()
    labeler = build_labeler(args.labeler)
    labeler.label([["warm up the model"]])
    reference = ["social.fairness_reciprocity", "practical.resources_cost"]
    batches = [completions(args.batch, seed, args.unique) for seed in range(args.steps)]
    clear_embedding_cache()
    start = time.perf_counter()
    expected = [baseline(labeler, b, [reference] * len(b)) for b in batches]
    base_time = time.perf_counter() - start
    reward = DTWReward(labeler)
    clear_embedding_cache()
    start = time.perf_counter()
    got = [reward(b, reference=[reference] * len(b)) for b in batches]
    reward_time = time.perf_counter() - start
    assert np.allclose(np.array(expected), np.array(got)), "rewards differ from the baseline"
    start = time.perf_counter()
    for b in batches:
        format_reward(b)
    format_time = time.perf_counter() - start
    total = args.steps * args.batch
    print(f"labeler={args.labeler} unique_steps={args.unique} completions={total} label calls: baseline {total}, "
          f"DTWReward {reward.labeling.calls}")
    print(f"baseline, one call per completion: {base_time:.3f} s ({total / base_time:.0f}/s)")
    print(f"DTWReward, batched + cached:       {reward_time:.3f} s ({total / reward_time:.0f}/s)"
          f"  speed-up ×{base_time / reward_time:.1f}")
    print(f"format_reward:                     {format_time:.4f} s ({total / format_time:.0f}/s)")


if __name__ == "__main__":
    main()
