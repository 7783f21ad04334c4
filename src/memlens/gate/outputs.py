"""The gate's Markdown summary (fit for ``$GITHUB_STEP_SUMMARY``) and JUnit XML report.

JUnit: one ``<testsuite name="memlens gate">`` with one ``<testcase>`` per rule; a failed rule
carries ``<failure>``, an undecided one ``<error>`` (the instrument could not decide), a skipped
one ``<skipped>``; the offending categories with their numbers are the element's text. All text
is neutralised (control and bidi characters become visible escapes) before it is written.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from memlens.gate.rules import GateResult
from memlens.textsafe import neutralise

ICONS = {"pass": "✅ pass", "fail": "❌ fail", "undecided": "⚠️ undecided", "skipped": "⏭ skipped"}


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell (no HTML, pipes escaped, one line)."""
    text = neutralise(str(text)).replace("\n", " ")
    for char in "\\|`*_<>[]":
        text = text.replace(char, "\\" + char)
    return text


def markdown_summary(result: GateResult) -> str:
    """A Markdown section: the verdict and exit status, one table row per rule, then the
    offenders of every rule that did not pass."""
    lines = [f"## memlens gate: {result.status} (exit status {result.exit_status})", "",
             "| rule | status | summary |", "|---|---|---|"]
    for rule in result.rules:
        lines.append(f"| {_md(rule.name)} | {ICONS.get(rule.status, rule.status)} | "
                     f"{_md(rule.summary)} |")
    for rule in result.rules:
        if rule.offenders:
            lines += ["", f"**{_md(rule.name)}**:", ""]
            lines += [f"- {_md(offender)}" for offender in rule.offenders]
    lines += ["", "Exit status: 0 pass, 1 a rule failed, 2 bad input, 5 instrument not valid "
                  "(cannot decide). See docs/gate.md."]
    return "\n".join(lines) + "\n"


def junit_xml(result: GateResult) -> str:
    """The JUnit XML document (UTF-8, with declaration)."""
    counts = {status: sum(1 for r in result.rules if r.status == status)
              for status in ("fail", "undecided", "skipped")}
    suites = ElementTree.Element("testsuites", name="memlens gate", tests=str(len(result.rules)),
                                 failures=str(counts["fail"]), errors=str(counts["undecided"]),
                                 skipped=str(counts["skipped"]))
    suite = ElementTree.SubElement(suites, "testsuite", name="memlens gate",
                                   tests=str(len(result.rules)), failures=str(counts["fail"]),
                                   errors=str(counts["undecided"]),
                                   skipped=str(counts["skipped"]), time="0")
    for rule in result.rules:
        case = ElementTree.SubElement(suite, "testcase", classname="memlens.gate",
                                      name=neutralise(rule.name), time="0")
        detail = "\n".join([rule.summary, *rule.offenders])
        tag = {"fail": "failure", "undecided": "error", "skipped": "skipped"}.get(rule.status)
        if tag:
            element = ElementTree.SubElement(case, tag, message=neutralise(rule.summary)[:500],
                                             type=rule.status)
            element.text = neutralise(detail)
        out = ElementTree.SubElement(case, "system-out")
        out.text = neutralise(detail)
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
