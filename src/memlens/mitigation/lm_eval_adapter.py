"""Capability through lm-evaluation-harness with local task data (no hub).

For each capability (``mmlu``, ``gsm8k``, ``ifeval``) a wrapper YAML ``include:``s the installed
lm-eval task and overrides ``dataset_path: json`` with local JSONL files — by default the tiny
samples shipped in ``memlens/data/training/lm_eval/`` (4 MMLU-Redux-style items, 4 GSM8K-style
items, 3 IFEval-style items, written for memlens); for the paper's 1K subsets pass your own
files with ``data_files``. Scores: MMLU exact match, GSM8K exact match (flexible extract),
IFEval prompt-level strict / loose accuracy (IFEval needs nltk's ``punkt_tab`` data for some
instructions).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from memlens.envscope import scoped_environ
from memlens.errors import MemlensError, missing_extra

TASKS = {
    # name: (installed yaml relative to lm_eval/tasks, sample file, test split, column, metric)
    "mmlu": ("mmlu-redux/generative/_default_template_yaml", "mmlu_redux_sample.jsonl", "test",
             "MMLU", ("exact_match,default",)),
    "gsm8k": ("gsm8k/gsm8k.yaml", "gsm8k_sample.jsonl", "test", "GSM8K",
              ("exact_match,flexible-extract",)),
    "ifeval": ("ifeval/ifeval.yaml", "ifeval_sample.jsonl", "train", "IF",
               ("prompt_level_strict_acc,none", "prompt_level_loose_acc,none")),
}


def _tasks_dir() -> Path:
    try:
        import lm_eval
    except ImportError:
        raise missing_extra("lm-eval", "eval") from None
    return Path(lm_eval.__file__).parent / "tasks"


def sample_file(task: str) -> Path:
    """The shipped sample data of ``task``."""
    return Path(str(resources.files("memlens.data").joinpath(
        f"training/lm_eval/{TASKS[task][1]}")))


def task_yaml(task: str, data_file: Path, num_fewshot: int = 0) -> str:
    """The wrapper YAML text of one memlens capability task over ``data_file``.

    >>> text = task_yaml("gsm8k", Path("/d/g.jsonl"))
    >>> "task: memlens_gsm8k" in text and "dataset_path: json" in text
    True
    """
    if task not in TASKS:
        raise MemlensError(f"--lm-eval: unknown task '{task}' (known: {', '.join(TASKS)})")
    include, _, split, _, _ = TASKS[task]
    splits = {split: str(data_file)}
    if task == "gsm8k":
        splits["train"] = str(data_file)  # few-shot examples come from the train split
    files = ", ".join(f"{name}: '{path}'" for name, path in splits.items())
    lines = [f"include: '{_tasks_dir() / include}'", f"task: memlens_{task}",
             "dataset_path: json", "dataset_name: null", f"dataset_kwargs: {{data_files: {{{files}}}}}",
             f"test_split: {split}", f"num_fewshot: {num_fewshot}"]
    if task == "mmlu":
        lines.append("description: ''")
    return "\n".join(lines) + "\n"


def write_task_configs(directory: Path, tasks: list[str],
                       data_files: dict[str, Path] | None = None) -> list[str]:
    """Write one wrapper YAML per task into ``directory``; returns the task names."""
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for task in tasks:
        data = Path((data_files or {}).get(task) or sample_file(task))
        if not data.exists():
            raise MemlensError(f"--lm-eval {task}: data file not found: {data}")
        (directory / f"memlens_{task}.yaml").write_text(task_yaml(task, data), encoding="utf-8")
        names.append(f"memlens_{task}")
    return names


def scores_from_results(results: dict, tasks: list[str]) -> dict[str, float]:
    """Table 2 columns from lm-eval's ``results`` dict.

    >>> scores_from_results({"memlens_ifeval": {"prompt_level_strict_acc,none": 0.5,
    ...                      "prompt_level_loose_acc,none": 1.0}}, ["ifeval"])
    {'IF(strict)': 0.5, 'IF(loose)': 1.0}
    """
    scores = {}
    for task in tasks:
        metrics = results.get(f"memlens_{task}", {})
        _, _, _, column, keys = TASKS[task]
        if task == "ifeval":
            scores["IF(strict)"] = _number(metrics.get(keys[0]))
            scores["IF(loose)"] = _number(metrics.get(keys[1]))
        else:
            scores[column] = _number(metrics.get(keys[0]))
    return scores


def run_capability(model_path: str, tasks: list[str], *, limit: int | None = None,
                   data_files: dict[str, Path] | None = None, work_dir: Path | None = None,
                   max_gen_toks: int = 256, batch_size: int = 1) -> dict[str, float]:
    """Run the capability tasks on a local Hugging Face model directory on CPU / GPU."""
    import tempfile

    if not Path(model_path).exists():
        raise MemlensError(f"lm-eval: model directory not found: {model_path}")
    # lm-eval offers no offline argument; datasets / huggingface_hub read these variables when
    # lm-eval imports and runs them. Set them (unless the user chose) for this call only.
    offline = {name: os.environ.get(name, "1") for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    with scoped_environ(**offline), tempfile.TemporaryDirectory(dir=work_dir) as scratch:
        try:
            from lm_eval import simple_evaluate
            from lm_eval.tasks import TaskManager
        except ImportError:
            raise missing_extra("lm-eval", "eval") from None
        names = write_task_configs(Path(scratch), tasks, data_files)
        manager = TaskManager(include_path=scratch, include_defaults=False)
        output = simple_evaluate(
            model="hf", model_args=f"pretrained={model_path},tokenizer={model_path}",
            tasks=names, task_manager=manager, limit=limit, batch_size=batch_size,
            device="cpu" if not _cuda() else "cuda", gen_kwargs=f"max_gen_toks={max_gen_toks}",
            log_samples=False)
    return scores_from_results(output["results"], tasks)


def _number(value) -> float | None:
    return None if value is None else float(value)


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False
