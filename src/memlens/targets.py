"""The design targets every power figure and the sensitivity check share: the statistics, the
planner and the CLI's help text read them here (a base module, no imports: ``--help`` stays
fast)."""

PAPER_EFFECT_PCT = 23.0
"""The paper's sensitivity-sized effect: Qwen3-4B's life-event elevation of DTW over the floor."""
TARGET_POWER = 0.8
"""The power a design must reach (``memlens plan`` recommends the cheapest that does)."""
ALPHA_SENSITIVITY = 0.001
"""Two-sided level of the sensitivity check (life events vs the floor)."""
