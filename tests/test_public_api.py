"""The public API is each package's ``__all__`` (docs/architecture.md "Public API and deprecation
policy"): every name in it resolves, every ``memlens.…`` path the docs name resolves, the paths
the docs named before the policy still resolve (to the same object as the package's name), the
deprecated names warn, and importing a package face stays cheap."""

import ast
import importlib
import json
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "memlens"
FACES = sorted(".".join(("memlens", *path.parent.relative_to(SRC).parts))
               for path in SRC.rglob("__init__.py"))
"""Every package of memlens (its ``__init__.py`` is the package's face)."""
HEAVY = ("pandas", "scipy", "torch", "numba", "matplotlib", "sklearn")
RUN_DIR_FILES = ("memlens.sqlite", "memlens.lock")
"""File names in a run directory that look like dotted paths in the docs."""

DOCUMENTED_BEFORE_THE_POLICY = (
    "audit", "audit.AuditConfig", "audit.answers", "audit.build_config", "audit.chunks.StageRows",
    "audit.chunks.run_chunks", "audit.compare.compare_audits", "audit.config", "audit.explore",
    "audit.explore.explore", "audit.generate.build_request", "audit.howdrift.how_sections",
    "audit.pipeline.chunk_size", "audit.pipeline.drift_frame", "audit.pipeline.plan_cells",
    "audit.results", "audit.results.load_audit_run", "audit.run_audit", "audit.simulate",
    "audit.simulate.calibrate", "cli.argtypes", "cli.main", "cli.main.build_parser", "engine",
    "engine.breaker", "engine.plan_requests", "engine.run_requests", "engine.slots",
    "engine.slots.shared_slots", "envscope.scoped_environ", "errors.MemlensError", "fileio",
    "fileio.output_dir", "gate", "gate.exits", "gate.operating.elevation_of", "inspect_ext",
    "inspect_ext._registry", "inspect_ext.importer.import_inspect_log", "inspect_ext.replay",
    "inspect_ext.tasks.reasoning_drift", "inspect_ext.tokens.ensure_token_encoding", "jsonl",
    "jsonreply", "metrics", "metrics.drift_batch", "metrics.dtw", "metrics.dtw_batch",
    "metrics.edit_distance", "metrics.encode_pairs", "metrics.js_distance",
    "metrics.lexical_diversity", "metrics.path.dtw_path", "metrics.path.dtw_path_batch",
    "metrics.sri", "metrics.symbol_cost_matrix", "mitigation", "mitigation.config",
    "mitigation.export.gguf_to_folder", "mitigation.figures", "mitigation.rewards", "models",
    "models.ChatModel", "models.ChatRequest", "models.ChatResponse", "models.GenerationParams",
    "models.callable.CallableModel", "models.callable.as_chat_model", "models.cpu.auto_threads",
    "models.embedded", "models.embedded.gguf_path", "models.embedded.release_servers",
    "models.fake.tool_reply", "models.fingerprint", "models.get_model", "models.loopback",
    "models.loopback.LoopbackServer", "models.registry", "models.registry.embedded_settings",
    "models.throughput", "models.window", "ontology.Ontology", "ontology.agreement",
    "ontology.agreement.fleiss_kappa", "ontology.embedded_labeler", "ontology.get_labeler",
    "ontology.gold.score_labels", "ontology.refine.refine", "ontology.reliability", "questions",
    "questions.Question", "questions.filtering", "questions.json_rater.rate_json",
    "questions.memsyco.MemsycoItem", "questions.orthogonality",
    "questions.orthogonality.rate_relevance", "questions.source_presets", "report",
    "report.build_report", "report.compare.compare_runs", "report.compare_runs", "report.glossary",
    "report.scan.scan_section", "rowkeys.derive_seed", "rowkeys.join_key",
    "runmanifest.open_run_manifest", "stats", "stats.analyze", "stats.cluster_bootstrap",
    "stats.contrasts", "stats.direction", "stats.direction.MIN_QUESTIONS",
    "stats.direction.paired_direction", "stats.format_summary", "stats.load_drift_table",
    "stats.memory_sets.compare_memory_sets", "stats.multiple.family_bh", "stats.paired",
    "stats.power", "stats.power.difference_variance", "stats.results", "stats.selectivity",
    "stats.selectivity.selectivity", "stats.substitution", "steps", "steps.Step",
    "steps.split_steps", "stimuli", "stimuli.Stimulus", "stimuli.dialogue", "stimuli.inject",
    "stimuli.load_stimuli", "stimuli.memory_sets", "stimuli.select_stimuli", "stimuli.templates",
    "store", "store.RunStore", "store.export", "store.export.export_run",
    "store.export.export_table", "store.export.to_dataset", "store.file_sha256", "store.rowtypes",
    "tooldrift.compare.compare_tooldrift", "tooldrift.frameworks.REGISTRY",
    "tooldrift.load_dataset", "tooldrift.runner.select_entries", "tooldrift.scan.read_source",
)
"""Every ``memlens.…`` path README.md and docs/*.md named before the public API was narrowed to
``__all__`` (``git show b94d812^:docs/…``): importing them keeps working."""
MOVED_WITHOUT_ALIAS = {"mitigation.figures": "report.mitigation_figures"}
"""Documented paths that moved with no alias left behind: ``mitigation`` may not import ``report``
(tests/test_architecture.py), so the figure's old module cannot hand out the new one
(CHANGELOG.md says so)."""


def resolve(path: str):
    """The object a dotted ``memlens.…`` path names: the longest importable module, then
    attributes (``memlens.stats.direction.MIN_QUESTIONS``)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(prefix)
        except ModuleNotFoundError as error:
            if error.name != prefix:  # the module exists but needs a package that is missing
                raise
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise AssertionError(f"{path}: no importable module")


def resolve_or_skip(path: str, how=resolve):
    """``how(path)``, skipping a path whose module needs an optional package missing here."""
    try:
        return how(path)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] == "memlens":
            raise
        pytest.skip(f"{path} needs the optional package {error.name}")


def face_name(path: str):
    """``memlens.stats.analyze`` as ``from memlens.stats import analyze`` reads it: the face's
    name, even where a submodule has the same name."""
    face, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(face), name)


def documented_paths() -> dict[str, str]:
    """``memlens.…`` path -> the first markdown file naming it (README.md, docs/**/*.md): dotted
    names anywhere and ``from memlens.x import a, b`` lines."""
    found: dict[str, str] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        paths = re.findall(r"memlens(?:\.[A-Za-z_]\w*)+", text)
        for module, names in re.findall(r"from (memlens[\w.]*) import ([\w, ]+)", text):
            paths += [f"{module}.{name.strip()}" for name in names.split(",") if name.strip()]
        for path in paths:
            if not any(path == f or path.startswith(f + ".") for f in RUN_DIR_FILES):
                found.setdefault(path, str(page.relative_to(ROOT)))
    return found


def test_the_docs_parser_finds_dotted_paths_and_from_imports():
    paths = documented_paths()
    assert "memlens.audit.run_audit" in paths  # dotted, in prose (docs/inspect.md)
    assert "memlens.stats.format_summary" in paths  # from memlens.stats import …, format_summary
    assert not any(path.startswith("memlens.sqlite") for path in paths)  # a file, not a module
    assert len(paths) > 50


@pytest.mark.parametrize("face", FACES)
def test_every_face_declares_all_and_imports_only_the_lazy_helper(face):
    init = SRC.joinpath(*face.split(".")[1:], "__init__.py")
    imported = {node.module for node in ast.walk(ast.parse(init.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom)} | \
               {alias.name for node in ast.walk(ast.parse(init.read_text(encoding="utf-8")))
                if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {"memlens.lazy"}, f"{face} imports {sorted(imported)} eagerly"
    module = importlib.import_module(face)
    assert isinstance(module.__all__, list) and len(set(module.__all__)) == len(module.__all__)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("face", FACES)
def test_every_name_in_all_resolves_to_the_object_its_module_defines(face):
    module = importlib.import_module(face)
    exports = getattr(module, "_EXPORTS", {})
    for name in module.__all__:
        value = resolve_or_skip(f"{face}.{name}", how=face_name)
        assert not isinstance(value, types.ModuleType), f"{face}.{name} is a module"
        if name in exports:
            defining = importlib.import_module(f"{face}.{exports[name]}")
            assert value is getattr(defining, name)
            assert getattr(module, name) is value  # still the name once its module is imported


def test_a_name_exported_from_its_same_named_module_stays_the_name():
    code = ("import memlens.stats.selectivity, memlens.stats.analyze, memlens.stimuli.inject\n"
            "from memlens.stats import analyze, selectivity\n"
            "from memlens.stimuli import inject\n"
            "print(type(analyze).__name__, type(selectivity).__name__, type(inject).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["function", "function", "function"]


@pytest.mark.parametrize("path", sorted(documented_paths()))
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # deprecated names: tested below
def test_every_path_the_docs_name_resolves(path):
    resolve_or_skip(path)


@pytest.mark.parametrize("path", [f"memlens.{p}" for p in DOCUMENTED_BEFORE_THE_POLICY])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_every_path_documented_before_the_policy_still_resolves(path):
    old = path.removeprefix("memlens.")
    if old in MOVED_WITHOUT_ALIAS:
        with pytest.raises(AttributeError, match=f"no attribute '{old.rsplit('.')[-1]}'"):
            resolve(path)
        resolve_or_skip(f"memlens.{MOVED_WITHOUT_ALIAS[old]}")
        return
    value = resolve_or_skip(path)
    parts = path.split(".")
    if len(parts) >= 4:  # memlens.<package>.<module>.<name>: the face's name is the same object
        face = importlib.import_module(".".join(parts[:2]))
        if parts[-1] in face.__all__:
            assert getattr(face, parts[-1]) is value


def test_the_deprecated_keyword_labeler_warns_naming_its_replacement():
    import memlens.mitigation
    from memlens.ontology.keyword_labeler import KeywordLabeler

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from_face = memlens.mitigation.KeywordLabeler
        from memlens.mitigation.keyword_labeler import KeywordLabeler as from_shim
    assert from_face is KeywordLabeler and from_shim is KeywordLabeler
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]
    assert all(w.filename == __file__ for w in caught)  # points at the caller's line
    assert all('memlens.ontology.get_labeler("keyword")' in str(w.message) for w in caught)
    assert "KeywordLabeler" not in memlens.mitigation.__all__
    assert "KeywordLabeler" not in dir(memlens.mitigation)


PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)))
"""


@pytest.mark.parametrize("face", FACES)
def test_importing_a_face_imports_no_heavy_library(face):
    """Measured: no face is itself heavy, so none may import pandas, scipy, torch, numba,
    matplotlib or scikit-learn (before the faces were lazy, ``import memlens.report`` took 5 s)."""
    out = subprocess.run([sys.executable, "-c", PROBE, face, json.dumps(HEAVY)],
                         capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == []
