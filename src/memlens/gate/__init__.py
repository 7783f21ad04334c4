"""``memlens gate``: rules on an audit run, its paired comparison with a baseline run and tool
drift, for CI (docs/gate.md). Sits above the pipelines (it reads audit and tool-drift results),
in the report layer; it imports nothing from ``report``."""

from memlens.gate.exits import BAD_INPUT, INSTRUMENT_INVALID, PASSED, RULE_FAILED
from memlens.gate.outputs import junit_xml, markdown_summary
from memlens.gate.policy import Policy, load_policy
from memlens.gate.rules import GateResult, RuleResult, RunStats, evaluate
from memlens.gate.run import run_gate

__all__ = ["BAD_INPUT", "INSTRUMENT_INVALID", "PASSED", "RULE_FAILED", "GateResult", "Policy",
           "RuleResult", "RunStats", "evaluate", "junit_xml", "load_policy", "markdown_summary", "run_gate"]
