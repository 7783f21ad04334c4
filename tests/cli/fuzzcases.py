"""Generated hostile inputs for the whole CLI (issue 23): the error contract as a property.

``generate_cases(seed, n, workdir, run_dir)`` walks the argparse parser that
``memlens.cli.main.build_parser`` builds — every sub-command and every flag it declares — and
draws, seeded, one hostile variation per case:

- a flag value: numeric edge values (0, -1, huge, 1e400, nan, inf, 2**64, 10**5000 digits),
  empty / whitespace / NUL / non-UTF-8-looking text, a path that is a folder, /dev/zero, a file
  of another kind, a path under a file, an unwritable folder;
- a file a command reads: structural mutations of a valid file (truncated, a line dropped or
  repeated, a field removed / retyped, deep nesting, a huge integer, NaN, BOM, UTF-16 / Latin-1
  encodings, NUL bytes, binary noise, an empty file, a big file);
- a run directory: a torn or wrong-typed row in any table, a missing table, a truncated or
  zeroed SQLite file, a leftover lock, an empty folder.

Each case is ``memlens ARGS`` run as a subprocess; ``check`` says whether the outcome keeps the
contract: exit status in ``ALLOWED_STATUS``, on a refusal stderr's last line ``memlens: error: …``
(or argparse's ``memlens …: error: …``) and at most a few lines, no "Traceback", peak RSS under
``MAX_RSS_MB``. ``scripts/fuzz_cli.py`` runs it at scale; ``tests/cli/test_fuzz.py`` a sample.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ALLOWED_STATUS = {0, 1, 2, 3, 4, 5}
"""0 ok, 1 a gate / build that found nothing, 2 bad input, 3 finished with failed calls, 4 stopped
by the circuit breaker, 5 gate undecided (docs/audit.md, docs/gate.md)."""
MAX_RSS_MB = 1500
"""Peak resident memory any case may reach (the embedded MiniLM labeler alone is ~600 MB)."""
TIMEOUT_S = 120

SKIP_COMMANDS = {("tooldrift", "setup")}
"""Sub-commands not fuzzed: ``tooldrift setup`` installs MemPalace into its own venv (network).
``mitigate grpo|dpo`` always get ``--dry-run`` (training is not a fuzz case)."""
SLOW_MODELS = {"embedded"}
CHEAP = {"--limit": "1", "--n-questions": "1", "--bootstrap": "100", "--samples": "1",
         "--candidates": "1", "--k": "1", "--personas-per-question": "1", "--lm-eval-limit": "1",
         "--timeout": "5", "--attempts": "1", "--no-progress": None, "--max-tokens": "16"}
"""Flags set on every case (when the command has them) so that an accepted case is quick."""
"""Model strings a fuzz case never picks: a case must not load SmolLM."""


@dataclass
class Case:
    """One hostile invocation: ``argv`` and what was varied (``what``)."""

    argv: list[str]
    what: str
    expect_refusal: bool = False
    """A case that must be refused (exit 2): a wrong accept otherwise."""


@dataclass
class Outcome:
    """What one case did."""

    case: Case
    status: int
    stderr: str
    peak_rss_mb: float
    seconds: float
    problems: list[str] = field(default_factory=list)


# -- the parser walk -------------------------------------------------------------------------

def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """``(path, parser)`` for every leaf sub-command."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        yield path, parser
        return
    for name, child in actions[0].choices.items():
        yield from subcommands(child, (*path, name))


def flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and positionals of a leaf parser (help excluded)."""
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction | argparse.
                                                         _VersionAction)]


# -- hostile values and files ----------------------------------------------------------------

NUMBERS = ["0", "-1", "-0", "1e400", "-1e400", "nan", "inf", "-inf", "1e-400", "18446744073709551616",
           "9" * 5000, "0x10", "1_000", " 3 ", "1.5", "2000", "1e9", "", "true", "٣"]
NEVER_A_VALID_NUMBER = {"nan", "inf", "-inf", "1e400", "-1e400", "9" * 5000,
                        "18446744073709551616", "", "true"}
"""Values every bounded numeric flag (``memlens.cli.argtypes``) must refuse."""
TEXTS = ["", " ", "\t", "x" * 5000, "a\x01b", "../../../etc/passwd", "-", "--", "'; DROP TABLE x",
         "é" * 50, "\u202e", "openai:m@http://127.0.0.1:9/v1?api_key=k"]


def valid_files(workdir: Path) -> dict[str, Path]:
    """One valid file of each kind the CLI reads (bundled data copied into ``workdir``)."""
    from importlib import resources

    data = resources.files("memlens").joinpath("data")
    out = workdir / "valid"
    out.mkdir(parents=True, exist_ok=True)
    files = {}

    def copy(kind: str, source, name: str) -> None:
        target = out / name
        target.write_bytes(source.read_bytes())
        files[kind] = target

    copy("questions", data.joinpath("questions", "benchmark.jsonl"), "questions.jsonl")
    copy("stimuli", data.joinpath("stimuli", "stimuli.jsonl"), "stimuli.jsonl")
    copy("ontology", data.joinpath("ontology", "driftlens-v1.json"), "ontology.json")
    steps = out / "steps.jsonl"
    steps.write_text("".join(json.dumps({"id": f"s{k}", "text": text}) + "\n" for k, text in
                             enumerate(["We weigh the cost.", "Safety first.", "Plan ahead."])))
    files["steps"] = steps
    labels = out / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"s{k}", "label": label}) + "\n" for k, label in
                              enumerate(["practical.resources_cost",
                                         "protective.safety_wellbeing_risk", "unlabeled"])))
    files["labels"] = labels
    config = out / "config.yaml"
    config.write_text("samples: 1\nn_questions: 1\nseed: 3\n")
    files["config"] = config
    drift = out / "drift.csv"
    drift.write_text("question_id,condition_class,category,dtw\nq1,control,no_perturbation,0.1\n"
                     "q1,noise,filler,0.2\nq1,persona,age,0.4\nq2,control,no_perturbation,0.2\n"
                     "q2,noise,filler,0.1\nq2,persona,age,0.5\n")
    files["drift"] = drift
    schema = out / "schema.json"
    schema.write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    files["schema"] = schema
    return files


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A structural mutation of a valid file's bytes, and its name."""
    lines = data.splitlines(keepends=True) or [b""]
    kind = rng.choice(["truncate", "drop_line", "repeat_line", "retype", "drop_field", "deep",
                       "big_int", "nan", "bom", "utf16", "latin1", "nul", "noise", "empty",
                       "big", "swap_lines", "one_line_array", "number_line"])
    if kind == "truncate":
        return data[:rng.randrange(max(1, len(data)))], kind
    if kind == "drop_line":
        lines.pop(rng.randrange(len(lines)))
        return b"".join(lines), kind
    if kind == "repeat_line":
        k = rng.randrange(len(lines))
        return b"".join(lines[:k + 1] + [lines[k]] * 3 + lines[k + 1:]), kind
    if kind in ("retype", "drop_field"):
        k = rng.randrange(len(lines))
        try:
            row = json.loads(lines[k])
        except ValueError:
            return data.replace(b",", b";", 1), kind
        if isinstance(row, dict) and row:
            name = rng.choice(sorted(row))
            if kind == "drop_field":
                row.pop(name)
            else:
                row[name] = rng.choice([None, 7, -1.5, True, [], {}, [1, [2]], "x" * 300])
        lines[k] = json.dumps(row).encode() + b"\n"
        return b"".join(lines), kind
    if kind == "deep":
        depth = rng.choice([70, 1000, 100_000])
        return b"[" * depth + b"]" * depth, kind
    if kind == "big_int":
        return b'{"id": ' + b"7" * rng.choice([4301, 20_000]) + b', "text": "x"}\n', kind
    if kind == "nan":
        return data.replace(b"0.", b"NaN", 1) if b"0." in data else b'{"id": NaN}\n', kind
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    if kind == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16"), kind
    if kind == "latin1":
        return data.decode("utf-8", "replace").encode("latin-1", "replace") + b"caf\xe9", kind
    if kind == "nul":
        at = rng.randrange(max(1, len(data)))
        return data[:at] + b"\x00" + data[at:], kind
    if kind == "noise":
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 50, 5000]))), kind
    if kind == "empty":
        return b"", kind
    if kind == "big":
        return data * max(1, (8 << 20) // max(1, len(data))), kind  # ~8 MB of valid rows
    if kind == "swap_lines":
        rng.shuffle(lines)
        return b"".join(lines), kind
    if kind == "one_line_array":
        return b"[" + b",".join(line.strip() for line in lines if line.strip()) + b"]", kind
    return b"42\n" * 3, kind  # number_line


def special_paths(workdir: Path) -> dict[str, str]:
    """Paths that are not a readable / writable file of the expected kind."""
    blocker = workdir / "a-file"
    blocker.write_text("x")
    folder = workdir / "a-folder"
    folder.mkdir(exist_ok=True)
    paths = {"missing": str(workdir / "no-such-file.jsonl"), "folder": str(folder),
             "under_file": str(blocker / "x"), "empty_name": ""}
    if Path("/dev/zero").exists():
        paths["dev_zero"] = "/dev/zero"
    if Path("/sys/fs").is_dir():
        paths["read_only"] = "/sys/fs/memlens-fuzz"
    return paths


# -- run directories ---------------------------------------------------------------------------

STORE_DAMAGE = [
    ("torn_row", "UPDATE stage_{t} SET row = substr(row, 1, length(row) / 2) WHERE rowid = "
                 "(SELECT min(rowid) FROM stage_{t})"),
    ("array_row", "UPDATE stage_{t} SET row = '[1]' WHERE rowid = (SELECT min(rowid) FROM "
                  "stage_{t})"),
    ("null_row", "UPDATE stage_{t} SET row = 'null' WHERE rowid = (SELECT max(rowid) FROM "
                 "stage_{t})"),
    ("retyped", "UPDATE stage_{t} SET row = json_set(row, '$.{f}', {v}) WHERE rowid = "
                "(SELECT min(rowid) FROM stage_{t})"),
    ("dropped_field", "UPDATE stage_{t} SET row = json_remove(row, '$.{f}')"),
    ("drop_table", "DROP TABLE stage_{t}"),
    ("torn_manifest", "UPDATE manifest SET value = substr(value, 1, 25) WHERE name = 'audit'"),
    ("torn_response", "UPDATE responses SET response = substr(response, 1, 9) WHERE rowid = 1"),
    ("blob_row", "UPDATE stage_{t} SET row = x'00ff' WHERE rowid = (SELECT min(rowid) FROM "
                 "stage_{t})"),
]
FIELDS = ["id", "question_id", "category", "condition_class", "sample", "dtw", "sri", "labels",
          "steps", "baseline_symbols", "status", "stats", "embedding", "answer"]
VALUES = ["'x'", "7", "NULL", "json('[1]')", "json('{}')", "-1e300", "json('[[1]]')"]


def damaged_run(run_dir: Path, target: Path, rng: random.Random) -> str:
    """Copy ``run_dir`` to ``target`` with one seeded kind of damage; return its name."""
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("memlens.lock", "*.html",
                                                                    "figures", "tables"))
    database = target / "memlens.sqlite"
    if not database.exists():
        return "no store"
    kind = rng.choice(["sql"] * 6 + ["truncated", "zeroed", "garbage", "empty_dir", "lock"])
    if kind == "truncated":
        data = database.read_bytes()
        database.write_bytes(data[:rng.randrange(len(data))])
        return kind
    if kind == "zeroed":
        database.write_bytes(bytes(database.stat().st_size))
        return kind
    if kind == "garbage":
        database.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
        return kind
    if kind == "empty_dir":
        for path in target.iterdir():
            path.unlink() if path.is_file() else shutil.rmtree(path)
        return kind
    if kind == "lock":
        (target / "memlens.lock").write_text(json.dumps({"pid": 1, "host": "elsewhere"}))
        return kind
    with sqlite3.connect(database) as conn:
        tables = [name[6:] for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'stage_%'")]
        if not tables:
            return "no tables"
        name, sql = rng.choice(STORE_DAMAGE)
        sql = sql.format(t=rng.choice(tables), f=rng.choice(FIELDS), v=rng.choice(VALUES))
        conn.execute(sql)
    return f"store:{name}"


# -- cases -------------------------------------------------------------------------------------

def _base_argv(path: tuple[str, ...], parser: argparse.ArgumentParser, ctx: dict) -> list[str]:
    """A (mostly) valid command line: every required option and positional filled in."""
    argv = list(path)
    for action in flags(parser):
        required = action.required or not action.option_strings
        if not required:
            continue
        if action.nargs == 0:
            continue
        value = _valid_value(action, path, ctx)
        if action.option_strings:
            argv += [action.option_strings[0], value]
        else:
            argv += [value] * (2 if action.nargs in ("+", 2) else 1)
    for action in flags(parser):  # keep every case small: no slow model, little work
        option = action.option_strings[0] if action.option_strings else None
        if option in CHEAP and option not in argv:
            argv += [option] if CHEAP[option] is None else [option, CHEAP[option]]
        elif option and isinstance(action.default, str) and action.default in SLOW_MODELS \
                and option not in argv:
            argv += [option, "fake"]
    if path in (("mitigate", "grpo"), ("mitigate", "dpo")):
        argv.append("--dry-run")
    if path == ("audit",):
        argv.append("--dry-run")
    return argv


def _valid_value(action: argparse.Action, path: tuple[str, ...], ctx: dict) -> str:
    dest = action.dest
    files, out = ctx["files"], ctx["out"]
    if action.choices:
        return str(sorted(map(str, action.choices))[0])
    if "model" in dest or dest in ("judge", "rater", "generator", "target", "labeler",
                                   "rewriter", "models"):
        return "fake"
    if dest in ("out", "output", "new", "out_dir") or dest.startswith("out"):
        return str(out / f"{'-'.join(path)}-{ctx['rng'].randrange(10**6)}")
    if dest in ("run_dir", "run", "runs", "baseline", "run_dirs", "source"):
        return str(ctx["run_dir"])
    if "drift" in dest or dest == "table":
        return str(files["drift"])
    if "label" in dest:
        return str(files["labels"])
    if dest in ("in_path", "steps", "input", "in_file", "infile", "in"):
        return str(files["steps"])
    if "question" in dest or "candidates" in dest:
        return str(files["questions"])
    if "ontology" in dest:
        return str(files["ontology"])
    if dest in ("prompt", "text", "message"):
        return "hi"
    return str(files["steps"])


def generate_cases(seed: int, n: int, workdir: Path, run_dir: Path) -> list[Case]:
    """``n`` seeded hostile cases over every sub-command (round-robin, so every one is hit)."""
    from memlens.cli.main import build_parser

    rng = random.Random(seed)
    workdir.mkdir(parents=True, exist_ok=True)
    files = valid_files(workdir)
    specials = special_paths(workdir)
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    ctx = {"files": files, "out": out, "run_dir": run_dir, "rng": rng}
    leaves = [(path, parser) for path, parser in subcommands(build_parser())
              if path and path not in SKIP_COMMANDS]
    cases: list[Case] = []
    k = 0
    while len(cases) < n:
        path, parser = leaves[k % len(leaves)]
        k += 1
        argv = _base_argv(path, parser, ctx)
        options = [a for a in flags(parser) if a.option_strings and a.nargs != 0]
        positionals = [a for a in flags(parser) if not a.option_strings]
        reads_run = str(run_dir) in argv
        mode = rng.choice(["run"] * 5 if reads_run else ["file"] * 3) if rng.random() < 0.5 \
            else rng.choice(["number", "text", "path", "file", "dup"])
        if mode == "run" and any(p for p in argv if p == str(run_dir)):
            target = workdir / f"run-{len(cases)}"
            damage = damaged_run(run_dir, target, rng)
            argv = [str(target) if part == str(run_dir) else part for part in argv]
            cases.append(Case(argv, f"{' '.join(path)}: {damage}"))
            continue
        if mode == "file":
            readers = [i for i, part in enumerate(argv) if part in {str(p) for p in files.values()}]
            if readers:
                index = rng.choice(readers)
                source = Path(argv[index])
                data, kind = mutate(source.read_bytes(), rng)
                target = workdir / f"case-{len(cases)}{source.suffix}"
                target.write_bytes(data)
                argv[index] = str(target)
                cases.append(Case(argv, f"{' '.join(path)}: {source.name} {kind}"))
                continue
            mode = "path"
        candidates = options + positionals
        if not candidates:
            cases.append(Case(argv, f"{' '.join(path)}: as is"))
            continue
        action = rng.choice(candidates)
        if mode == "number":
            value, what = rng.choice(NUMBERS), "number"
        elif mode == "text":
            value, what = rng.choice(TEXTS), "text"
        else:
            name = rng.choice(sorted(specials))
            value, what = specials[name], f"path:{name}"
        if action.option_strings:
            flag = action.option_strings[0]
            if flag in argv and mode != "dup":
                index = argv.index(flag)
                argv[index + 1] = value
            else:
                argv += [flag, value]
            label = flag
        else:
            index = len(path) + positionals.index(action)
            if index < len(argv):
                argv[index] = value
            label = action.dest
        if any(model in argv for model in SLOW_MODELS):
            argv = [("fake" if part in SLOW_MODELS else part) for part in argv]
        bounded = getattr(action.type, "__name__", "") in ("integer", "number")
        cases.append(Case(argv, f"{' '.join(path)}: {label}={what} {value[:30]!r}",
                          expect_refusal=bounded and value in NEVER_A_VALID_NUMBER))
    return cases


# -- running -----------------------------------------------------------------------------------

_RUNNER = """
import resource, subprocess, sys, time
started = time.monotonic()
try:
    p = subprocess.run(sys.argv[2:], capture_output=True, timeout=float(sys.argv[1]),
                       stdin=subprocess.DEVNULL)
    status, err = p.returncode, p.stderr
except subprocess.TimeoutExpired as e:
    status, err = -999, e.stderr or b""
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.buffer.write(err)
print(status, peak, time.monotonic() - started)
"""


def run_case(case: Case, cwd: Path, env: dict | None = None) -> Outcome:
    """Run ``memlens *case.argv`` in a fresh process; measure its peak RSS (its own
    ``RUSAGE_CHILDREN``, so each case is measured alone)."""
    command = [sys.executable, "-c", _RUNNER, str(TIMEOUT_S), sys.executable, "-m",
               "memlens.cli.main", *case.argv]
    done = subprocess.run(command, capture_output=True, cwd=cwd, env=env)
    status, peak_kb, seconds = done.stdout.split()[-3:]
    outcome = Outcome(case, int(status), done.stderr.decode("utf-8", "replace"),
                      int(peak_kb) / 1024, float(seconds))
    outcome.problems = check(outcome)
    return outcome


def run_case_in_process(case: Case) -> Outcome:
    """Run ``case`` through ``memlens.cli.main.main`` in this process (much faster than a fresh
    interpreter). ``peak_rss_mb`` is how far the case raised this process's peak: the peak
    itself depends on every test that ran before (1.5 GB in a full suite). An exception
    escaping ``main`` counts as a traceback."""
    import contextlib
    import io
    import resource
    import time
    import traceback

    from memlens.cli.main import main

    err, out = io.StringIO(), io.StringIO()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(case.argv)
        except SystemExit as done:
            status = done.code if isinstance(done.code, int) else 2
        except BaseException:  # noqa: BLE001 - what a user would see as a traceback
            traceback.print_exc(file=err)
            status = 1
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    outcome = Outcome(case, int(status), err.getvalue(), growth, time.monotonic() - started)
    outcome.problems = check(outcome)
    return outcome


def check(outcome: Outcome) -> list[str]:
    """What breaks the error contract in one outcome ([] if nothing)."""
    problems = []
    err = outcome.stderr
    lines = [line for line in err.splitlines() if line.strip() and not _progress(line)]
    if "Traceback (most recent call last)" in err:
        problems.append("traceback")
    if outcome.status == -999:
        problems.append(f"timeout after {TIMEOUT_S}s")
    elif outcome.status not in ALLOWED_STATUS:
        problems.append(f"exit status {outcome.status}")
    if outcome.status == 2:
        last = lines[-1] if lines else ""
        if not (last.startswith("memlens: error:") or
                (last.startswith("memlens ") and ": error: " in last)):
            problems.append("no 'memlens: error:' line")
        if not last.startswith("memlens ") and len(lines) > 3:
            problems.append(f"{len(lines)} lines on stderr")
    if outcome.case.expect_refusal and outcome.status == 0:
        problems.append("wrong accept")
    if outcome.peak_rss_mb > MAX_RSS_MB:
        problems.append(f"peak RSS {outcome.peak_rss_mb:.0f} MB")
    return problems


def _progress(line: str) -> bool:
    """Progress bars and library chatter that share stderr (not part of the error contract)."""
    return ("it/s]" in line or "examples/s]" in line or "%|" in line or line.startswith("\r")
            or "Loading weights" in line or line.startswith("memlens: finished, but")
            or line.startswith("warning:") or "Warning" in line)


def summarize(outcomes: list[Outcome]) -> dict:
    """Counts for the report: cases, clean refusals, accepts, tracebacks, other problems, peak."""
    return {
        "cases": len(outcomes),
        "clean_refusals": sum(o.status == 2 and not o.problems for o in outcomes),
        "accepted": sum(o.status in (0, 1, 3, 4, 5) and not o.problems for o in outcomes),
        "tracebacks": sum("traceback" in o.problems for o in outcomes),
        "wrong_accepts": sum("wrong accept" in o.problems for o in outcomes),
        "other_problems": sum(bool(o.problems) and "traceback" not in o.problems
                              and "wrong accept" not in o.problems for o in outcomes),
        "peak_rss_mb": round(max((o.peak_rss_mb for o in outcomes), default=0.0)),
        "seconds": round(sum(o.seconds for o in outcomes)),
    }


def clean_env(home: Path) -> dict:
    """The environment of a case: offline, no API keys (a case must never reach a network)."""
    env = {key: value for key, value in os.environ.items()
           if not key.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", OPENAI_API_KEY="fuzz-not-a-key",
               HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    return env


def memory_limit_note() -> str:
    """How peak memory is measured (for the docs and the report)."""
    return "peak RSS from getrusage(RUSAGE_CHILDREN) of a per-case runner process"

