"""``memlens plan``'s stated-assumption defaults and design grid (no heavy imports: the CLI's
help text reads them).

No real pilot figures were available when the variance defaults were chosen: they are
assumptions of the right order for normalised DTW (0..1), not measurements.
"""

DEFAULT_QUESTIONS = (16, 30, 60, 120)
DEFAULT_BASELINES = (1, 3, 5, 8)
DEFAULT_FLOOR_MEAN = 0.35
DEFAULT_PAIR_SD = 0.2
DEFAULT_SHARE_RESPONSE = 0.5
DEFAULT_TAU = 0.0
