"""Load and validate a drift table: one row per (question, condition, sample) drift observation.

A drift table has the columns ``question_id``, ``condition_class`` (one of
:data:`CONDITION_CLASSES`), ``category`` and one numeric column per drift metric (``dtw``, ``sri``,
any other numeric column). The declared descriptive columns :data:`DESCRIPTIVE_COLUMNS` may also be
present and are never analysed. Every problem is reported as one :class:`MemlensError` naming the
file, the column and, where it applies, the line (CSV line numbers count the header as line 1).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from memlens.errors import MemlensError

REQUIRED_COLUMNS = ("question_id", "condition_class", "category")
CONDITION_CLASSES = ("control", "noise", "persona", "life_event")
FLOOR_CATEGORY = "no_perturbation"
DESCRIPTIVE_COLUMNS = ("stimulus_id", "sample", "model", "n_baselines")


def load_drift_table(path: str | Path) -> pd.DataFrame:
    """Read a drift table from CSV or Parquet and validate it.

    Returns a DataFrame whose ``question_id``, ``condition_class`` and ``category`` columns are
    strings and whose metric columns are float64. Raises :class:`MemlensError` naming the file
    and the problem (missing file, unknown extension, unreadable content, failed validation).
    """
    path = Path(path)
    if not path.is_file():
        raise MemlensError(f"{path}: drift table not found")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame = _read_csv(path)
    elif suffix in (".parquet", ".pq"):
        frame = _read_parquet(path)
    else:
        raise MemlensError(f"{path}: unknown drift-table format '{suffix}' (use .csv or .parquet)")
    return validate_drift_table(frame, source=str(path), line_offset=2 if suffix == ".csv" else 0)


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        # Everything as text first: numeric validation then names the offending line itself.
        return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except pd.errors.EmptyDataError as error:
        raise MemlensError(f"{path}: the file is empty (expected a CSV header line)") from error
    except UnicodeDecodeError as error:
        raise MemlensError(f"{path}: not UTF-8 text at byte {error.start}") from error
    except (pd.errors.ParserError, ValueError) as error:
        message = " ".join(str(error).split())
        raise MemlensError(f"{path}: not a readable CSV table ({message})") from error


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as error:  # pyarrow raises many unrelated types for corrupt files
        message = " ".join(str(error).split())[:200]
        raise MemlensError(f"{path}: not a readable Parquet file ({message})") from error


def validate_drift_table(
    frame: pd.DataFrame, *, source: str = "drift table", line_offset: int = 0
) -> pd.DataFrame:
    """Check a drift table and return a clean copy (string keys, float64 metrics).

    ``source`` names the table in messages; ``line_offset`` turns a row position into a file line
    (2 for a CSV with a header, 0 to report row positions).

    >>> table = pd.DataFrame({"question_id": [1, 1], "condition_class": ["control", "noise"],
    ...                       "category": ["no_perturbation", "filler"], "dtw": ["0.5", "0.25"]})
    >>> validate_drift_table(table)["dtw"].tolist()
    [0.5, 0.25]
    >>> validate_drift_table(table.drop(columns="category"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    memlens.errors.MemlensError: drift table: missing column(s) 'category' ...
    """
    columns = [str(column) for column in frame.columns]
    duplicated = sorted({column for column in columns if columns.count(column) > 1})
    if duplicated:
        raise MemlensError(f"{source}: duplicated column(s) {_quoted(duplicated)}")
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        raise MemlensError(
            f"{source}: missing column(s) {_quoted(missing)} "
            f"(a drift table needs {_quoted(REQUIRED_COLUMNS)} and metric columns)"
        )
    metrics = [c for c in columns if c not in REQUIRED_COLUMNS and c not in DESCRIPTIVE_COLUMNS]
    if not metrics:
        raise MemlensError(f"{source}: no metric columns (expected e.g. 'dtw', 'sri')")
    frame = frame.copy()
    frame.columns = columns
    if frame.empty:
        raise MemlensError(f"{source}: the table has no rows")
    clean = pd.DataFrame(index=range(len(frame)))
    for column in REQUIRED_COLUMNS:
        clean[column] = _text_column(frame[column], column, source, line_offset)
    _check_classes(clean, source, line_offset)
    for column in DESCRIPTIVE_COLUMNS:
        if column in frame.columns:
            clean[column] = frame[column].astype(str).to_numpy()
    for column in metrics:
        clean[column] = _numeric_column(frame[column], column, source, line_offset)
    return clean


def metric_columns(table: pd.DataFrame) -> list[str]:
    """Names of the metric columns of a validated drift table, in table order.

    >>> metric_columns(pd.DataFrame(columns=["question_id", "condition_class", "category",
    ...                                      "model", "dtw", "sri"]))
    ['dtw', 'sri']
    """
    skip = set(REQUIRED_COLUMNS) | set(DESCRIPTIVE_COLUMNS)
    return [str(column) for column in table.columns if column not in skip]


def _text_column(values: pd.Series, column: str, source: str, line_offset: int) -> list[str]:
    texts: list[str] = []
    for position, value in enumerate(values.tolist()):
        text = "" if _is_missing(value) else str(value).strip()
        if not text:
            raise MemlensError(
                f"{source}: {_where(position, line_offset)}column '{column}' is empty"
            )
        texts.append(text)
    return texts


MAX_METRIC = 1e6
"""Largest drift magnitude accepted: drift metrics are distances (normalised ones lie in [0, 1],
raw DTW / edit distances count steps), so a value beyond this is a broken table, not drift.
Small negative values stay allowed: simulated tables (and centred metrics) have them."""


def _numeric_column(values: pd.Series, column: str, source: str, line_offset: int) -> list[float]:
    numbers: list[float] = []
    for position, value in enumerate(values.tolist()):
        number = _as_float(value)
        shown = "" if _is_missing(value) else str(value)[:40]
        problem = None
        if number is None or not math.isfinite(number):
            problem = "is empty" if not shown.strip() else f"is not a finite number: {shown!r}"
        elif abs(number) > MAX_METRIC:
            problem = f"is beyond ±{MAX_METRIC:g} (not a drift value): {shown!r}"
        if problem:
            raise MemlensError(
                f"{source}: {_where(position, line_offset)}metric column '{column}' {problem}"
            )
        numbers.append(number)
    return numbers


def _check_classes(clean: pd.DataFrame, source: str, line_offset: int) -> None:
    for position, (klass, category) in enumerate(
        zip(clean["condition_class"], clean["category"], strict=True)
    ):
        where = _where(position, line_offset)
        if klass not in CONDITION_CLASSES:
            raise MemlensError(
                f"{source}: {where}unknown condition_class {klass[:40]!r} "
                f"(expected one of {_quoted(CONDITION_CLASSES)})"
            )
        if (klass == "control") != (category == FLOOR_CATEGORY):
            raise MemlensError(
                f"{source}: {where}category {category[:40]!r} with condition_class {klass!r}: "
                f"the only control category is '{FLOOR_CATEGORY}', and it must be class 'control'"
            )
    classes_per_category = clean.groupby("category")["condition_class"].nunique()
    mixed = sorted(classes_per_category[classes_per_category > 1].index)
    if mixed:
        raise MemlensError(f"{source}: category {mixed[0]!r} appears under several condition classes")
    present = set(clean["condition_class"])
    if "control" not in present:
        raise MemlensError(
            f"{source}: no '{FLOOR_CATEGORY}' rows: the noise floor (drift between two "
            "no-memory samples) is needed as the reference"
        )
    if "noise" not in present:
        raise MemlensError(
            f"{source}: no rows of condition_class 'noise': d_rel needs the pooled pragmatic-noise "
            "conditions (filler, whitespace, punctuation) as its reference"
        )


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            return float(value)
        return float(str(value).strip())
    except (TypeError, ValueError, OverflowError):
        return None


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _where(position: int, line_offset: int) -> str:
    return f"line {position + line_offset}: " if line_offset else f"row {position}: "


def _quoted(names) -> str:
    return ", ".join(f"'{name}'" for name in names)
