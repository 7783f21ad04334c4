"""``memlens gate``: rules on an audit run, its paired comparison with a baseline run and tool
drift, for CI (docs/gate.md). Sits above the pipelines (it reads audit and tool-drift results),
in the report layer; it imports nothing from ``report``."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "BAD_INPUT": "exits",
    "GateResult": "rules",
    "INSTRUMENT_INVALID": "exits",
    "PASSED": "exits",
    "Policy": "policy",
    "RULE_FAILED": "exits",
    "RuleResult": "rules",
    "RunStats": "rules",
    "evaluate": "rules",
    "junit_xml": "outputs",
    "load_policy": "policy",
    "markdown_summary": "outputs",
    "run_gate": "run",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
