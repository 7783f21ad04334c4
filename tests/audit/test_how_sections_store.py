"""The how-sections on a model-free store (steps + labels written directly, as an older run or
one without reply texts would hold them): loadable, every section present, answer drift marked
as not measured, value contrasts formed for a category with two values."""

from memlens.audit import build_config
from memlens.audit.drift import run_answer_drift, run_drift
from memlens.audit.explore import explore
from memlens.audit.pipeline import write_manifest
from memlens.store import RunStore

SEQ = {"control/no_perturbation": ["ABCD", "ABCE"], "noise/filler/1": ["ABCD"],
       "persona/age/young": ["ABEE"], "persona/age/old": ["DDDD"]}
SYMBOL = {"A": "social.fairness_reciprocity", "B": "practical.resources_cost",
          "C": "practical.planning_feasibility", "D": "protective.safety_wellbeing_risk",
          "E": "personal.emotional_wellbeing"}


def make_store(run_dir):
    steps, labels = [], []
    for q in ("q1", "q2", "q3"):
        for stimulus, samples in SEQ.items():
            klass, category = stimulus.split("/")[:2]
            for k, letters in enumerate(samples):
                cid = f"{q}|{stimulus}|{k}"
                steps.append({"id": cid, "question_id": q, "stimulus_id": stimulus, "sample": k,
                              "condition_class": klass, "category": category, "status": "ok",
                              "method": "tagged", "steps": [f"s{i}" for i in range(len(letters))],
                              "question_text": q, "stimulus_text": stimulus})
                labels.append({"id": cid, "labels": [SYMBOL[x] for x in letters]})
    config = build_config({"model": "fake", "labeler": "embedded", "samples": 1,
                           "baselines": 1, "n_bootstrap": 200})
    with RunStore(run_dir) as store:
        write_manifest(store, config, {"questions": 3})
        store.put_rows("audit_steps", steps)
        store.put_rows("audit_labels", labels)
        run_drift(store)
        counts = run_answer_drift(store, encoder=None)  # no reply texts in the cache
    return counts


def test_sections_without_answers(tmp_path):
    counts = make_store(tmp_path / "run")
    assert counts["answers_missing_text"] == 15 and counts["pairs_scored"] == 0
    run = explore(tmp_path / "run")
    stats = run.stats.to_json()
    assert "answer_cosine" not in run.drift().columns
    assert stats["answer"]["metrics"] == {} and "not measured" in stats["answer"]["note"]
    direction = run.direction()
    age = direction[(direction["category"] == "age") & (direction["level"] == "root")]
    # age: young ABEE, old DDDD vs baseline ABCD -> Practical 50% -> 12.5% on average
    assert age.set_index("symbol").loc["Practical", "shift_pp"] == -37.5
    contrasts = run.contrasts()
    assert set(contrasts["category"]) == {"age"} and (contrasts["n_pairs"] == 3).all()
    assert not run.substitutions().empty
    assert run.most_drifted(1)["category"].tolist() == ["age", "filler"]
