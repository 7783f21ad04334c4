"""Final-answer parsing, markers and the answer metrics of a pair (hand-computed)."""

import numpy as np
import pytest

from memlens.audit.answers import final_answer, markers, pack_vector, unpack_vector
from memlens.audit.drift import answer_pair_metrics, frame_columns


@pytest.mark.parametrize(("text", "expected"), [
    ("<think><step_1>x</step_1></think><answer>Rent.</answer>", ("Rent.", "tag")),
    ("<answer>first</answer> later <answer> last </answer>", ("last", "tag")),
    ("Step one.\n\nStep two.\n \nSo rent.", ("So rent.", "last_paragraph")),
    ("<think>only thinking</think>", ("only thinking", "last_paragraph")),
    ("<answer></answer>", ("", "empty")),
    ("", ("", "empty")),
])
def test_final_answer(text, expected):
    assert final_answer(text) == expected


def test_markers_word_bounded():
    assert markers("Maybe.")["hedged"] is False  # "may" must not match inside "maybe"
    assert markers("It may rain.")["hedged"] is True
    assert markers("As an AI, I cannot say.")["refused"] is True
    assert markers("I canceled it.")["refused"] is False


def test_pair_metrics_hand_computed():
    v1, v2 = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    r = {"id": "r", "words": 4, "hedged": False, "refused": True}
    b = {"id": "b", "words": 1, "hedged": True, "refused": False}
    got = answer_pair_metrics(r, b, {"r": v1, "b": v2})
    assert got == pytest.approx({"answer_cosine": 0.4, "answer_length_ratio": 2.5,
                                 "answer_hedging": -1.0, "answer_refusal": 1.0})
    empty = {"id": "e", "words": 0, "hedged": False, "refused": False}
    assert answer_pair_metrics(empty, b, {"e": None, "b": v2})["answer_cosine"] == 1.0
    assert answer_pair_metrics(empty, dict(empty, id="f"), {})["answer_cosine"] == 0.0
    assert "answer_cosine" not in answer_pair_metrics(r, b, {"r": None, "b": v2})


def test_vector_roundtrip_and_frame_columns():
    vector = np.array([0.6, -0.8], np.float32)
    np.testing.assert_allclose(unpack_vector(pack_vector(vector)), vector, atol=1e-3)
    rows = [{"answer_cosine": 0.1, "answer_hedging": 0.0}, {"answer_hedging": 1.0}]
    columns = frame_columns(rows)
    assert "answer_hedging" in columns and "answer_cosine" not in columns
    assert "answer_cosine" not in frame_columns([])


def test_finished_answers_do_not_load_the_encoder(tmp_path, monkeypatch):
    """A resumed, finished run has nothing to embed: MiniLM must not be loaded for it."""
    from memlens.audit import answers
    from memlens.store import RunStore

    def no_encoder():
        raise AssertionError("the encoder was loaded with nothing to embed")

    monkeypatch.setattr(answers, "default_encoder", no_encoder)
    with RunStore(tmp_path / "run") as store:
        store.put_rows("audit_steps", [{"id": "r1", "status": "ok"}, {"id": "r2", "status": "ok"}])
        store.put_rows(answers.ANSWERS_TABLE, [{"id": "r1", "embedding": "AAAA", "words": 3},
                                               {"id": "r2", "embedding": None, "words": 0}])
        counts = answers.run_answers(store)
    assert counts == {"responses": 2, "parsed": 0, "embedded": 0, "missing_text": 0}
