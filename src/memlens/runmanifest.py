"""Open a run directory's manifest section: record the settings, refuse a resume under others.

Every orchestrator that resumes from a run store (tool drift, the reference and SymPreference
builders, the mitigation evaluator) opens its run with :func:`open_run_manifest`. The first open
records ``config`` (model strings in their public, credential-free form), ``inputs`` (content
hashes of the data files) and the installed ``versions`` of the packages that shape the numbers
under ``section``. A later open compares: a changed setting or input would mix two designs in
one run directory (cached calls of the old design next to new ones), so it raises
``MemlensError`` naming the changed keys. Settings in ``runtime_only`` (how fast or how the
stored rows are summarised, never what is generated) may change; the entry is then rewritten.
A key the stored entry does not have (a run made before the key was recorded) is not compared.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from memlens.errors import MemlensError
from memlens.models.fingerprint import config_fingerprints
from memlens.models.modelstring import public_model_string

VERSIONED = ("numpy", "scipy", "pandas", "numba", "xllamacpp", "sentence-transformers",
             "openai", "anthropic", "transformers", "datasets")
"""Packages whose installed versions a manifest records (None when not installed)."""


def package_versions(names: tuple[str, ...] = VERSIONED) -> dict[str, str | None]:
    """Installed versions of ``names`` (None for a package that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def content_sha256(items) -> str:
    """sha256 of JSON-ready data or a list of dataclass items (order included), for ``inputs``.

    >>> content_sha256([1, "a"])[:12]
    '4a72386a0277'
    """
    payload = [dataclasses.asdict(item) if dataclasses.is_dataclass(item) else item
               for item in items] if isinstance(items, list | tuple) else items
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _public(value):
    """JSON-ready ``value`` with every string in its public (credential-free) form."""
    if isinstance(value, str):
        return public_model_string(value)
    if isinstance(value, dict):
        return {str(key): _public(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_public(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)


def changed_keys(old: dict, new: dict, ignore=frozenset()) -> list[str]:
    """Keys present in both mappings whose values differ, less ``ignore`` (sorted).

    >>> changed_keys({"k": 1, "seed": 0, "gone": 1}, {"k": 2, "seed": 0, "added": 1})
    ['k']
    """
    return sorted(key for key in set(old) & set(new)
                  if key not in ignore and old[key] != new[key])


def open_run_manifest(store, section: str, config: dict, *, runtime_only=frozenset(),
                      inputs: dict | None = None) -> dict:
    """Record ``config`` / ``inputs`` / package versions under manifest ``section`` of ``store``
    (a ``RunStore``), or raise ``MemlensError`` when the section already holds other settings.

    Returns the entry written: ``{"config": …, "inputs": …, "versions": …,
    "model_fingerprints": …}`` (the last: ``memlens.models.fingerprint.config_fingerprints``).
    """

    entry = {"config": _public(dict(config)), "inputs": _public(dict(inputs or {})),
             "versions": package_versions(),
             # the weights behind local model strings (recorded, not compared: cache keys
             # already follow them)
             "model_fingerprints": _public(config_fingerprints(dict(config)))}
    previous = store.read_manifest().get(section)
    if isinstance(previous, dict):
        # a legacy entry (before this helper) is the flat config itself
        old_config = previous.get("config", previous)
        changed = changed_keys(old_config if isinstance(old_config, dict) else {},
                               entry["config"], set(runtime_only))
        old_inputs = previous.get("inputs") if isinstance(previous.get("inputs"), dict) else {}
        changed += [f"{key.removesuffix('_sha256')} content" for key in changed_keys(old_inputs, entry["inputs"])]
        if changed:
            raise MemlensError(
                f"run directory {store.run_dir} holds {'an' if section[:1] in 'aeiou' else 'a'} "
                f"{section} run with different settings "
                f"({', '.join(changed)}); use another --out to start a new run, or the same "
                "settings to resume it")
    store.write_manifest({section: entry})
    return entry
