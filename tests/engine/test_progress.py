"""One overall bar across stages: stage bars advance it, paused blocks and the labeler's own
calls do not, planned work can shrink but never below what is done."""

from memlens.engine import run_requests
from memlens.engine.progress import (
    RunProgress,
    current_overall,
    overall_paused,
    overall_progress,
)
from memlens.models import ChatRequest, FakeModel


def ask(i):
    return ChatRequest(({"role": "user", "content": f"q{i}"},))


def test_stage_bars_advance_the_overall_bar_and_cached_calls_count():
    model = FakeModel(["ok"])
    with overall_progress(10, enabled=False) as overall:
        run_requests(model, [ask(i) for i in range(4)], progress=False, desc="generate")
        assert overall.done == 4 and overall.stage == "generate"
        with overall_paused():
            assert current_overall() is None
            run_requests(model, [ask(i) for i in range(3)], progress=False, desc="label")
        assert overall.done == 4  # the labeler's calls are counted per response by its stage
        bar = RunProgress(2, cached=3, desc="generate", enabled=False)
        bar.advance(False)
        bar.close()
        assert overall.done == 8  # 3 answered from the store + 1 call
    assert current_overall() is None


def test_planned_work_shrinks_but_not_below_done_and_grows_when_exceeded():
    with overall_progress(10, enabled=False) as overall:
        overall.advance(6)
        overall.grow(-8)
        assert overall.total == 6
        overall.advance(2)
        assert overall.total == 8 and overall.done == 8
