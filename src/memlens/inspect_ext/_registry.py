"""The ``inspect_ai`` entry point of memlens (``[project.entry-points.inspect_ai]`` in
pyproject.toml): inspect imports this module when a ``memlens/…`` name is looked up, which
registers the tasks, solver and scorer under the ``memlens/`` namespace."""

from memlens.inspect_ext.scorer import reasoning_steps  # noqa: F401
from memlens.inspect_ext.solver import memlens_generate  # noqa: F401
from memlens.inspect_ext.tasks import reasoning_drift, tool_drift  # noqa: F401
from memlens.inspect_ext.tool_scorer import tool_arguments  # noqa: F401
from memlens.inspect_ext.tool_solver import memlens_tool_call  # noqa: F401
