"""The audit's resume check runs on memlens.runmanifest.open_run_manifest: changed settings or
input content refuse, runtime-only settings and keys a legacy manifest lacks do not."""

import pytest

from memlens.audit import build_config
from memlens.audit.pipeline import check_manifest, write_manifest
from memlens.errors import MemlensError
from memlens.store import RunStore

INPUTS = {"questions": 2, "questions_sha256": "q1", "stimuli_sha256": "s1",
          "ontology_sha256": "o1"}


def stored(tmp_path, config):
    store = RunStore(tmp_path)
    check_manifest(store, config, INPUTS, tmp_path)  # a fresh run: nothing to compare
    write_manifest(store, config, INPUTS)
    return store


def test_changed_setting_and_input_content_refuse(tmp_path):
    config = build_config({"samples": 2})
    with stored(tmp_path, config) as store:
        with pytest.raises(MemlensError, match=r"holds an audit run with different settings "
                                               r"\(samples\)"):
            check_manifest(store, build_config({"samples": 3}), INPUTS, tmp_path)
        with pytest.raises(MemlensError, match=r"\(questions content\)"):
            check_manifest(store, config, {**INPUTS, "questions_sha256": "q2"}, tmp_path)
        assert store.read_manifest()["audit"]["inputs"]["questions_sha256"] == "q1"  # unchanged


def test_runtime_settings_and_unrecorded_keys_resume(tmp_path):
    config = build_config({"samples": 2})
    with stored(tmp_path, config) as store:
        check_manifest(store, build_config({"samples": 2, "concurrency": 64,
                                            "orthogonality_threshold": 0.7}), INPUTS, tmp_path)
        entry = store.read_manifest()["audit"]
        del entry["config"]["top_k"]  # a run recorded before the key existed
        store.write_manifest({"audit": entry})
        check_manifest(store, build_config({"samples": 2, "top_k": 7}), INPUTS, tmp_path)
