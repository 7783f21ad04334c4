"""``memlens tooldrift scan``: read a source's tool schemas and classify every parameter.

``read_source`` picks one source (``scan_sources``), ``scan_source`` checks each tool's schema
(``scan_schema``), applies the rules (``scan_rules``) and, when a judge model is given, lets it
review them (``scan_judge``). Writing the review, rubrics and JSON is ``scan_outputs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlens.errors import MemlensError
from memlens.tooldrift.scan_rules import Verdict, classify
from memlens.tooldrift.scan_schema import ParamInfo, parameters
from memlens.tooldrift.scan_sources import (
    DEFAULT_TIMEOUT_S,
    ToolSource,
    scan_mcp_http,
    scan_mcp_stdio,
    scan_module,
    scan_tools_json,
)
from memlens.tooldrift.schema import BIAS_DIMENSIONS


@dataclass
class ScanResult:
    """A source's tools, their parameters and one verdict per parameter (same order)."""

    source: ToolSource
    params: list[ParamInfo]
    verdicts: list[Verdict]

    @property
    def domain(self) -> str:
        """The source as a dataset ``domain`` (``mcp_git`` for the server ``mcp-git``)."""
        return domain_label(self.source.label)

    def counts(self) -> dict:
        """Tools, parameters, flagged parameters (overall, per dimension and per kind)."""
        flagged = [v for v in self.verdicts if v.flagged]
        return {"tools": len(self.source.tools), "parameters": len(self.verdicts),
                "flagged": len(flagged),
                "by_dimension": {d: sum(d in v.dimensions for v in flagged)
                                 for d in BIAS_DIMENSIONS},
                "by_kind": {k: sum(v.spec["kind"] == k for v in flagged)
                            for k in ("enum", "boolean", "numeric")},
                "judged": sum(v.decided_by == "judge" for v in self.verdicts)}


def domain_label(label: str) -> str:
    """A source label as a dataset domain: lower case, runs of other characters as ``_``.

    >>> domain_label("mcp-git"), domain_label("My Tools.v2")
    ('mcp_git', 'my_tools_v2')
    """
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or "tools"


def read_source(*, mcp: str | None = None, url: str | None = None,
                tools_json: str | None = None, module: str | None = None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolSource:
    """The tools of exactly one source (see ``scan_sources``)."""
    given = [(flag, value) for flag, value in (("--mcp", mcp), ("--url", url),
                                               ("--tools-json", tools_json),
                                               ("--module", module)) if value is not None]
    if len(given) != 1:
        raise MemlensError("give exactly one source: --mcp COMMAND, --url URL, --tools-json FILE "
                           "or --module NAME" + (f" (got {', '.join(f for f, _ in given)})"
                                                 if given else ""))
    if mcp is not None:
        return scan_mcp_stdio(mcp, timeout_s)
    if url is not None:
        return scan_mcp_http(url, timeout_s)
    if tools_json is not None:
        return scan_tools_json(tools_json)
    return scan_module(module)


def scan_source(source: ToolSource, judge=None, store=None) -> ScanResult:
    """Check every tool schema and classify every parameter; ``judge`` (a ``ChatModel``) reviews
    the rules' verdicts through ``store`` (a ``RunStore``: cached, resumable)."""
    names = [tool.name for tool in source.tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise MemlensError(f"{source.kind} '{source.target}': duplicate tool names {duplicates}")
    params = [p for tool in source.tools
              for p in parameters(tool.name, tool.input_schema, f"{source.kind} '{source.target}'")]
    verdicts = [classify(p) for p in params]
    if judge is not None:
        from memlens.tooldrift.scan_judge import review_verdicts  # lazy: keeps memlens --help light

        descriptions = {tool.name: tool.description for tool in source.tools}
        verdicts = review_verdicts(judge, params, verdicts, descriptions, store)
    return ScanResult(source, params, verdicts)
