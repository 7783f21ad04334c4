"""Library code never changes the process environment: building the embedded labeler or a
memory framework leaves ``os.environ`` exactly as it was (issue 12)."""

import importlib.util
import os

import pytest

from memlens.envscope import scoped_environ

# tests/conftest.py sets these with setdefault; delete them so a library re-setting them shows.
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE",
                "MEM0_TELEMETRY", "MEM0_DIR", "SIMPLEMEM_EMBEDDING_MODEL")


def environ() -> dict:
    """The process environment, less pytest's own per-phase bookkeeping variable."""
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture
def bare_environ(monkeypatch):
    """The environment without the offline variables, taken after the heavy third-party
    imports (torch sets KMP_* / TORCHINDUCTOR_CACHE_DIR when imported: not memlens' doing)."""
    pytest.importorskip("sentence_transformers")
    for name in OFFLINE_VARS:
        monkeypatch.delenv(name, raising=False)
    return environ()


def test_scoped_environ_restores_set_and_unset_values(monkeypatch):
    monkeypatch.setenv("MEMLENS_T_KEPT", "old")
    monkeypatch.delenv("MEMLENS_T_NEW", raising=False)
    with pytest.raises(RuntimeError), scoped_environ(MEMLENS_T_KEPT="new", MEMLENS_T_NEW="1"):
        assert os.environ["MEMLENS_T_KEPT"] == "new" and os.environ["MEMLENS_T_NEW"] == "1"
        raise RuntimeError("boom")
    assert os.environ["MEMLENS_T_KEPT"] == "old" and "MEMLENS_T_NEW" not in os.environ


@pytest.mark.embedded
def test_building_the_embedded_labeler_leaves_the_environment_alone(bare_environ):
    from memlens.ontology import get_labeler
    from memlens.ontology.embedding import _load_sentence_transformer

    _load_sentence_transformer.cache_clear()  # really load MiniLM here, not a cached copy
    labeler = get_labeler("embedded")
    assert labeler.label([["I weigh the cost against my savings."]])[0][0] != ""
    assert environ() == bare_environ


@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="mem0ai not installed")
def test_opening_a_mem0_memory_leaves_the_environment_alone(bare_environ, tmp_path):
    from memlens.tooldrift.frameworks import open_memory

    open_memory("mem0", tmp_path / "memory")
    assert environ() == bare_environ


@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("simplemem") is None, reason="simplemem not installed")
def test_opening_a_simplemem_memory_leaves_the_environment_alone(bare_environ, tmp_path):
    from memlens.tooldrift.frameworks import open_memory

    open_memory("simplemem", tmp_path / "memory")
    assert environ() == bare_environ
