"""When Δ = r_biased − r_neutral means something: the documented rule, applied per group.

Δ of a group (the run, a dimension, a domain) is **not interpretable** when any of these holds,
checked in this order; each gives a reason (``code``, ``text``):

1. ``no_pairs`` — no scenario of the group has both a neutral and a biased rate (every pair
   failed: no call, invalid call, or nothing comparable), so there is no Δ at all.
2. ``prompts_equal_base`` — every neutral and every biased prompt of the group equals its base
   prompt (nothing reached the model beyond the base memory), so Δ is 0 by construction.
3. ``biased_rarely_retrieved`` — memory came through a framework (Setting 2, live or replayed)
   and a biased memory was retrieved in fewer than ``max(min_count, ceil(min_share × n))`` of the
   group's n biased-condition queries (defaults 2 and 25 %): Δ then measures mostly the prompts
   that never held a biased memory, i.e. the retriever, not the model.

Setting 1 injects the memory verbatim (every biased prompt holds the biased memories), so only
rule 1 can apply there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memlens.tooldrift.results import Interpretation, Reason

MIN_BIASED_RETRIEVAL_COUNT = 2
MIN_BIASED_RETRIEVAL_SHARE = 0.25


@dataclass(frozen=True)
class InterpretRule:
    """Thresholds of rule 3 (see the module docstring)."""

    min_count: int = MIN_BIASED_RETRIEVAL_COUNT
    min_share: float = MIN_BIASED_RETRIEVAL_SHARE

    def needed(self, queries: int) -> int:
        """Biased retrievals needed among ``queries`` biased-condition queries.

        >>> InterpretRule().needed(10), InterpretRule().needed(4), InterpretRule().needed(35)
        (3, 2, 9)
        """
        return max(self.min_count, math.ceil(self.min_share * queries - 1e-9))


def verdict(paired_n: int, queries: list[dict] | None, rule: InterpretRule) -> Interpretation:
    """Whether one group's Δ is interpretable, with the reasons (``code``, ``text`` and
    ``short``, the form the terminal table shows) and the rule's thresholds.

    ``paired_n`` = scenarios with both rates; ``queries`` = the group's per-(entry, condition)
    memory records (``same_as_base``, ``retrieved_biased``; the latter None when the memory was
    injected verbatim), or None when unknown (``tooldrift score`` on a bare CALLS file).

    >>> verdict(5, [{"condition": "biased", "same_as_base": False, "retrieved_biased": False}] * 5,
    ...         InterpretRule()).reasons[0].text
    'a biased memory was retrieved in 0 of 5 biased-condition queries (at least 2 needed)'
    """
    reasons = []
    if paired_n == 0:
        reasons.append(Reason("no_pairs", "no scenario has both a neutral and a biased rate (no "
                                          "call, invalid or not comparable)",
                              "no scenario with both rates"))
    queries = queries or []
    conditioned = [q for q in queries if q["condition"] in ("neutral", "biased")]
    if conditioned and all(q["same_as_base"] for q in conditioned):
        reasons.append(Reason("prompts_equal_base",
                              f"all {len(conditioned)} neutral and biased prompts equal the base "
                              "prompt (nothing retrieved beyond the base memory)",
                              f"all {len(conditioned)} prompts = base"))
    biased = [q for q in queries if q["condition"] == "biased"
              and q.get("retrieved_biased") is not None]
    if biased:
        hits = sum(1 for q in biased if q["retrieved_biased"])
        needed = rule.needed(len(biased))
        if hits < needed:
            reasons.append(Reason("biased_rarely_retrieved",
                                  f"a biased memory was retrieved in {hits} of {len(biased)} "
                                  f"biased-condition queries (at least {needed} needed)",
                                  f"biased retrieved {hits}/{len(biased)} < {needed}"))
    return Interpretation(not reasons, tuple(reasons), rule.min_count, rule.min_share)
