"""Capability through lm-evaluation-harness with local task data (no hub), for any backend.

Tasks: ``mmlu`` (MMLU-Redux generative), ``gsm8k``, ``ifeval``. For each a wrapper YAML
``include:``s the installed lm-eval task and overrides ``dataset_path: json`` with a JSONL file
written from the user's local copy of the task data:

* ``data`` — a folder holding, per task, ``<name>.jsonl`` / ``.json`` / ``.parquet`` or an HF
  datasets folder (``save_to_disk``) named ``<name>``, where ``<name>`` is ``mmlu_redux``,
  ``mmlu-redux`` or ``mmlu`` / ``gsm8k`` / ``ifeval``; or ``files`` — ``{task: path}``;
* ``limit`` — a seeded random subset of that many items per task (``seed``), without replacement;
* without data the tiny samples shipped in ``memlens/data/training/lm_eval/`` (4 / 4 / 3 items,
  written for memlens) run as a **smoke test**: lm-eval runs, but no score is reported.

Records follow lm-eval's own formats: MMLU-Redux ``question``, ``choices`` (4), ``answer``
(0–3); GSM8K ``question``, ``answer`` (ending in ``#### N``); IFEval ``key``, ``prompt``,
``instruction_id_list``, ``kwargs``. A bad record is a ``MemlensError`` naming file and line.

Models go through lm-eval's **own** model adapters (``lm_eval_model``): ``hf:`` → ``hf``
(``HFLM``; a ``.gguf`` file via ``gguf_file``), ``vllm:`` → ``vllm``, ``openai:MODEL@URL`` →
``local-chat-completions`` (the key, if any, from ``OPENAI_API_KEY``, as lm-eval reads it). Chat
templates are applied (the evaluated models are chat models). Each score is a proportion of
``n`` items with a Wilson 95 % interval (``CapabilityCell``). IFEval's nltk data:
``memlens.mitigation.nltk_data``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from memlens.envscope import scoped_environ
from memlens.errors import MemlensError, missing_extra
from memlens.jsonl import iter_json_objects, parse_json, read_text
from memlens.mitigation.nltk_data import punkt_tab_root
from memlens.models.modelstring import BACKENDS, split_model_string
from memlens.ontology.gold import wilson_interval
from memlens.rowkeys import derive_seed

TASKS = {
    # name: (installed yaml relative to lm_eval/tasks, sample file, test split, column, metric)
    "mmlu": ("mmlu-redux/generative/_default_template_yaml", "mmlu_redux_sample.jsonl", "test",
             "MMLU", ("exact_match,default",)),
    "gsm8k": ("gsm8k/gsm8k.yaml", "gsm8k_sample.jsonl", "test", "GSM8K",
              ("exact_match,flexible-extract",)),
    "ifeval": ("ifeval/ifeval.yaml", "ifeval_sample.jsonl", "train", "IF",
               ("prompt_level_strict_acc,none", "prompt_level_loose_acc,none")),
}
FILE_NAMES = {"mmlu": ("mmlu_redux", "mmlu-redux", "mmlu"), "gsm8k": ("gsm8k",),
              "ifeval": ("ifeval",)}
"""Names a task's data may have inside a ``data`` folder."""
REQUIRED = {"mmlu": ("question", "choices", "answer"), "gsm8k": ("question", "answer"),
            "ifeval": ("key", "prompt", "instruction_id_list", "kwargs")}
SMOKE = "smoke test"


@dataclass(frozen=True)
class CapabilityCell:
    """One capability score: ``k`` of ``n`` items right, with a Wilson 95 % interval.

    ``smoke``: the shipped sample ran (no score is reported); ``note`` says why a cell is empty.
    """

    column: str
    score: float | None
    n: int
    k: int | None
    ci_low: float | None
    ci_high: float | None
    source: str
    smoke: bool = False
    note: str = ""

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)

    def display(self) -> str:
        """Table text: ``0.400 [0.168, 0.687] n=10``, or why there is no number.

        >>> CapabilityCell("MMLU", None, 4, None, None, None, "shipped", smoke=True).display()
        'smoke test (n=4), not a score'
        """
        if self.smoke:
            return f"{SMOKE} (n={self.n}), not a score"
        if self.score is None:
            return self.note or "not measured"
        return f"{self.score:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] n={self.n}"


def _tasks_dir() -> Path:
    try:
        import lm_eval
    except ImportError:
        raise missing_extra("lm-eval", "eval") from None
    return Path(lm_eval.__file__).parent / "tasks"


def sample_file(task: str) -> Path:
    """The shipped sample data of ``task`` (a smoke test, never a capability number)."""
    return Path(str(resources.files("memlens.data").joinpath(
        f"training/lm_eval/{TASKS[task][1]}")))


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise MemlensError(f"--lm-eval: unknown task '{task}' (known: {', '.join(TASKS)})")


def find_task_data(task: str, data: str | Path) -> Path:
    """The file or datasets folder of ``task`` inside the folder ``data``."""
    _check_task(task)
    root = Path(data)
    if not root.is_dir():
        raise MemlensError(f"--lm-eval-data: not a folder: {root}")
    for name in FILE_NAMES[task]:
        for candidate in (root / f"{name}.jsonl", root / f"{name}.json", root / f"{name}.parquet",
                          root / name):
            if candidate.exists():
                return candidate
    expected = ", ".join(f"{n}.jsonl" for n in FILE_NAMES[task])
    raise MemlensError(f"--lm-eval-data {root}: no data for task '{task}' (expected {expected}, "
                       f".json, .parquet or an HF datasets folder of that name)")


def _datasets_rows(path: Path, task: str) -> list[dict]:
    try:
        from datasets import DatasetDict, load_from_disk
    except ImportError:
        raise missing_extra("datasets", "train") from None
    try:
        loaded = load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as error:
        raise MemlensError(f"{path}: not an HF datasets folder ({error})") from None
    if isinstance(loaded, DatasetDict):
        split = TASKS[task][2]
        name = split if split in loaded else ("test" if "test" in loaded else next(iter(loaded)))
        loaded = loaded[name]
    return loaded.to_list()


def load_task_items(task: str, path: str | Path) -> list[dict]:
    """The records of ``task`` in ``path`` (JSONL, JSON list, Parquet or a datasets folder),
    each checked for lm-eval's fields; ``MemlensError`` naming file and line on a bad record."""
    _check_task(task)
    source = Path(path)
    if not source.exists():
        raise MemlensError(f"--lm-eval {task}: data not found: {source}")
    if source.is_dir():
        rows, where = _datasets_rows(source, task), "row"
    elif source.suffix == ".parquet":
        import pandas as pd

        rows, where = pd.read_parquet(source).to_dict("records"), "row"
    elif source.suffix == ".json":
        rows, where = parse_json(read_text(source, f"{task} data"), str(source)), "item"
        if not isinstance(rows, list):
            raise MemlensError(f"{source}: expected a JSON list of {task} records")
    else:
        rows = [row for _, row in iter_json_objects(read_text(source, f"{task} data"),
                                                    str(source))]
        where = "line"
    for index, row in enumerate(rows, 1):
        _check_record(task, row, f"{source}: {where} {index}")
    if not rows:
        raise MemlensError(f"{source}: no {task} records")
    return [_plain(row) for row in rows]


def _plain(value):
    """numpy / pandas values (from Parquet) as plain JSON types."""
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _check_record(task: str, row, where: str) -> None:
    if not isinstance(row, dict):
        raise MemlensError(f"{where}: expected an object, got {type(row).__name__}")
    missing = [name for name in REQUIRED[task] if name not in row]
    if missing:
        raise MemlensError(f"{where}: {task} record lacks {', '.join(missing)} "
                           f"(lm-eval's fields: {', '.join(REQUIRED[task])})")
    if task == "mmlu":
        choices, answer = _plain(row["choices"]), _plain(row["answer"])
        if not isinstance(choices, list) or len(choices) != 4:
            raise MemlensError(f"{where}: 'choices' must be a list of 4 options")
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer <= 3:
            raise MemlensError(f"{where}: 'answer' must be the index 0-3 of the right choice")
    elif task == "gsm8k":
        if not isinstance(row["answer"], str) or "####" not in row["answer"]:
            raise MemlensError(f"{where}: 'answer' must end with '#### <number>' (GSM8K format)")
    else:
        ids, kwargs = _plain(row["instruction_id_list"]), _plain(row["kwargs"])
        if not isinstance(ids, list) or not isinstance(kwargs, list) or len(ids) != len(kwargs):
            raise MemlensError(f"{where}: 'instruction_id_list' and 'kwargs' must be lists of "
                               "the same length")


def seeded_subset(items: list, limit: int | None, seed: int) -> list:
    """``limit`` items drawn without replacement with ``seed`` (kept in file order); all when
    ``limit`` is None or not smaller.

    >>> seeded_subset(list(range(10)), 3, 0) == seeded_subset(list(range(10)), 3, 0)
    True
    >>> len(seeded_subset(list(range(10)), 3, 0)), seeded_subset([1, 2], 5, 0)
    (3, [1, 2])
    """
    if limit is None or limit >= len(items):
        return list(items)
    import numpy as np

    chosen = np.sort(np.random.default_rng(seed).choice(len(items), size=limit, replace=False))
    return [items[int(i)] for i in chosen]


def task_yaml(task: str, data_file: Path, num_fewshot: int = 0) -> str:
    """The wrapper YAML text of one memlens capability task over ``data_file``.

    >>> text = task_yaml("gsm8k", Path("/d/g.jsonl"))
    >>> "task: memlens_gsm8k" in text and "dataset_path: json" in text
    True
    """
    _check_task(task)
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


@dataclass(frozen=True)
class TaskInput:
    """The items one task runs on and where they came from."""

    task: str
    items: list
    total: int
    """Items in the source (before ``limit``)."""
    source: str
    smoke: bool


def task_inputs(tasks: list[str], *, data: str | Path | None = None,
                files: dict[str, str | Path] | None = None, limit: int | None = None,
                seed: int = 0) -> list[TaskInput]:
    """The items of every task: from ``files`` / ``data`` (seeded ``limit`` subset), else the
    shipped smoke-test sample."""

    inputs = []
    for task in tasks:
        _check_task(task)
        path = (files or {}).get(task) or (find_task_data(task, data) if data else None)
        if path is None:
            items = load_task_items(task, sample_file(task))
            inputs.append(TaskInput(task, items, len(items), f"shipped sample ({SMOKE})", True))
            continue
        items = load_task_items(task, path)
        subset = seeded_subset(items, limit, derive_seed(seed, task, "lm-eval-subset", 0))
        what = f"{path}" + (f" (seeded subset {len(subset)} of {len(items)}, seed {seed})"
                            if len(subset) < len(items) else f" (all {len(items)})")
        inputs.append(TaskInput(task, subset, len(items), what, False))
    return inputs


def lm_eval_model(model_string: str) -> tuple[str, dict] | None:
    """lm-eval's own adapter name and ``model_args`` for a memlens model string; None for a
    backend lm-eval cannot reach (``fake``, ``anthropic``, an ``embedded`` model without a
    server: use ``openai:…@URL`` of a running server instead).

    >>> lm_eval_model("openai:smollm2@http://127.0.0.1:8080/v1")[0]
    'local-chat-completions'
    >>> lm_eval_model("openai:smollm2@http://127.0.0.1:8080/v1")[1]["base_url"]
    'http://127.0.0.1:8080/v1/chat/completions'
    >>> lm_eval_model("hf:/m/SmolLM2.Q4_1.gguf")
    ('hf', {'pretrained': '/m', 'tokenizer': '/m', 'gguf_file': 'SmolLM2.Q4_1.gguf'})
    >>> lm_eval_model("fake") is None
    True
    """
    backend, _, name = model_string.strip().partition(":")
    if backend == "hf" and name:
        if name.lower().endswith(".gguf"):
            path = Path(name)
            return "hf", {"pretrained": str(path.parent), "tokenizer": str(path.parent),
                          "gguf_file": path.name}
        return "hf", {"pretrained": name, "tokenizer": name}
    if backend == "vllm" and name:
        return "vllm", {"pretrained": name}
    if backend == "openai" and name:
        model, base_url = split_model_string(name)
        if not base_url:
            base_url = "https://api.openai.com/v1"
        return "local-chat-completions", {
            "model": model, "base_url": base_url.rstrip("/") + "/chat/completions",
            "num_concurrent": 1, "max_retries": 3, "tokenized_requests": False}
    return None


def _model_args_text(args: dict) -> str:
    return ",".join(f"{key}={value}" for key, value in args.items())


def _wilson(k: int, n: int) -> tuple[float, float]:
    return wilson_interval(k, n)


def cells_from_output(output: dict, inputs: list[TaskInput]) -> dict[str, CapabilityCell]:
    """Table 2 capability cells from ``simple_evaluate``'s output: score, n (lm-eval's own
    effective sample count), k and the Wilson interval; smoke tests keep only their n.

    >>> out = {"results": {"memlens_gsm8k": {"exact_match,flexible-extract": 0.25}},
    ...        "n-samples": {"memlens_gsm8k": {"effective": 8}}}
    >>> cell = cells_from_output(out, [TaskInput("gsm8k", [0] * 8, 8, "f", False)])["GSM8K"]
    >>> cell.k, cell.n, round(cell.ci_low, 3), round(cell.ci_high, 3)
    (2, 8, 0.071, 0.591)
    """
    cells: dict[str, CapabilityCell] = {}
    for given in inputs:
        name = f"memlens_{given.task}"
        metrics = output.get("results", {}).get(name, {})
        n = int((output.get("n-samples", {}).get(name) or {}).get("effective", len(given.items)))
        _, _, _, column, keys = TASKS[given.task]
        columns = ([("IF(strict)", keys[0]), ("IF(loose)", keys[1])] if given.task == "ifeval"
                   else [(column, keys[0])])
        for label, key in columns:
            value = metrics.get(key)
            if given.smoke or value is None or n == 0:
                cells[label] = CapabilityCell(label, None, n, None, None, None, given.source,
                                              smoke=given.smoke,
                                              note="" if given.smoke else "lm-eval gave no score")
                continue
            k = int(round(float(value) * n))
            low, high = _wilson(k, n)
            cells[label] = CapabilityCell(label, k / n, n, k, low, high, given.source)
    return cells


def not_measured(tasks: list[str], reason: str) -> dict[str, CapabilityCell]:
    """Empty cells saying why no capability was measured."""
    cells = {}
    for task in tasks:
        labels = ["IF(strict)", "IF(loose)"] if task == "ifeval" else [TASKS[task][3]]
        for label in labels:
            cells[label] = CapabilityCell(label, None, 0, None, None, None, "", note=reason)
    return cells


def run_capability(model: str, tasks: list[str], *, data: str | Path | None = None,
                   files: dict[str, str | Path] | None = None, limit: int | None = None,
                   seed: int = 0, work_dir: Path | None = None, max_gen_toks: int = 256,
                   batch_size: int = 1, data_files: dict[str, str | Path] | None = None
                   ) -> dict[str, CapabilityCell]:
    """Run the capability tasks on ``model`` (a memlens model string, or a local HF folder)
    through lm-eval's own adapter; returns ``{column: CapabilityCell}``.

    ``data_files`` is the former name of ``files``.
    """
    import tempfile

    if model.partition(":")[0] not in BACKENDS:
        model = f"hf:{model}"  # a bare local folder (the former signature)
    adapter = lm_eval_model(model)
    if adapter is None:
        return not_measured(tasks, f"not measured: lm-eval has no adapter for '{model}'")
    name, model_args = adapter
    if name in ("hf", "vllm") and not Path(model_args["pretrained"]).exists():
        raise MemlensError(f"lm-eval: model directory not found: {model_args['pretrained']}")
    inputs = task_inputs(tasks, data=data, files=files or data_files, limit=limit, seed=seed)
    # lm-eval offers no offline argument; datasets / huggingface_hub read these variables when
    # lm-eval imports and runs them. Set them (unless the user chose) for this call only.
    offline = {name_: os.environ.get(name_, "1")
               for name_ in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    with tempfile.TemporaryDirectory(dir=work_dir) as scratch:
        environment = dict(offline)
        nltk_root = None
        if "ifeval" in tasks:
            nltk_root, _ = punkt_tab_root(scratch)
            if nltk_root is not None:
                environment["NLTK_DATA"] = os.pathsep.join(
                    p for p in (str(nltk_root), os.environ.get("NLTK_DATA")) if p)
        files_written = {}
        for given in inputs:
            target = Path(scratch) / f"{given.task}.jsonl"
            target.write_text("".join(json.dumps(item) + "\n" for item in given.items),
                              encoding="utf-8")
            files_written[given.task] = target
        with scoped_environ(**environment), _nltk_path(nltk_root):
            try:
                from lm_eval import simple_evaluate
                from lm_eval.tasks import TaskManager
            except ImportError:
                raise missing_extra("lm-eval", "eval") from None
            names = write_task_configs(Path(scratch) / "tasks", tasks, files_written)
            manager = TaskManager(include_path=str(Path(scratch) / "tasks"),
                                  include_defaults=False)
            if name == "hf":
                model_args = {**model_args, "device": "cuda" if _cuda() else "cpu"}
            output = simple_evaluate(
                model=name, model_args=_model_args_text(model_args), tasks=names,
                task_manager=manager, batch_size=batch_size,
                gen_kwargs=f"max_gen_toks={max_gen_toks}", apply_chat_template=True,
                log_samples=False)
    return cells_from_output(output, inputs)


class _nltk_path:
    """Put an NLTK_DATA root first on an already imported nltk's search path, for one call."""

    def __init__(self, root: Path | None):
        self.root = root

    def __enter__(self):
        if self.root is not None:
            import nltk

            nltk.data.path.insert(0, str(self.root))
        return self

    def __exit__(self, *exc):
        if self.root is not None:
            import nltk

            if str(self.root) in nltk.data.path:
                nltk.data.path.remove(str(self.root))
        return False


def scores_from_results(results: dict, tasks: list[str]) -> dict[str, float]:
    """Table 2 columns from lm-eval's ``results`` dict (scores only; see ``cells_from_output``).

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


def _number(value) -> float | None:
    return None if value is None else float(value)


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False
