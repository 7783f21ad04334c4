"""The ontology model: roots, symbols (subcategories) with operational triggers and boundaries.

An ontology is plain data (JSON or YAML). ``Ontology.model_validate`` checks its structure;
``memlens.ontology.load.load_ontology`` turns validation problems into a ``MemlensError`` naming
the file and field.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

UNLABELED = "unlabeled"
"""The label of a step no symbol could be given to (empty step, garbage labeler output)."""


def symbol_sequence(labels: list[str]) -> list[str]:
    """The trajectory of one response: its step labels in order without ``unlabeled`` steps
    (a step the labeler could not place carries no symbol). Used by the audit's drift rows, the
    report's trajectory viewer and the mitigation rewards alike.

    >>> symbol_sequence(["social.a", "unlabeled", "practical.b"])
    ['social.a', 'practical.b']
    """
    return [label for label in labels if label != UNLABELED]


def _non_empty(value: str, what: str) -> str:
    if not value or not value.strip():
        raise ValueError(f"{what} must not be empty")
    return value.strip()


class Root(BaseModel):
    """A root category (e.g. ``Social``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Root id, also its display name (``Social``, ``Practical``, ...)."""
    definition: str
    """One-sentence scope of the root."""

    @field_validator("id", "definition")
    @classmethod
    def _check_text(cls, value: str, info) -> str:
        return _non_empty(value, info.field_name)


class Triggers(BaseModel):
    """Surface cues that make a step belong to a symbol — the key to labeler agreement."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    modal_verbs: list[str] = Field(default_factory=list)
    """Modal / prescriptive verbs typical of the symbol (``should``, ``must``, ``could``...)."""
    action_verbs: list[str] = Field(default_factory=list)
    """Action verbs typical of the symbol (``budget``, ``apologise``, ``report``...)."""
    cue_phrases: list[str] = Field(default_factory=list)
    """Phrases that strongly signal the symbol."""


class Symbol(BaseModel):
    """One subcategory: the unit a reasoning step is labeled with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Stable id, ``<root>.<name>`` in lower case, e.g. ``social.fairness_reciprocity``."""
    root: str
    """Id of the root this symbol belongs to."""
    name: str
    """Human-readable name."""
    definition: str
    """Operational definition: what a step must do to get this label."""
    triggers: Triggers = Field(default_factory=Triggers)
    include: list[str] = Field(default_factory=list)
    """Boundary rules: cases that belong here although a neighbour might claim them."""
    exclude: list[str] = Field(default_factory=list)
    """Boundary rules: cases that go to a named neighbour instead."""
    examples: list[str] = Field(default_factory=list)
    """Example reasoning steps carrying this label."""

    @field_validator("id", "root", "name", "definition")
    @classmethod
    def _check_text(cls, value: str, info) -> str:
        return _non_empty(value, info.field_name)

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if value == UNLABELED or any(ch.isspace() for ch in value):
            raise ValueError(f"id {value!r} must not contain spaces or be 'unlabeled'")
        return value


class Ontology(BaseModel):
    """A versioned set of roots and symbols (any number of symbols).

    >>> ontology = Ontology(name="toy", version="1", roots=[Root(id="A", definition="a")],
    ...     symbols=[Symbol(id="a.x", root="A", name="X", definition="x things")])
    >>> ontology.symbol_ids, ontology.root_of("a.x")
    (['a.x'], 'A')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str
    description: str = ""
    roots: list[Root]
    symbols: list[Symbol]

    @model_validator(mode="after")
    def _check_consistency(self) -> Ontology:
        if not self.roots:
            raise ValueError("roots: at least one root is required")
        if not self.symbols:
            raise ValueError("symbols: at least one symbol is required")
        root_ids = [root.id for root in self.roots]
        if len(set(root_ids)) != len(root_ids):
            raise ValueError(f"roots: duplicate root id {_first_duplicate(root_ids)!r}")
        symbol_ids = [symbol.id for symbol in self.symbols]
        if len(set(symbol_ids)) != len(symbol_ids):
            raise ValueError(f"symbols: duplicate symbol id {_first_duplicate(symbol_ids)!r}")
        for index, symbol in enumerate(self.symbols):
            if symbol.root not in root_ids:
                raise ValueError(
                    f"symbols.{index}.root: unknown root {symbol.root!r} for symbol "
                    f"{symbol.id!r} (roots: {', '.join(root_ids)})"
                )
        return self

    @property
    def symbol_ids(self) -> list[str]:
        """Symbol ids in file order."""
        return [symbol.id for symbol in self.symbols]

    @property
    def root_ids(self) -> list[str]:
        """Root ids in file order."""
        return [root.id for root in self.roots]

    def symbol(self, symbol_id: str) -> Symbol:
        """The symbol with this id (KeyError when unknown)."""
        for symbol in self.symbols:
            if symbol.id == symbol_id:
                return symbol
        raise KeyError(symbol_id)

    def root_of(self, symbol_id: str) -> str:
        """Root id of a symbol; ``"unlabeled"`` maps to ``"unlabeled"``."""
        if symbol_id == UNLABELED:
            return UNLABELED
        return self.symbol(symbol_id).root

    def content_hash(self) -> str:
        """sha256 of the canonical JSON form (changes whenever any wording changes)."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _first_duplicate(values: list[str]) -> str:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return ""
