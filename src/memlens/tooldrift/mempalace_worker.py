"""MemPalace worker: runs inside MemPalace's own venv, never imported by memlens itself.

Started once per run by ``memlens.tooldrift.mempalace_adapter`` as
``<venv python> mempalace_worker.py PALACE_DIR``, with ``HOME``, ``MEMPALACE_PALACE_PATH`` and
``MEMPALACE_CONFIG_DIR`` under the run directory. It speaks JSON lines: one request object per
line on stdin, one reply object per line on stdout (``{"ok": true, ...}`` or
``{"ok": false, "error": "..."}``); anything MemPalace prints goes to stderr. The first line it
writes is a ready message (``{"ok": true, "ready": true, "mempalace": VERSION}``) or the reason it
cannot start. Requests:

- ``{"op": "mine", "wing": W, "transcript": TEXT}`` — the transcript (``> user`` lines, each
  followed by the assistant's answer) is written to a fresh folder and stored with
  ``mempalace.convo_miner.mine_convos(folder, palace, wing=W, extract_mode="exchange")``: one
  drawer per exchange. Reply ``{"drawers": N}`` (drawers now in the wing). With
  ``"llm": {"endpoint", "model", "key"}`` MemPalace's optional LLM step runs next:
  ``mempalace.closet_llm.regenerate_closets(palace, wing=W, cfg=LLMConfig(...))`` replaces the
  wing's regex closets (the search index that boosts drawers) with LLM-written topics, quotes
  and a summary; the reply then also has ``"closets": {"processed", "failed", ...}``.
- ``{"op": "count", "wing": W}`` — ``{"drawers": N}``.
- ``{"op": "search", "wing": W, "query": Q, "n_results": K}`` —
  ``mempalace.searcher.search_memories(Q, palace, wing=W, n_results=K)`` (no distance filter:
  the caller applies its own cut-off); reply ``{"results": [{"text", "similarity", "distance"}]}``
  where ``similarity`` = 1 − cosine distance (the raw cosine of the MiniLM vectors).

``mempalace_worker.py --export MINILM_DIR`` (used by ``memlens tooldrift setup mempalace``)
exports the packaged MiniLM (sentence-transformers folder) to ONNX, with its tokenizer files, into
``<venv>/memlens_home/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/`` — the layout chromadb's
default embedder (``ONNXMiniLM_L6_V2``) reads under ``HOME`` — so nothing is downloaded. The
export needs torch, transformers and onnx; the runs need none of them.

Only the standard library and MemPalace are imported at the top: this file runs under another
interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

MODEL_FILES = ("config.json", "model.onnx", "special_tokens_map.json", "tokenizer_config.json",
               "tokenizer.json", "vocab.txt")
MODEL_SUBDIR = Path(".cache", "chroma", "onnx_models", "all-MiniLM-L6-v2", "onnx")


def model_home(prefix: str | None = None) -> Path:
    """The HOME-like folder under the venv where ``setup`` exported the ONNX MiniLM."""
    return Path(prefix or sys.prefix) / "memlens_home"


def _link_model(home: Path) -> None:
    """Make chromadb find the exported model under the run's HOME (a symlink, no copy)."""
    source = model_home() / MODEL_SUBDIR
    missing = [name for name in MODEL_FILES if not (source / name).is_file()]
    if missing:
        raise RuntimeError(f"the ONNX MiniLM export is missing in {source} ({', '.join(missing)}); "
                           "run 'memlens tooldrift setup mempalace'")
    target = home / MODEL_SUBDIR
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source, target_is_directory=True)


class Worker:
    def __init__(self, palace: str):
        self.palace = palace
        from mempalace.convo_miner import mine_convos
        from mempalace.searcher import search_memories

        self._mine, self._search = mine_convos, search_memories
        self._scratch = Path(tempfile.mkdtemp(prefix="transcripts_", dir=Path(palace).parent))
        self._mined = 0

    def _collection(self):
        from mempalace.palace import get_collection

        return get_collection(self.palace)

    def count(self, wing: str) -> int:
        if not Path(self.palace).exists():
            return 0
        try:
            got = self._collection().get(where={"wing": wing}, include=[])
        except Exception:  # no collection yet: nothing stored
            return 0
        return len(got["ids"])

    def llm_closets(self, wing: str, llm: dict) -> dict:
        """MemPalace's LLM closet regeneration for one wing (its only LLM step on memories)."""
        from mempalace.closet_llm import LLMConfig, regenerate_closets

        cfg = LLMConfig(endpoint=llm["endpoint"], key=llm.get("key") or "", model=llm["model"])
        result = regenerate_closets(self.palace, wing=wing, cfg=cfg)
        if "error" in result:
            raise RuntimeError(f"regenerate_closets: {result}")
        return {key: result.get(key, 0) for key in ("processed", "failed", "input_tokens",
                                                    "output_tokens")}

    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "count":
            return {"drawers": self.count(request["wing"])}
        if op == "mine":
            self._mined += 1
            folder = self._scratch / f"t{self._mined}"
            folder.mkdir()
            (folder / f"{request['wing']}.txt").write_text(request["transcript"], encoding="utf-8")
            self._mine(str(folder), self.palace, wing=request["wing"], extract_mode="exchange")
            reply = {"drawers": self.count(request["wing"])}
            if request.get("llm"):
                reply["closets"] = self.llm_closets(request["wing"], request["llm"])
            return reply
        if op == "search":
            found = self._search(request["query"], self.palace, wing=request["wing"],
                                 n_results=int(request.get("n_results", 5)))
            if "error" in found:
                raise RuntimeError(f"search_memories: {found['error']}")
            return {"results": [{"text": hit["text"], "distance": hit["distance"],
                                 "similarity": round(1.0 - float(hit["distance"]), 4)}
                                for hit in found.get("results", [])]}
        raise ValueError(f"unknown op {op!r}")


def export_onnx(minilm_dir: str) -> Path:
    """Export the MiniLM folder to ONNX (last_hidden_state; chromadb pools and normalises)."""
    import shutil

    import torch
    from transformers import AutoModel

    target = model_home() / MODEL_SUBDIR
    staging = target.with_name("onnx.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    model = AutoModel.from_pretrained(minilm_dir, attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones(2, 8, dtype=torch.long)
    torch.onnx.export(Hidden(model), (ids, ids, torch.zeros_like(ids)),
                      str(staging / "model.onnx"), input_names=names,
                      output_names=["last_hidden_state"], opset_version=14, dynamo=False,
                      dynamic_axes={n: {0: "batch", 1: "sequence"}
                                    for n in [*names, "last_hidden_state"]})
    for name in MODEL_FILES:
        if name != "model.onnx":
            shutil.copy2(Path(minilm_dir) / name, staging / name)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--export":
        print(export_onnx(sys.argv[2]))
        return 0
    # Replies go to the original stdout; everything printed by MemPalace goes to stderr.
    reply_stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(message: dict) -> None:
        reply_stream.write(json.dumps(message) + "\n")
        reply_stream.flush()

    try:
        _link_model(Path(os.environ["HOME"]))
        import mempalace

        worker = Worker(sys.argv[1])
    except Exception as exc:  # report why, then stop
        traceback.print_exc()
        send({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    send({"ok": True, "ready": True, "mempalace": getattr(mempalace, "__version__", "?")})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = {"ok": True, **worker.handle(json.loads(line))}
        except Exception as exc:
            traceback.print_exc()
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        send(reply)
    with contextlib.suppress(OSError):
        reply_stream.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
