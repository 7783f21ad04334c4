"""memlens inside inspect_ai, and inspect logs back into memlens (issue 28, ``docs/inspect.md``).

Modules (one idea each; inspect_ai is imported only inside them, never by the rest of memlens):

- ``params``: the task parameters (``-T preset=quick``, …) -> a memlens ``AuditConfig``
- ``dataset``: memlens's audit design (``memlens.audit.pipeline.plan_cells`` +
  ``memlens.audit.generate.build_request``) -> inspect ``Sample`` objects
- ``solver``: ``memlens_generate()``: one generation with the cell's own seed and sampling
- ``scorer``: ``reasoning_steps()``: split into steps, label, symbols in the score metadata
- ``metrics``: ``class_drift()``: mean DTW per condition class, from memlens's drift code
- ``tasks``: the ``@task`` ``reasoning_drift`` (registered as ``memlens/reasoning_drift``)
- ``tokens``: inspect's o200k_base token estimate when tiktoken cannot download it (offline)
- ``logread``: an inspect eval log of ``memlens/reasoning_drift`` -> config, replies, labels
- ``replay``: the logged replies as a memlens ``ChatModel`` (answers only what the log holds)
- ``importer``: ``import_inspect_log(log, run_dir)``: the log through memlens's own pipeline
- ``_registry``: the ``inspect_ai`` entry point (imports the tasks so inspect finds them)
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "import_inspect_log": "importer",
    "reasoning_drift": "tasks",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
