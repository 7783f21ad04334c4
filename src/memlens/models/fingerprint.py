"""Fingerprints of local model weights, so cache keys follow the weights, not the path.

A retrained checkpoint written to the same folder must not be served the old model's cached
responses. ``fingerprint_path`` summarises a model folder or file cheaply — multi-GB weights are
never read:

* small files (<= ``SMALL_FILE_BYTES``: ``config.json``, ``*.index.json``, tokenizer and
  generation configs, LoRA adapter configs) by the sha256 of their content;
* large files (weights, a big ``tokenizer.json``) by name, size and modification time (ns);
* a single file (a GGUF) by name, size, mtime and the sha256 of its first MiB (the header);
* the embedded model's packaged GGUF by name, size and the sha256 of its content that pip
  recorded when it installed the package (its RECORD): the same weights in another virtualenv
  or after a reinstall (a new mtime) keep their fingerprint, so a run resumes and its cache
  holds (with the mtime, a fresh venv refused to resume a run made in another).

Only the folder's top level is read (what ``from_pretrained`` loads); ``checkpoint-*``
sub-folders of a training run are ignored. A hub id is resolved offline in the Hugging Face
cache (``models--ORG--NAME/refs/main`` → the snapshot commit); a name that resolves nowhere has
no fingerprint and keeps its bare identity. ``with_fingerprint`` appends ``#fp=<12 hex>`` to a
model id: the form ``model_id`` takes for ``hf:``, ``vllm:`` and ``embedded`` backends.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from memlens.errors import MemlensError
from memlens.models.embedded_weights import DISTRIBUTION, gguf_path

SMALL_FILE_BYTES = 1 << 20
"""Files up to this size are hashed by content; larger ones by size and mtime."""
HEADER_BYTES = 1 << 20
"""Bytes of a single weights file (GGUF) hashed as its header."""
MARK = "#fp="
"""Separator between a model id and its fingerprint."""


@dataclass(frozen=True)
class Fingerprint:
    """A model's weights in brief: ``digest`` (sha256 hex) over ``files`` files of ``bytes``."""

    digest: str
    source: str
    """What was fingerprinted: the resolved folder or file."""
    kind: str
    """``folder``, ``file`` or ``hub-cache`` (a hub id found in the local HF cache)."""
    files: int
    bytes: int

    @property
    def short(self) -> str:
        """The first 12 hex digits (what model ids carry)."""
        return self.digest[:12]

    def to_dict(self) -> dict:
        """JSON-ready form (for manifests), with ``short``."""
        return {**asdict(self), "short": self.short}


def _file_entry(path: Path, header: bool) -> dict:
    stat = path.stat()
    entry: dict = {"name": path.name, "size": stat.st_size}
    if stat.st_size <= SMALL_FILE_BYTES:
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        return entry
    entry["mtime_ns"] = stat.st_mtime_ns
    if header:
        with path.open("rb") as handle:
            entry["header_sha256"] = hashlib.sha256(handle.read(HEADER_BYTES)).hexdigest()
    return entry


def _digest(entries: list[dict]) -> str:
    text = json.dumps(entries, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint_path(path: str | Path) -> Fingerprint | None:
    """Fingerprint of a local model folder or weights file; None when ``path`` does not exist.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> first = fingerprint_path(folder)
    >>> _ = (folder / "config.json").write_text('{"layers": 2}')
    >>> first.kind, first.files, first.digest != fingerprint_path(folder).digest
    ('folder', 1, True)
    """
    target = Path(path).expanduser()
    if target.is_file():
        entry = _file_entry(target, header=True)
        return Fingerprint(_digest([entry]), str(target.resolve()), "file", 1, entry["size"])
    if not target.is_dir():
        return None
    files = sorted(p for p in target.iterdir() if p.is_file() and not p.name.startswith("."))
    entries = [_file_entry(p, header=False) for p in files]
    return Fingerprint(_digest(entries), str(target.resolve()), "folder", len(entries),
                       sum(e["size"] for e in entries))


def _hub_cache() -> Path:
    try:
        from huggingface_hub import constants

        return Path(constants.HF_HUB_CACHE)
    except ImportError:
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                         "huggingface")
        return Path(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))


def hub_snapshot(repo_id: str, cache: Path | None = None) -> Path | None:
    """The local snapshot folder of hub model ``repo_id`` (revision ``main``), if cached."""
    if repo_id.count("/") != 1 or repo_id.startswith((".", "/", "~")):
        return None
    root = (cache or _hub_cache()) / ("models--" + repo_id.replace("/", "--"))
    ref = root / "refs" / "main"
    if not ref.is_file():
        return None
    snapshot = root / "snapshots" / ref.read_text(encoding="utf-8").strip()
    return snapshot if snapshot.is_dir() else None


def fingerprint_model(name: str) -> Fingerprint | None:
    """Fingerprint of what ``hf:NAME`` / ``vllm:NAME`` would load: a local folder or file, else
    the cached hub snapshot; None when neither is found (e.g. a hub id not downloaded yet)."""
    local = fingerprint_path(name)
    if local is not None:
        return local
    snapshot = hub_snapshot(name)
    if snapshot is None:
        return None
    found = fingerprint_path(snapshot)
    return Fingerprint(found.digest, found.source, "hub-cache", found.files, found.bytes)


def with_fingerprint(model_id: str, fingerprint: Fingerprint | None) -> str:
    """``model_id`` with ``#fp=<short>`` appended (unchanged without a fingerprint).

    >>> with_fingerprint("hf:./m", Fingerprint("ab" * 32, "/m", "folder", 1, 2))
    'hf:./m#fp=abababababab'
    >>> with_fingerprint("hf:org/unknown", None)
    'hf:org/unknown'
    """
    return model_id if fingerprint is None else f"{model_id}{MARK}{fingerprint.short}"


def strip_fingerprint(model_id: str) -> str:
    """The model id without its ``#fp=…`` part.

    >>> strip_fingerprint("embedded#fp=0123456789ab")
    'embedded'
    """
    return model_id.split(MARK, 1)[0]


def recorded_sha256(distribution: str, path: Path) -> str | None:
    """The sha256 (hex) that pip recorded in ``distribution``'s RECORD for the installed file at
    ``path``; None when the package, the file or its hash is not recorded, or when the file's
    size no longer matches the record."""
    try:
        records = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    target = path.resolve()
    for record in records:
        if record.name != path.name or record.hash is None or record.hash.mode != "sha256":
            continue
        if Path(record.locate()).resolve() != target:
            continue
        if record.size is not None and record.size != target.stat().st_size:
            return None
        value = record.hash.value
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    return None


def embedded_fingerprint(path: str | Path | None = None) -> Fingerprint | None:
    """Fingerprint of the embedded model's GGUF (the packaged one when ``path`` is None: by its
    recorded content hash, see the module docstring); None when the package is not installed."""
    if path is not None:
        return fingerprint_path(path)
    try:
        packaged = gguf_path()
    except MemlensError:
        return None
    content = recorded_sha256(DISTRIBUTION, packaged)
    if content is None:
        return fingerprint_path(packaged)
    size = packaged.stat().st_size
    entry = {"name": packaged.name, "size": size, "sha256": content}
    return Fingerprint(_digest([entry]), str(packaged.resolve()), "file", 1, size)


def model_fingerprint(model: str) -> dict | None:
    """Manifest record of a model string's weights (``hf:``, ``vllm:``, ``embedded``); None for
    API models and for weights that cannot be found locally.

    >>> model_fingerprint("openai:gpt-4.1-mini") is None
    True
    """
    backend, _, name = model.strip().partition(":")
    if backend == "embedded" and not name:
        found = embedded_fingerprint()
    elif backend in ("hf", "vllm") and name:
        found = fingerprint_model(name)
    else:
        return None
    return None if found is None else found.to_dict()


MODEL_KEYS = ("model", "models", "judge", "rewriter", "generator", "policy")
"""Config keys whose values are model strings (a labeler's ``embedded`` is MiniLM, not a
chat model, so labeler keys are left out)."""


def config_fingerprints(config: dict) -> dict[str, dict]:
    """``{model string: fingerprint record}`` for the local models named in ``config`` under
    ``MODEL_KEYS`` (a string or a list of strings); API models and unknown weights left out.

    >>> config_fingerprints({"model": "openai:x", "labeler": "embedded", "seed": 0})
    {}
    """
    found: dict[str, dict] = {}
    for key in MODEL_KEYS:
        value = config.get(key)
        for model in [value] if isinstance(value, str) else list(value or []) \
                if isinstance(value, list | tuple) else []:
            if isinstance(model, str) and model not in found:
                record = model_fingerprint(model)
                if record is not None:
                    found[model] = record
    return found
