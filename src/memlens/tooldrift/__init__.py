"""MemDrift: does a user's stored personality leak into an agent's tool-call parameters?

Data (schema, loader, bundled sample), the rule-based rubric metric, the runner over the three
memory conditions, memory frameworks (Setting 2), the judge and the scenario builder.
"""

from memlens.tooldrift.loader import Dataset, bundled_path, load_dataset, load_rubrics
from memlens.tooldrift.schema import (
    BIAS_DIMENSIONS,
    CONDITIONS,
    Entry,
    ParamSpec,
    Rubric,
    entry_id,
)

__all__ = [
    "BIAS_DIMENSIONS",
    "CONDITIONS",
    "Dataset",
    "Entry",
    "ParamSpec",
    "Rubric",
    "bundled_path",
    "entry_id",
    "load_dataset",
    "load_rubrics",
]
