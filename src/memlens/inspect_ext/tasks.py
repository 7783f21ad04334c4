"""``memlens/reasoning_drift``: memlens's reasoning-drift audit as an inspect task.

``inspect eval memlens/reasoning_drift --model PROVIDER/MODEL -T preset=quick`` runs memlens's
design (``memlens.inspect_ext.dataset``) with one seeded call per cell
(``memlens.inspect_ext.solver``) and memlens's steps and labels as the scorer
(``memlens.inspect_ext.scorer``). ``memlens import-inspect LOG --out RUN_DIR`` turns the log into
a memlens run (statistics, report, compare, gate). See docs/inspect.md.
"""

from __future__ import annotations

from inspect_ai import Task, task

from memlens import __version__
from memlens.inspect_ext.dataset import audit_samples
from memlens.inspect_ext.params import DEFAULT_PRESET, task_config
from memlens.inspect_ext.scorer import reasoning_steps
from memlens.inspect_ext.solver import memlens_generate
from memlens.inspect_ext.tokens import ensure_token_encoding
from memlens.inspect_ext.tool_dataset import tooldrift_samples
from memlens.inspect_ext.tool_scorer import tool_arguments
from memlens.inspect_ext.tool_solver import memlens_tool_call
from memlens.models.modelstring import public_config
from memlens.tooldrift.loader import load_dataset

TASK_FORMAT = 1
"""Version of the task's log layout (metadata keys) that ``memlens import-inspect`` reads."""


@task
def reasoning_drift(preset: str | None = DEFAULT_PRESET, config: str | None = None,
                    labeler: str | None = None, mode: str | None = None,
                    n_questions: int | None = None, baselines: int | None = None,
                    samples: int | None = None, seed: int | None = None,
                    max_tokens: int | None = None, temperature: float | None = None,
                    top_p: float | None = None, top_k: int | None = None,
                    questions: str | None = None, stimuli: str | None = None,
                    ontology: str | None = None, stimulus_categories: list[str] | None = None,
                    stimuli_per_category: int | None = None, memory_template: str | None = None,
                    memory_header: str | None = None, history_prefix: str | None = None,
                    acknowledgement: str | None = None, system_prompt: str | None = None,
                    n_bootstrap: int | None = None) -> Task:
    """memlens's reasoning-drift design: questions × memory conditions × K baselines.

    Every parameter is the ``memlens audit`` setting of the same name (``preset`` ``quick`` |
    ``standard`` | ``paper`` | ``none``; ``config`` a YAML / JSON file of settings); the
    audited model is inspect's ``--model``.
    """
    settings = {key: value for key, value in locals().items()  # the parameters only
                if key not in ("preset", "config") and value is not None}

    audit = task_config(preset, config, **settings)
    samples_, inputs = audit_samples(audit)
    ensure_token_encoding()
    return Task(
        dataset=samples_, solver=memlens_generate(),
        scorer=reasoning_steps(audit.labeler, audit.ontology, audit.baselines),
        metadata={"memlens": {"task_format": TASK_FORMAT, "memlens_version": __version__,
                              "config": public_config(audit.model_dump()), "inputs": inputs}},
        version=TASK_FORMAT)


@task
def tool_drift(k: int = 5, limit: int | None = None, seed: int = 0, temperature: float = 0.7,
               max_tokens: int = 512, tool_choice: str = "entry", data: str | None = None,
               n_bootstrap: int = 10_000) -> Task:
    """memlens's tool-drift design (MemDrift, Setting 1: memory verbatim in the system prompt):
    every entry × {base, neutral, biased} memory × ``k`` calls through inspect's tool calling.
    The parameters are ``memlens tooldrift run``'s (``data``: a MemDrift folder, default the
    bundled sample; ``limit``: the first N entries)."""
    from memlens.tooldrift.runner import RunConfig, dataset_inputs  # lazy: pulls scipy

    config = RunConfig(k=k, limit=limit, seed=seed, temperature=temperature,
                       max_tokens=max_tokens, tool_choice=tool_choice, n_bootstrap=n_bootstrap)
    dataset = load_dataset(data)
    samples_ = tooldrift_samples(config, dataset)
    ensure_token_encoding()
    settings = {"k": k, "limit": limit, "seed": seed, "temperature": temperature,
                "max_tokens": max_tokens, "tool_choice": tool_choice, "data": data,
                "n_bootstrap": n_bootstrap}
    return Task(dataset=samples_, solver=memlens_tool_call(), scorer=tool_arguments(),
                metadata={"memlens_tooldrift": {"task_format": TASK_FORMAT,
                                                "memlens_version": __version__,
                                                "settings": settings,
                                                "inputs": dataset_inputs(dataset)}},
                version=TASK_FORMAT)
