"""The chunk loop starts compiling the drift kernels when there is generation to hide it behind,
and not on a run that has nothing left to generate."""

import sys
from functools import cache
from pathlib import Path

import memlens.audit.chunks as chunks
from memlens.audit import build_config
from memlens.audit.pipeline import labeler_options, plan_cells
from memlens.models import get_model
from memlens.models.loopback import LoopbackServer
from memlens.ontology import get_labeler, load_ontology
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402


def run(config, run_dir):
    cells, _ = plan_cells(config)
    with RunStore(run_dir) as store:
        make_labeler = cache(lambda: get_labeler(
            config.labeler, ontology=load_ontology(config.ontology), store=store,
            **labeler_options(config)))
        return chunks.run_chunks(cells, config, store, cache(lambda: get_model(config.model)),
                                 make_labeler, size=8, progress=False)


def test_warm_up_starts_with_generation_only(tmp_path, monkeypatch):
    questions, stimuli = scripted.write_inputs(tmp_path)
    kept = [line for line in Path(questions).read_text().splitlines() if '"q3"' not in line]
    Path(questions).write_text("\n".join(kept) + "\n")  # q3 holds the scripted failing call
    started = []
    real = chunks.warm_up_kernels
    monkeypatch.setattr(chunks, "warm_up_kernels", lambda: started.append(1) or real())
    with LoopbackServer(responder=scripted.make_responder(3), latency_s=0.01) as server:
        config = build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 3, "max_tokens": 64, "samples": 1, "baselines": 1})
        first = run(config, tmp_path / "run")
        assert first.calls["pending"] == 24 and started == [1]
        again = run(config, tmp_path / "run")  # resumed: every call is cached
        assert again.calls["pending"] == 0 and started == [1]
