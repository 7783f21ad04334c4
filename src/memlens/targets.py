"""The design targets every power figure and the sensitivity check share: the statistics, the
planner and the CLI's help text read them here (a base module, no imports: ``--help`` stays
fast)."""

PAPER_EFFECT_PCT = 23.0
"""The paper's sensitivity-sized effect: Qwen3-4B's life-event elevation of DTW over the floor."""
TARGET_POWER = 0.8
"""The power a design must reach (``memlens plan`` recommends the cheapest that does)."""
ALPHA_SENSITIVITY = 0.001
"""Two-sided level of the sensitivity check (life events vs the floor)."""
PLANNING_CONFIDENCE = 0.8
"""How sure a recommended number of questions must be to reach ``TARGET_POWER``: it is computed
at this one-sided upper confidence limit of the spread the run measured (Browne 1995). At the
spread's point estimate a 16-question run's recommendation reached the target in 47 % of 300
seeded pilots, at the limit in 81 % (``tests/stats/test_planning.py``)."""
