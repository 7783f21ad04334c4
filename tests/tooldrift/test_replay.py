"""--replay-memories: Setting 2 from a local copy of the dataset's memories/<framework>/ files,
on a small fixture laid out exactly like the published dataset."""

import json
import shutil

import pytest
from tooldrift_fakes import DATA, drifting_agent

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.models import FakeModel
from memlens.tooldrift import bundled_path, load_dataset
from memlens.tooldrift.replay import ReplayMemory
from memlens.tooldrift.runner import RETRIEVAL_TABLE, RunConfig, run_tooldrift

DIM = "speed_impatience"
ECOMMERCE, FINANCE = f"{DIM}/ecommerce/scenario_1", f"{DIM}/finance/scenario_1"


def published_layout(root):
    """scenarios/, rubrics/all_params/, conversations/<dim>.json and <dim>_neutral.json,
    memories/mem0/<dim>.json and memories/mempalace/<dim>.json — each memory file holding the
    whole entries plus the two retrieved-memory fields, as the dataset card describes."""
    shutil.copytree(bundled_path() / "scenarios", root / "scenarios")
    shutil.copytree(bundled_path() / "rubrics", root / "rubrics")
    entries = json.loads((root / "scenarios" / f"{DIM}.json").read_text())
    by_id = {f"{e['bias_dimension']}/{e['domain']}/{e['scenario_num']}": e for e in entries}
    shop, bank = by_id[ECOMMERCE], by_id[FINANCE]

    def talk(line):
        return [{"role": "user", "content": line},
                {"role": "assistant", "content": "Ha, that sounds like you!"}]

    (root / "conversations").mkdir()
    for suffix, field, key in (("", "biased_conversation", "biased_user_memory"),
                               ("_neutral", "neutral_conversation", "neutral_user_memory")):
        rows = [{**e, field: [{"memory_idx": i, "memory": m, "conversation": talk(m)}
                              for i, m in enumerate(e[key])]} for e in (shop, bank)]
        (root / "conversations" / f"{DIM}{suffix}.json").write_text(json.dumps(rows, indent=2))
    mem0 = [{**shop, "biased_retrieved_memory": [
                {"memory": "Plays most podcasts at double speed", "score": 0.31},
                {"memory": shop["biased_user_memory"][2], "score": 0.12}],
             "neutral_retrieved_memory": [{"memory": shop["neutral_user_memory"][0],
                                           "score": 0.11}]},
            {**bank, "biased_retrieved_memory": [], "neutral_retrieved_memory": []}]
    (root / "memories" / "mem0").mkdir(parents=True)
    (root / "memories" / "mem0" / f"{DIM}.json").write_text(json.dumps(mem0, indent=2))
    (root / "memories" / "mempalace").mkdir()
    (root / "memories" / "mempalace" / f"{DIM}.json").write_text(json.dumps(
        [{**shop, "biased_retrieved_memory": "> " + shop["biased_user_memory"][0],
          "neutral_retrieved_memory": ""}]))
    return root


def test_replay_injects_the_published_retrievals(tmp_path):
    root = published_layout(tmp_path / "memdrift")
    data = load_dataset(root)
    memory = ReplayMemory.load(root, "mem0", data)
    seen = []

    def agent(messages, params):
        seen.append(messages[0]["content"])
        return drifting_agent(messages, params)

    summary = run_tooldrift(FakeModel(agent), data, tmp_path / "run",
                            RunConfig(k=1, setting=2, framework="mem0", n_bootstrap=50,
                                      extra={"replay_memories": str(root)}),
                            memory, progress=False)
    assert summary.overall.n_scenarios == 2 and summary.run.memory == "replay:mem0"
    summary = summary.to_dict()  # the rest as tooldrift.json holds it
    assert any("- Plays most podcasts at double speed" in prompt for prompt in seen)
    rates = summary["retrieval"]
    assert rates["biased"]["any"]["k"] == 1 and rates["biased"]["biased"]["k"] == 1
    assert rates["neutral"]["any"]["k"] == 1 and rates["neutral"]["biased"]["k"] == 0
    assert rates["biased"]["prompt_equals_base"] == 1  # the finance entry retrieved nothing
    # 1 of 2 biased queries retrieved a biased memory: the rule needs max(2, ceil(0.5)) = 2
    assert summary["interpretation"]["reasons"][0]["code"] == "biased_rarely_retrieved"
    by_id = {s["entry_id"]: s for s in summary["scenarios"]}
    assert by_id[ECOMMERCE]["r_biased"] == 1.0 and by_id[FINANCE]["r_biased"] == 0.0
    from memlens.store import RunStore

    with RunStore(tmp_path / "run", read_only=True) as store:
        rows = [r for r in store.rows(RETRIEVAL_TABLE) if r["rank"] is not None]
    # the paraphrase is attributed by word overlap, the verbatim line directly
    assert {(r["condition"], r["source"], r["score"]) for r in rows} == {
        ("biased", "biased", 0.31), ("biased", "biased", 0.12), ("neutral", "neutral", 0.11)}


def test_replay_string_form_and_cli(tmp_path, capsys):
    root = published_layout(tmp_path / "memdrift")
    memory = ReplayMemory.load(root, "mempalace", load_dataset(root))
    assert memory.entry_ids == {ECOMMERCE}
    entry = DATA.entries[ECOMMERCE]
    assert memory.memories(entry, "neutral") == [entry.base_user_memory]
    status = main(["tooldrift", "run", "--model", "fake", "--k", "1", "--setting", "2",
                   "--framework", "mem0", "--replay-memories", str(root), "--out",
                   str(tmp_path / "run"), "--bootstrap", "20"])
    out = capsys.readouterr().out
    assert status == 0 and "retr. any (biased)" in out and "memory: replay:mem0" in out
    assert "Δ not interpretable" in out  # the fake model never calls the tool


@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[0].pop("neutral_retrieved_memory"),
     "entry 0 (speed_impatience/ecommerce/scenario_1): field 'neutral_retrieved_memory' is missing"),
    (lambda rows: rows[0].update(biased_retrieved_memory=[{"score": 0.2}]),
     "field 'biased_retrieved_memory[0]' must be a string or an object"),
    (lambda rows: rows[0].update(biased_retrieved_memory=[{"memory": "x", "score": "high"}]),
     "field 'biased_retrieved_memory[0]': 'score' must be a number"),
    (lambda rows: rows[0].update(biased_retrieved_memory=7),
     "field 'biased_retrieved_memory' must be a list of retrieved memories or a string"),
    (lambda rows: rows[1].update(scenario_num="scenario_9"),
     "entry 1: entry 'speed_impatience/finance/scenario_9' is not in scenarios/"),
    (lambda rows: rows.append(dict(rows[0])), "duplicate entry in memories/mem0/"),
])
def test_bad_replay_files_name_file_entry_and_field(tmp_path, change, message):
    root = published_layout(tmp_path / "memdrift")
    path = root / "memories" / "mem0" / f"{DIM}.json"
    rows = json.loads(path.read_text())
    change(rows)
    path.write_text(json.dumps(rows))
    with pytest.raises(MemlensError) as caught:
        ReplayMemory.load(root, "mem0", load_dataset(root))
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_replay_of_a_framework_without_files(tmp_path, capsys):
    root = published_layout(tmp_path / "memdrift")
    with pytest.raises(MemlensError, match=r"no folder memories/simplemem/ \(available: "
                                           r"mem0, mempalace\)"):
        ReplayMemory.load(root, "simplemem", load_dataset(root))
    status = main(["tooldrift", "run", "--model", "fake", "--replay-memories", str(root),
                   "--out", str(tmp_path / "run")])
    assert status == 2 and "--setting 2" in capsys.readouterr().err
