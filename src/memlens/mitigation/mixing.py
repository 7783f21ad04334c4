"""Mixing SymPreference with a general preference set (Tulu-style, App. I.1).

The general set is a JSONL file of ``prompt`` / ``chosen`` / ``rejected`` (strings or chat
messages), optionally with ``tie`` (bool) or ``score_chosen`` / ``score_rejected``. Pairs are
dropped when they are ties (``tie`` true, equal scores or identical texts) or when chosen and
rejected differ by more than ``max_length_difference`` tokens (whitespace tokens: no tokenizer is
needed). The paper also removes "highly subjective" examples; that needs labels the file would
have to carry and is not done here. Kept pairs are sampled so they make up ``fraction`` of the
result (paper: 50/50), or all of them when there are fewer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import iter_json_objects, read_text
from memlens.mitigation.labeling import completion_text


def _as_messages(value: object, role: str) -> list[dict]:
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    return list(value)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(str(m.get("content", "")) for m in value if isinstance(m, dict))


def read_general(path: str | Path) -> list[dict]:
    """Read and validate the general preference JSONL; errors name the file and line."""
    rows = []
    expected = "a JSON object with fields prompt, chosen, rejected"
    for number, row in iter_json_objects(read_text(path, "--mix file"), str(path), expected):
        for field in ("prompt", "chosen", "rejected"):
            if not isinstance(row.get(field), str | list):
                raise MemlensError(f"{path}:{number}: field '{field}' must be a string or a "
                                   "list of chat messages")
        rows.append(row)
    return rows


def is_tie(row: dict) -> bool:
    """A pair with no clear preference.

    >>> is_tie({"chosen": "a", "rejected": "a"}), is_tie({"chosen": "a", "rejected": "b"})
    (True, False)
    >>> is_tie({"chosen": "a", "rejected": "b", "score_chosen": 7, "score_rejected": 7})
    True
    """
    if row.get("tie") is True:
        return True
    if "score_chosen" in row and row.get("score_chosen") == row.get("score_rejected"):
        return True
    return completion_text(_text(row["chosen"])).strip() == \
        completion_text(_text(row["rejected"])).strip()


def length_difference(row: dict) -> int:
    """|whitespace tokens(chosen) − whitespace tokens(rejected)|.

    >>> length_difference({"chosen": "a b c", "rejected": [{"role": "assistant", "content": "a"}]})
    2
    """
    return abs(len(_text(row["chosen"]).split()) - len(_text(row["rejected"]).split()))


def mix_general(rows: list[dict], general: str | Path | list[dict], fraction: float,
                max_length_difference: int, seed: int) -> tuple[list[dict], dict]:
    """``rows`` plus sampled general pairs, and the counts of what was read, dropped and kept;
    ``general`` is the file, or its rows as ``read_general`` returned them."""
    if not 0.0 <= fraction < 1.0:
        raise MemlensError(f"--mix-fraction must be in [0, 1), got {fraction}")
    if not isinstance(general, list):
        general = read_general(general)
    ties = [row for row in general if is_tie(row)]
    usable = [row for row in general if not is_tie(row)]
    kept = [row for row in usable if length_difference(row) <= max_length_difference]
    wanted = round(len(rows) * fraction / (1.0 - fraction)) if rows else len(kept)
    rng = np.random.default_rng(seed)
    picks = sorted(rng.choice(len(kept), size=min(wanted, len(kept)), replace=False).tolist()) \
        if kept else []
    extra = [{"prompt": _as_messages(kept[i]["prompt"], "user"),
              "chosen": _as_messages(kept[i]["chosen"], "assistant"),
              "rejected": _as_messages(kept[i]["rejected"], "assistant"),
              "source": "general", "question_id": None, "persona_id": None, "chosen_h": None,
              "rejected_h": None, "rewrite": None} for i in picks]
    counts = {"read": len(general), "dropped_tie": len(ties),
              "dropped_length": len(usable) - len(kept), "eligible": len(kept),
              "added": len(extra)}
    return rows + extra, counts
