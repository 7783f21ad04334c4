"""Write src/memlens/data/examples/drift_table.csv: a simulated drift table with known truth.

60 questions; `no_perturbation` (one row per question: drift between two no-memory samples);
3 noise categories with NO true effect; 10 persona categories with planted effects of 0.01–0.08
DTW units; 10 life-event categories with large effects (0.12–0.20). Each non-control category has
3 stimuli per question. DTW = floor 0.30 + question effect (sd 0.05) + planted effect + row noise
(sd 0.08), clipped to [0, 1]; SRI = 0.7·DTW + 0.02 + noise (sd 0.03), clipped — so the two are
correlated. Fixed seed: re-running reproduces the file byte for byte.

    python scripts/make_example_drift_table.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240601
N_QUESTIONS = 60
STIMULI_PER_CATEGORY = 3
NOISE = {"filler": 0.0, "whitespace": 0.0, "punctuation": 0.0}
PERSONA = {"trans_status": 0.08, "disability": 0.07, "physical_traits": 0.05,
           "appearance": 0.045, "gender": 0.04, "sexual_orientation": 0.035, "occupation": 0.03,
           "income": 0.025, "age": 0.015, "education": 0.01}
LIFE_EVENT = {"childhood_adversity": 0.2, "serious_illness": 0.19, "bereavement": 0.18,
              "job_loss": 0.15, "divorce": 0.14, "forced_migration": 0.17,
              "disaster_or_war": 0.2, "caregiving": 0.12, "parenthood": 0.13, "violence": 0.19}
OUTPUT = Path(__file__).resolve().parents[1] / "src/memlens/data/examples/drift_table.csv"


def make_table(seed: int = SEED) -> pd.DataFrame:
    """The simulated drift table (see the module docstring)."""
    rng = np.random.default_rng(seed)
    plan = [("no_perturbation", "control", 0.0, 1)]
    for klass, effects in (("noise", NOISE), ("persona", PERSONA), ("life_event", LIFE_EVENT)):
        plan += [(name, klass, effect, STIMULI_PER_CATEGORY) for name, effect in effects.items()]
    rows = []
    for question in range(N_QUESTIONS):
        question_effect = rng.normal(0.0, 0.05)
        for category, klass, effect, n_stimuli in plan:
            for stimulus in range(n_stimuli):
                dtw = float(np.clip(0.30 + question_effect + effect + rng.normal(0, 0.08), 0, 1))
                sri = float(np.clip(0.7 * dtw + 0.02 + rng.normal(0, 0.03), 0, 1))
                rows.append({"question_id": f"q{question + 1:03d}", "condition_class": klass,
                             "category": category, "stimulus_id": f"{category}_{stimulus + 1}",
                             "sample": 0, "dtw": round(dtw, 4), "sri": round(sri, 4)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    make_table().to_csv(OUTPUT, index=False)
    print(f"wrote {OUTPUT}")
