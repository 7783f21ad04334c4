"""Read and write the training data sets (HF ``datasets``), with clear errors and the 80/20 split."""

from __future__ import annotations

from pathlib import Path

from memlens.errors import MemlensError, missing_extra


def _datasets():
    try:
        import datasets
    except ImportError:
        raise missing_extra("datasets", "train") from None
    return datasets


def split_dataset(dataset, test_fraction: float = 0.2, seed: int = 0):
    """A ``DatasetDict`` with ``train`` / ``test`` (``test_fraction`` held out, shuffled with
    ``seed``); a data set of one row keeps it in ``train`` and has an empty ``test``."""
    datasets = _datasets()
    if len(dataset) < 2 or test_fraction <= 0:
        return datasets.DatasetDict(train=dataset, test=dataset.select([]))
    return dataset.train_test_split(test_size=test_fraction, seed=seed)


def load_training_data(source, required: tuple[str, ...] = (), *, test_fraction: float = 0.2,
                       seed: int = 0):
    """``(train, test)`` from a ``Dataset``, ``DatasetDict``, a ``save_to_disk`` directory or a
    ``.jsonl`` / ``.json`` / ``.parquet`` file; split 80/20 when it has no ``train`` split.

    Missing ``required`` columns raise a ``MemlensError`` naming the source and the columns.
    """
    datasets = _datasets()
    data = source
    if isinstance(source, str | Path):
        data = _read(Path(source), datasets)
    if isinstance(data, datasets.DatasetDict):
        if "train" not in data:
            raise MemlensError(f"{source}: no 'train' split (splits: {list(data)})")
        train, test = data["train"], data.get("test")
        if test is None:
            parts = split_dataset(train, test_fraction, seed)
            train, test = parts["train"], parts["test"]
    else:
        parts = split_dataset(data, test_fraction, seed)
        train, test = parts["train"], parts["test"]
    missing = [column for column in required if column not in train.column_names]
    if missing:
        raise MemlensError(f"{source if isinstance(source, str | Path) else 'dataset'}: missing "
                           f"column(s) {missing} (has {train.column_names})")
    return train, test


def _read(path: Path, datasets):
    if not path.exists():
        raise MemlensError(f"training data not found: {path}")
    try:
        if path.is_dir():
            return datasets.load_from_disk(str(path))
        kind = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}.get(path.suffix)
        if kind is None:
            raise MemlensError(f"{path}: expected a dataset directory, .jsonl, .json or .parquet")
        return datasets.load_dataset(kind, data_files=str(path), split="train")
    except MemlensError:
        raise
    except Exception as error:  # datasets raises many types for malformed files
        raise MemlensError(f"{path}: cannot read as a dataset ({type(error).__name__}: "
                           f"{str(error)[:200]})") from None


def save_dataset(rows: list[dict], output: Path, *, test_fraction: float = 0.2,
                 seed: int = 0) -> dict[str, int]:
    """Save ``rows`` as a ``DatasetDict`` (train / test) with ``save_to_disk`` plus one JSONL
    file per split beside it; returns the split sizes."""
    datasets = _datasets()
    if not rows:
        raise MemlensError(f"nothing to save to {output}: no rows were kept")
    parts = split_dataset(datasets.Dataset.from_list(rows), test_fraction, seed)
    output.mkdir(parents=True, exist_ok=True)
    parts.save_to_disk(str(output / "dataset"))
    for name, part in parts.items():
        part.to_json(str(output / f"{name}.jsonl"), lines=True, force_ascii=False)
    return {name: len(part) for name, part in parts.items()}
