"""Load and validate ontologies: the bundled versions or a user's JSON / YAML file."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from memlens.errors import MemlensError
from memlens.jsonl import parse_document, read_text
from memlens.ontology.schema import Ontology

DEFAULT_ONTOLOGY = "driftlens-v1"
"""Name of the bundled ontology used when no file is given."""
ALT_ONTOLOGY = "driftlens-v1-alt"
"""The same ids with semantically equivalent reworded definitions (App. C.3)."""


def bundled_ontology_names() -> list[str]:
    """Names of the ontologies shipped in ``memlens/data/ontology``."""
    folder = resources.files("memlens").joinpath("data", "ontology")
    return sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".json"))


def load_ontology(path: str | Path | None = None) -> Ontology:
    """Load an ontology from a JSON / YAML file, or a bundled one by name (default ``driftlens-v1``).

    Raises ``MemlensError`` naming the file and the field for any problem: unreadable file,
    invalid JSON / YAML, missing fields, duplicate ids, unknown root, empty definition.

    >>> ontology = load_ontology()
    >>> len(ontology.roots), len(ontology.symbols)
    (4, 11)
    """
    if path is None or str(path) in bundled_ontology_names():
        name = DEFAULT_ONTOLOGY if path is None else str(path)
        source = resources.files("memlens").joinpath("data", "ontology", f"{name}.json")
        return parse_ontology(source.read_text(encoding="utf-8"), f"bundled ontology {name}")

    file = Path(path)
    text = read_text(file, "ontology file")
    return parse_ontology(text, str(file), yaml_syntax=file.suffix.lower() in (".yaml", ".yml"))


def parse_ontology(text: str, source: str, yaml_syntax: bool = False) -> Ontology:
    """Parse and validate ontology text; ``source`` names it in error messages."""

    data = parse_document(text, source, yaml_syntax)
    if not isinstance(data, dict):
        raise MemlensError(f"{source}: an ontology must be a mapping with 'roots' and 'symbols'")
    try:
        return Ontology.model_validate(data)
    except ValidationError as error:
        raise MemlensError(f"{source}: {_describe(error, data)}") from None


def _describe(error: ValidationError, data: dict) -> str:
    """Name the first problem by field path, with the symbol id where there is one."""
    problem = error.errors()[0]
    location = [str(part) for part in problem["loc"]]
    message = problem["msg"].removeprefix("Value error, ")
    where = ".".join(location)
    if len(location) >= 2 and location[0] == "symbols" and location[1].isdigit():
        symbols = data.get("symbols") or []
        index = int(location[1])
        if index < len(symbols) and isinstance(symbols[index], dict) and "id" in symbols[index]:
            where += f" (symbol {symbols[index]['id']!r})"
    more = len(error.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if not where:
        return message + suffix
    return f"field {where}: {message}{suffix}"
