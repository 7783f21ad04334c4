"""Every command in README.md and docs/*.md ``bash`` code blocks is checked, so an example can no
longer fail verbatim (issue 25: the README's ``--dry-run`` example failed, ``--out`` required).

The test reads the documents when it runs, so commands other people add are checked too.
Convention (docs/README): a ```` ```bash ```` block holds commands to run as they stand; a block
without a language is a synopsis (``[--flag X]``, ``MODEL``) or output and is not run.

Each ``memlens`` command is

- **parsed** by memlens' real argument parser (every one: flags, choices, required options);
- **run** in-process in a scratch folder (``test_documented_commands_run``, slow): ``audit`` with
  ``--dry-run`` added (it would call a model for minutes or days); everything else verbatim,
  with the run directories it reads made first (``FIXTURE_RUNS``: a small finished audit
  against the loopback server, keyword labeler).

``SKIP`` lists what is not run, each with its reason: commands that genuinely need a GPU, a
paid API, the installer or the test suite itself (the latter two run in CI's fresh venv).
Other programs' command lines (pip, inspect) and shell syntax (``$(…)``) are not run here.
Placeholders (``DATASET``, ``…``) are refused in ``bash`` blocks: they belong in a synopsis.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
RUNNABLE = {"bash", "sh", "shell", "console"}

SKIP: list[tuple[str, str]] = [
    (r"^bash scripts/install\.sh", "the installer: CI runs it in a brand-new venv (.ci/run)"),
    (r"^python -m pytest", "the test suite itself"),
    (r"^python benchmarks/", "a benchmark: minutes of CPU, run by hand"),
    (r"^(bash|python) scripts/", "a maintenance script (scripts/*: CI and release tooling)"),
    (r"vllm:(?!.*--dry-run)", "needs a GPU (vLLM)"),
    (r"^accelerate ", "needs GPUs (accelerate / DeepSpeed)"),
    (r"^memlens (chat|label|questions filter|questions orthogonality|tooldrift build|"
     r"mitigate (references|sympref|eval)|ontology (refine|robustness)).*"
     r"(openai:(?![^ ]*@http://127\.)|anthropic:)", "needs a paid API key"),
    (r"^memlens tooldrift setup", "installs MemPalace into its own venv (minutes, network)"),
    (r"^memlens mitigate (grpo|dpo)", "trains a model (GPU for the documented sizes)"),
]
"""(pattern over the command line, reason) of commands that are parsed but not run."""


def documented_commands() -> list[tuple[str, str]]:
    """``(where, command)`` for every command line of every runnable block, continuation lines
    joined, comments dropped, ``&&`` / ``;`` chains split."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) not in RUNNABLE:
                continue
            line_no = text[:match.start()].count("\n") + 2
            body = re.sub(r"\\\n\s*", " ", match.group(2))
            for offset, line in enumerate(body.splitlines()):
                lexer = shlex.shlex(line.removeprefix("$ "), posix=True, punctuation_chars=";&|")
                lexer.whitespace_split, lexer.commenters = True, "#"
                words = list(lexer)
                command: list[str] = []
                for word in [*words, ";"]:
                    if word in ("&&", ";", "||"):
                        if command:
                            found.append((f"{path.name}:{line_no + offset}", shlex.join(command)))
                        command = []
                    else:
                        command.append(word)
    return found


COMMANDS = documented_commands()


def skip_reason(command: str) -> str | None:
    """Why ``command`` is not run, or None."""
    return next((reason for pattern, reason in SKIP if re.search(pattern, command)), None)


def test_the_documents_have_commands():
    assert len(COMMANDS) > 30
    assert any(command.startswith("memlens audit --preset quick") for _, command in COMMANDS)


PLACEHOLDER = re.compile(r"(^|[:/=])[A-Z][A-Z_]{2,}($|[/,])|…")
"""``DATASET``, ``DATA/rubrics``, ``vllm:BASE``, ``…``: a synopsis, not a command to run."""


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_documented_command_parses(where, command, tmp_path, monkeypatch):
    words = shlex.split(command)
    if skip_reason(command) is None:
        assert not any(PLACEHOLDER.search(word) for word in words), (
            f"{where}: `{command}` has a placeholder in a ```bash block: write a real value, "
            "or move it to a comment or a block without a language (a synopsis)")
    if words[0] != "memlens":
        return  # another program's command line (pip, inspect, echo): not memlens' to check
    from memlens.cli.main import build_parser

    monkeypatch.chdir(tmp_path)
    try:
        build_parser().parse_args(words[1:])
    except SystemExit as exit_:
        pytest.fail(f"{where}: `{command}` does not parse (exit {exit_.code})")


# -- running them ---------------------------------------------------------------------------

FIXTURE_RUNS = re.compile(r"^runs/[\w.-]+$")
"""A positional argument like ``runs/gpt`` that does not exist yet: a finished audit is copied
there first (the small fixture run)."""


SENTENCES = ["Split the bill so everyone pays a fair share.", "Check the budget first.",
             "Ask a lawyer about the contract.", "Think about how you feel.",
             "Plan the steps and the schedule.", "Keep everyone safe from harm."]


def keyword_answer(request: dict) -> str:
    """A tagged answer whose steps the keyword labeler recognises, varying with the request."""
    import hashlib

    digest = hashlib.sha256(json_dump(request).encode()).digest()
    steps = [SENTENCES[byte % len(SENTENCES)] for byte in digest[:3]]
    body = "".join(f"<step_{n}>{text}</step_{n}>" for n, text in enumerate(steps, 1))
    return f"<think>{body}</think><answer>It depends.</answer>"


def json_dump(value) -> str:
    import json

    return json.dumps(value, sort_keys=True)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A scratch folder with one small finished audit (loopback model, keyword labeler)."""
    pytest.importorskip("openai")
    from memlens.cli.main import main
    from memlens.models.loopback import LoopbackServer

    root = tmp_path_factory.mktemp("docs")
    with LoopbackServer(responder=keyword_answer) as server:
        status = main(["audit", "--preset", "quick", "--n-questions", "2", "--labeler",
                       "keyword", "--model", f"openai:m@{server.base_url}", "--max-tokens", "32",
                       "--bootstrap", "200", "--no-progress", "--out", str(root / "fixture")])
    assert status in (0, 5)
    return root


SHORTEN = {
    ("memlens", "audit"): ["--dry-run"],  # minutes to days of model calls
    ("memlens", "chat"): ["--max-tokens", "8"],
    ("memlens", "tooldrift"): ["--limit", "1", "--k", "1"],  # `tooldrift run`: no --dry-run
}
"""Flags appended (the last value of a flag wins) so a command that would call a model for long
runs in seconds, for real."""
STEP_ROWS = [{"id": f"r{r}-s{s}", "response_id": f"r{r}", "text": text}
             for r, texts in enumerate([["Split the bill so everyone pays a fair share.",
                                         "Check the budget before you commit."],
                                        ["Ask a lawyer about the contract."]])
             for s, text in enumerate(texts)]


def fixture_file(name: str, sandbox: Path) -> None:
    """Write an input file a document names (steps, label files, a drift table)."""
    import json
    from importlib import resources

    path = sandbox / name
    if path.exists():
        return
    if name.endswith(".csv") and "drift" in name:
        with resources.as_file(resources.files("memlens.data") / "examples" /
                               "drift_table.csv") as example:
            shutil.copy(example, path)
    elif name == "steps.jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in STEP_ROWS), encoding="utf-8")
    elif name.startswith("labels") and name.endswith(".jsonl"):
        from memlens.ontology import get_labeler, load_ontology
        from memlens.ontology.label_files import label_rows, write_jsonl

        ontology = load_ontology()
        write_jsonl(path, label_rows(get_labeler("keyword", ontology), STEP_ROWS, ontology))


def prepare(words: list[str], sandbox: Path) -> list[str]:
    """Make the inputs ``words`` reads; shorten what would call a model for long."""
    if words[:2] != ["memlens", "tooldrift"] or words[2:3] == ["run"]:
        words = [*words, *SHORTEN.get(tuple(words[:2]), [])]
    for name in words:
        if re.fullmatch(r"[\w.-]+\.(jsonl|csv)", name):
            fixture_file(name, sandbox)
    for index, word in enumerate(words):
        before = words[index - 1] if index else ""
        if FIXTURE_RUNS.match(word) and before != "--out" and \
                not (sandbox / word).exists():
            # a tool-drift command reads a tool-drift run (an earlier documented command made
            # one), every other command a finished audit
            source = next((path.parent for path in sorted(sandbox.glob("runs/*/tooldrift.json"))),
                          None) if words[1] == "tooldrift" else sandbox / "fixture"
            if source is not None:
                shutil.copytree(source, sandbox / word)
        if word.startswith("runs/") and word.endswith(".parquet") and before != "--out" and \
                not (sandbox / word).exists():
            run = sandbox / Path(*Path(word).parts[:2])  # runs/audit/tables/x -> runs/audit
            if not run.exists():
                shutil.copytree(sandbox / "fixture", run)
    return words


@pytest.mark.slow
@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_commands_run(where, command, sandbox, monkeypatch, capsys):
    reason = skip_reason(command)
    if reason:
        pytest.skip(reason)
    if not command.startswith("memlens ") or "$" in command:
        pytest.skip("another program, or shell syntax ($…): parsed above, not run in-process")
    from memlens.cli.main import main

    monkeypatch.chdir(sandbox)
    words = prepare(shlex.split(command), sandbox)
    status = main(words[1:])
    err = capsys.readouterr().err
    assert status in (0, 5), f"{where}: `{shlex.join(words)}` exited {status}: {err[-800:]}"
