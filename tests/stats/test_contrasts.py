"""Value contrasts: a seeded simulation detects a planted contrast and not a same-answer one."""

import numpy as np
import pandas as pd

from memlens.stats.contrasts import contrast_pairs, score_contrast_pairs, value_contrasts

SYMBOLS = list("abcd")


def simulate(seed: int = 0, questions: int = 20):
    rng = np.random.default_rng(seed)
    responses, floor = [], []
    for q in range(questions):
        base = list(rng.choice(SYMBOLS, size=6))

        def noisy(seq):
            return [s if rng.random() > 0.3 else str(rng.choice(SYMBOLS)) for s in seq]

        b0, b1 = noisy(base), noisy(base)
        floor.append({"question_id": f"q{q}", "dtw": float(np.mean([x != y for x, y in
                                                                    zip(b0, b1, strict=True)]))})
        old = [("e" if k % 2 else s) for k, s in enumerate(noisy(base))]  # planted: differs
        same = noisy(base)
        for stimulus, seq in (("age/young", noisy(base)), ("age/old", old),
                              ("gender/a", same), ("gender/b", list(same))):
            responses.append({"question_id": f"q{q}", "category": stimulus.split("/")[0],
                              "condition_class": "persona", "stimulus_id": stimulus, "sample": 0,
                              "symbols": seq})
    return pd.DataFrame(responses), pd.DataFrame(floor)


def test_planted_contrast_detected_same_answer_not():
    responses, floor = simulate()
    scored = score_contrast_pairs(contrast_pairs(responses), responses)
    floor = floor.assign(sri=floor["dtw"])
    table = value_contrasts(scored, floor, n_bootstrap=1000).set_index(["metric", "category"])
    assert table.loc[("dtw", "age"), "detected"] and table.loc[("dtw", "age"), "ci_low"] > 0
    assert not table.loc[("dtw", "gender"), "detected"]
    assert table.loc[("dtw", "gender"), "mean"] == 0.0 and table.loc[("dtw", "gender"), "difference"] < 0
    assert table.loc[("dtw", "age"), "n_pairs"] == 20 and table.loc[("dtw", "age"), "n_questions"] == 20


def test_null_contrasts_rarely_detected():
    hits = 0
    for seed in range(20):
        responses, floor = simulate(seed, questions=12)
        responses = responses[responses["category"] == "age"].copy()
        # null: both values drawn like the baselines (replace the planted old responses)
        rng = np.random.default_rng(100 + seed)
        responses["symbols"] = [list(rng.choice(SYMBOLS, size=6)) if s == "age/old" else x
                                for s, x in zip(responses["stimulus_id"], responses["symbols"],
                                                strict=True)]
        scored = score_contrast_pairs(contrast_pairs(responses), responses)
        same = responses.assign(stimulus_id=responses["stimulus_id"].str.replace("old", "young"))
        assert contrast_pairs(same).empty  # one value only: no pair
        table = value_contrasts(scored, floor.assign(sri=floor["dtw"]), n_bootstrap=300)
        hits += int(table["detected"].any())
    # random "old" sequences are unrelated to the question: that IS a contrast (drift above
    # the floor) -> detected nearly always; this guards the detector's power, not its size
    assert hits >= 18
