"""Real third-party MCP servers from PyPI (the test extra installs them), scanned over stdio:
counts per server and precision / recall against the hand labels of ``scan_labels``.

Also a script: ``python tests/tooldrift/test_scan_real.py ['LABEL=COMMAND' ...]`` prints the
table for the installed servers (plus any extra server commands, e.g. in their own venvs)."""

import importlib.util
import subprocess
import sys
import time

import pytest
from scan_labels import BLIND_LABELS, LABELS, score

from memlens.tooldrift.scan import scan_source
from memlens.tooldrift.scan_sources import scan_mcp_stdio
from memlens.tooldrift.stats import proportion

PY = sys.executable
SERVERS = {  # label: (module that must be installed, command)
    "mcp-time": ("mcp_server_time", f"{PY} -m mcp_server_time"),
    "mcp-fetch": ("mcp_server_fetch", f"{PY} -m mcp_server_fetch"),
    "mcp-git": ("mcp_server_git", f"{PY} -m mcp_server_git --repository {{repo}}"),
}


def scan_all(servers: dict[str, str]) -> dict:
    """Scan each server: per-server counts, verdicts and seconds."""
    results = {}
    for label, command in servers.items():
        started = time.perf_counter()
        result = scan_source(scan_mcp_stdio(command, timeout_s=120))
        results[label] = {
            "seconds": time.perf_counter() - started, "counts": result.counts(),
            "verdicts": {f"{v.tool}.{v.param}": (v.flagged, v.spec) for v in result.verdicts}}
    return results


def installed(tmp_path) -> dict[str, str]:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    found = {label: command.format(repo=repo) for label, (module, command) in SERVERS.items()
             if importlib.util.find_spec(module)}
    if not found:
        pytest.skip("no real MCP server installed (pip install 'memlens[test]')")
    return found


@pytest.mark.slow
def test_real_servers_precision_recall(tmp_path):
    results = scan_all(installed(tmp_path))
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "direction_agrees": 0}
    for label, found in results.items():
        assert found["counts"]["parameters"] == len(LABELS[label])
        for key, value in score(found["verdicts"], LABELS[label]).items():
            total[key] += value
    # The values measured when the rules were written (docs/tooldrift.md): every labelled
    # drift-prone parameter of these three servers is found, nothing else is flagged.
    assert total["fp"] == 0 and total["fn"] == 0
    assert total["direction_agrees"] == total["tp"]
    if "mcp-git" in results:
        git = results["mcp-git"]["counts"]
        assert git["tools"] == 12 and git["flagged"] == 4
        assert git["by_dimension"]["minimalism_conciseness"] == 4


def _totals(results: dict, labels: dict) -> dict:
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "direction_agrees": 0}
    for label, found in results.items():
        if label in labels:
            part = score(found["verdicts"], labels[label])
            total = {k: total[k] + part[k] for k in total}
    return total


def _precision_recall(total: dict) -> str:
    precision = proportion(total["tp"], total["tp"] + total["fp"])
    recall = proportion(total["tp"], total["tp"] + total["fn"])
    n = sum(total[k] for k in ("tp", "fp", "fn", "tn"))

    def text(p):
        return f"{p['k']}/{p['n']} [{p['ci95'][0]:.2f}, {p['ci95'][1]:.2f}]" if p["n"] else "—"

    return (f"{n} parameters {total}; precision {text(precision)}, recall {text(recall)} "
            f"(Wilson 95 %); direction right {total['direction_agrees']}/{total['tp']}")


def report(results: dict) -> str:
    """The measurement as text: per server, then precision / recall with Wilson 95 % CIs for the
    labels written after seeing the rules, the blind labels, and both."""
    lines = []
    for label, found in results.items():
        counts = found["counts"]
        lines.append(f"{label}: {counts['tools']} tools, {counts['parameters']} parameters, "
                     f"{counts['flagged']} flagged {counts['by_dimension']}, "
                     f"{found['seconds']:.1f} s")
    for name, labels in (("seen", LABELS), ("blind", BLIND_LABELS),
                         ("all", {**LABELS, **BLIND_LABELS})):
        lines.append(f"{name}: {_precision_recall(_totals(results, labels))}")
    return "\n".join(lines)


if __name__ == "__main__":
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder) / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        servers = {label: command.format(repo=repo) for label, (module, command)
                   in SERVERS.items() if importlib.util.find_spec(module)}
        servers.update(dict(arg.split("=", 1) for arg in sys.argv[1:]))
        print(report(scan_all(servers)))
