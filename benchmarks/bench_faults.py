"""Fault figures of ``memlens audit`` (run by hand: ``nice -n 10 python benchmarks/bench_faults.py``).

Every run is the real CLI (``memlens audit`` in a subprocess) against the loopback server (real
HTTP on 127.0.0.1, run in this process so it can count requests), with an LLM labeler on the
same server. The audit: ``--questions`` questions x 7 stimuli (no memory with 2 samples, 3 noise,
2 personas, 1 life event) = 8 generation calls per question, ``--baselines 1``, concurrency 4,
latency ``--latency`` s. The generation reply is a list of tagged steps derived from the request's
sample seed; the labeler maps each step's keyword to a symbol, so every run gives the same table.

1. **Kills.** SIGKILL (then SIGINT) at seeded moments spread over generation, labeling and the
   statistics / report tail (a moment is "when the server has seen request n" or "x s after the
   last request"), then the same command again. Per kill: generation / label requests paid twice
   (requests seen by the server minus distinct requests), calls in flight at the kill (received,
   reply not yet sent), whether the resumed drift table and statistics equal an uninterrupted
   run's exactly, and the exit codes.
2. **429 / 500 replies** at 20 % and 50 % of requests (seeded by request index; a third of them
   ``429`` with ``Retry-After: 1``, a third plain ``429``, a third ``500``), with the default 6
   attempts and with ``--attempts 2``: wall time, generation calls failed for good, label calls
   failed for good (responses left all ``unlabeled``), exit code; then the same command against
   the healed server: exit code, calls paid, and whether the table now equals the clean run's.
3. **Misbehaving servers** with ``--timeout 1 --attempts 2``: never answers, trickles, closes the
   connection, resets it, 401 on every call: wall time, requests sent, exit code, the error line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from memlens.models.loopback import LoopbackServer, _Server
from memlens.store import RunStore

CLI = "import sys; from memlens.cli.main import main; sys.exit(main())"
KEYWORDS = {
    "A": ("fairness", "social.fairness_reciprocity"),
    "B": ("cost", "practical.resources_cost"),
    "C": ("plan", "practical.planning_feasibility"),
    "D": ("safety", "protective.safety_wellbeing_risk"),
    "E": ("feelings", "personal.emotional_wellbeing"),
}
STIMULI = [
    {"id": "control/no_perturbation", "class": "control", "category": "no_perturbation", "text": ""},
    {"id": "noise/filler/1", "class": "noise", "category": "filler", "text": "Um, so, well..."},
    {"id": "noise/whitespace/1", "class": "noise", "category": "whitespace", "text": "   "},
    {"id": "noise/punctuation/1", "class": "noise", "category": "punctuation", "text": "...!?"},
    {"id": "persona/age/1", "class": "persona", "category": "age", "text": "I am 72 years old."},
    {"id": "persona/gender/1", "class": "persona", "category": "gender", "text": "I am a woman."},
    {"id": "life_event/bereavement/1", "class": "life_event", "category": "bereavement",
     "text": "My father died last spring. I still think about him every day."},
]


# ---------------------------------------------------------------- the scripted model and labeler

def reply_for_seed(seed: int) -> str:
    """Tagged steps derived from a request's sample seed (3-5 steps over the five keywords)."""
    digest = hashlib.sha256(str(seed).encode()).digest()
    letters = [("ABCDE")[b % 5] for b in digest[1:2 + 2 + digest[0] % 3]]
    steps = "".join(f"<step_{k}>We should weigh {KEYWORDS[x][0]} in this decision.</step_{k}>"
                    for k, x in enumerate(letters, 1))
    return f"<think>{steps}</think><answer>It depends.</answer>"


def label_reply(request: dict) -> str:
    """The labeler: each ``Step n: text`` line -> the symbol of the keyword it contains."""
    import re

    user = request["messages"][-1]["content"]
    steps = re.findall(r"^Step (\d+): (.*)$", user, flags=re.M)
    labels = [{"step": int(n), "label": next(s for w, s in KEYWORDS.values() if w in text)}
              for n, text in steps]
    return json.dumps({"labels": labels})


def _quiet_handle_error(self, request, client_address) -> None:
    """The killed client's sockets break mid-reply: that is the point, not worth a traceback."""
    if not isinstance(sys.exc_info()[1], ConnectionError):
        _LOUD_HANDLE_ERROR(self, request, client_address)


_LOUD_HANDLE_ERROR = _Server.handle_error
_Server.handle_error = _quiet_handle_error


class Recorder:
    """Responder that also records when each reply left (to count calls in flight at a kill)."""

    def __init__(self):
        self.replied: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def __call__(self, request: dict) -> str:
        text = label_reply(request) if request.get("model") == "labeler" else \
            reply_for_seed(request["seed"])
        with self.lock:
            self.replied.append((time.monotonic(), request_key(request)))
        return text


def request_key(body: dict | None) -> str:
    """What makes a request distinct: the sample seed (generation) or the messages (labeler)."""
    if not body:
        return "?"
    if body.get("model") == "labeler":
        return "L" + hashlib.sha256(json.dumps(body["messages"]).encode()).hexdigest()[:16]
    return f"G{body.get('seed')}"


def counts(server: LoopbackServer, kind: str) -> tuple[int, int]:
    """(requests seen, distinct requests) of ``kind`` ``G`` (generation) or ``L`` (labeler)."""
    keys = [request_key(r.body) for r in server.requests]
    keys = [k for k in keys if k.startswith(kind)]
    return len(keys), len(set(keys))


# ---------------------------------------------------------------- running the CLI

def write_inputs(directory: Path, n_questions: int) -> tuple[str, str]:
    questions = directory / "questions.jsonl"
    stimuli = directory / "stimuli.jsonl"
    questions.write_text("".join(json.dumps({
        "id": f"q{k:02d}", "text": f"Is it better to rent or to buy, case {k}?", "category": "money",
        "subcategory": "housing", "source": "bench", "license": "CC0"}) + "\n"
        for k in range(1, n_questions + 1)))
    stimuli.write_text("".join(json.dumps(s) + "\n" for s in STIMULI))
    return str(questions), str(stimuli)


def audit_command(server: LoopbackServer, inputs: tuple[str, str], run_dir: Path,
                  extra: list[str] = ()) -> list[str]:
    return [sys.executable, "-c", CLI, "audit", "--model", f"openai:gen@{server.base_url}",
            "--labeler", f"openai:labeler@{server.base_url}", "--questions", inputs[0],
            "--stimuli", inputs[1], "--seed", "7", "--baselines", "1", "--concurrency", "4",
            "--bootstrap", "200", "--no-progress", "--out", str(run_dir), *extra]


def _default_sigint() -> None:
    # a background (non-interactive) shell, e.g. CI, starts children with SIGINT ignored
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def finish(process: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    _, err = process.communicate(timeout=timeout)
    return process.returncode, err


def run(command: list[str]) -> tuple[int, str, float]:
    began = time.monotonic()
    code, err = finish(start(command))
    return code, err, time.monotonic() - began


def drift_table(run_dir: Path) -> dict:
    with RunStore(run_dir) as store:
        if "audit_drift" not in store.tables():
            return {}
        return {row["id"]: row for row in store.rows("audit_drift")}


def stats_of(run_dir: Path):
    with RunStore(run_dir) as store:
        rows = store.rows("audit_stats") if "audit_stats" in store.tables() else []
    row = next((r for r in rows if r["id"] == "stats"), {})
    return json.dumps([row.get("stats"), row.get("error")], sort_keys=True, default=str)


def failures_in(run_dir: Path) -> tuple[int, int]:
    """(generation calls stored as failed, responses whose steps are all ``unlabeled``)."""
    with RunStore(run_dir) as store:
        tables = store.tables()
        steps = store.rows("audit_steps") if "audit_steps" in tables else []
        labels = store.rows("audit_labels") if "audit_labels" in tables else []
    failed = sum(1 for r in steps if r.get("status") == "failed_call")
    unlabeled = sum(1 for r in labels if r["labels"] and all(x == "unlabeled" for x in r["labels"]))
    return failed, unlabeled


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("memlens:")]
    if lines:
        return lines[-1]
    tail = stderr.strip().splitlines()
    return ("(no memlens: line) " + tail[-1]) if tail else "(stderr empty)"


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


# ---------------------------------------------------------------- 1. kills

def reference_run(work: Path, inputs, latency: float) -> dict:
    """An uninterrupted run: its table, statistics and timeline (to place the kills)."""
    with LoopbackServer(responder=Recorder(), latency_s=latency) as server:
        began = time.monotonic()
        code, err, wall = run(audit_command(server, inputs, work / "clean"))
        ended = time.monotonic()
        kinds = [request_key(r.body)[0] for r in server.requests]
        times = [r.received_at for r in server.requests]
    if code != 0:
        raise SystemExit(f"the uninterrupted run failed ({code}): {err[-2000:]}")
    return {"table": drift_table(work / "clean"), "stats": stats_of(work / "clean"),
            "kinds": kinds, "times": times, "began": began, "ended": ended, "wall": wall,
            "gen": kinds.count("G"), "label": kinds.count("L")}


def kill_points(reference: dict, count: int, rng: random.Random) -> list[tuple[str, float]]:
    """Seeded kill moments spread over the three phases, as ("G"|"L", request number) or
    ("tail", seconds after the last request)."""
    kinds, times = reference["kinds"], reference["times"]
    tail_s = reference["ended"] - times[-1]
    shares = {"G": round(count * 0.4), "L": round(count * 0.3)}
    shares["tail"] = count - shares["G"] - shares["L"]
    points: list[tuple[str, float]] = []
    for phase, n in shares.items():
        for _ in range(n):
            if phase == "tail":
                points.append((phase, round(rng.uniform(0.0, 0.9 * tail_s), 2)))
            else:
                numbers = [i + 1 for i, k in enumerate(kinds) if k == phase]
                points.append((phase, rng.choice(numbers[2:-2] or numbers)))
    return points


def one_kill(work: Path, inputs, latency: float, reference: dict, point, sig: int,
             label: str) -> dict:
    recorder = Recorder()
    run_dir = work / label
    phase, where = point
    total = len(reference["kinds"])
    with LoopbackServer(responder=recorder, latency_s=latency) as server:
        process = start(audit_command(server, inputs, run_dir))
        target = int(where) if phase != "tail" else total
        while len(server.requests) < target and process.poll() is None:
            time.sleep(0.002)
        if phase == "tail":
            time.sleep(where)
        killed_at = time.monotonic()
        finished_first = process.poll() is not None
        if not finished_first:
            process.send_signal(sig)
        first_code, first_err = finish(process)
        time.sleep(0.3)  # requests the dead client sent may still sit in the accept queue
        seen = list(server.requests)
        with recorder.lock:
            replied = {key for at, key in recorder.replied if at <= killed_at}
        # in flight = sent by the killed run (read by the server before or after the signal),
        # reply not yet sent at the signal
        in_flight = sum(1 for r in seen if request_key(r.body) not in replied)
        gen_before = sum(1 for r in seen if request_key(r.body).startswith("G"))
        resumed_code, resumed_err, resumed_wall = run(audit_command(server, inputs, run_dir))
        gen_seen, gen_distinct = counts(server, "G")
        label_seen, label_distinct = counts(server, "L")
    table = drift_table(run_dir)
    return {"label": label, "phase": phase, "where": where, "finished_first": finished_first,
            "first_code": first_code, "first_err": error_line(first_err),
            "gen_before": gen_before, "in_flight": in_flight,
            "gen_twice": gen_seen - gen_distinct, "label_twice": label_seen - label_distinct,
            "gen_distinct": gen_distinct, "resumed_code": resumed_code,
            "resumed_err": error_line(resumed_err) if resumed_code else "",
            "resumed_wall": resumed_wall, "table_equal": table == reference["table"],
            "rows": len(table), "stats_equal": stats_of(run_dir) == reference["stats"]}


def kills_section(work: Path, inputs, latency: float, reference: dict, n_kill: int, n_int: int,
                  seed: int) -> list[str]:
    rng = random.Random(seed)
    problems: list[str] = []
    print(f"\n1. Kills: uninterrupted run {reference['wall']:.1f} s wall, "
          f"{reference['gen']} generation + {reference['label']} label requests, "
          f"{len(reference['table'])} drift rows; tail after the last request "
          f"{reference['ended'] - reference['times'][-1]:.1f} s (drift of last chunk, stats, report)")
    header = (f"{'#':>3} {'signal':7} {'phase':5} {'at':>7} {'gen@kill':>8} {'inflight':>8} "
              f"{'gen 2x':>6} {'lab 2x':>6} {'exit1':>5} {'exit2':>5} {'table=':>6} {'stats=':>6} "
              f"{'resume s':>8}")
    print(header)
    for name, sig, n in (("SIGKILL", signal.SIGKILL, n_kill), ("SIGINT", signal.SIGINT, n_int)):
        for index, point in enumerate(kill_points(reference, n, rng), 1):
            row = one_kill(work, inputs, latency, reference, point, sig, f"{name}-{index}")
            at = f"+{point[1]:.2f}s" if point[0] == "tail" else f"req {int(point[1])}"
            first = "done" if row["finished_first"] else row["first_code"]
            print(f"{index:>3} {name:7} {point[0]:5} {at:>7} {row['gen_before']:>8} "
                  f"{row['in_flight']:>8} {row['gen_twice']:>6} {row['label_twice']:>6} "
                  f"{first!s:>5} {row['resumed_code']:>5} {str(row['table_equal']):>6} "
                  f"{str(row['stats_equal']):>6} {row['resumed_wall']:>8.1f}", flush=True)
            expected_first = -signal.SIGKILL if sig == signal.SIGKILL else 130
            if not row["finished_first"] and row["first_code"] != expected_first:
                problems.append(f"{name} #{index} ({at}): killed run exited {row['first_code']}, "
                                f"expected {expected_first}: {row['first_err']}")
            if row["resumed_code"] != 0:
                problems.append(f"{name} #{index}: resumed run exited {row['resumed_code']}: "
                                f"{row['resumed_err']}")
            if row["gen_twice"] + row["label_twice"] > max(row["in_flight"], 4):
                problems.append(f"{name} #{index} ({at}): paid twice gen {row['gen_twice']} + "
                                f"label {row['label_twice']} > calls in flight at the kill "
                                f"{row['in_flight']}")
            if not row["table_equal"] or not row["stats_equal"]:
                problems.append(f"{name} #{index} ({at}): table equal {row['table_equal']}, "
                                f"stats equal {row['stats_equal']}")
    return problems


# ---------------------------------------------------------------- 2. 429 / 500

def fault_schedule(rate: float, seed: int):
    """Seeded by request index: ``rate`` of the requests get 429 + Retry-After 1, 429 or 500."""
    def faults(index: int, _request: dict) -> str:
        digest = hashlib.sha256(f"{seed}|{index}".encode()).digest()
        if int.from_bytes(digest[:4], "big") / 2**32 >= rate:
            return "ok"
        return ("429:retry-after=1", "429", "500")[digest[4] % 3]
    return faults


def status_section(work: Path, inputs, latency: float, reference: dict, seed: int) -> list[str]:
    problems: list[str] = []
    print("\n2. Injected 429 / 500 (a third 429 + Retry-After: 1, a third 429, a third 500), "
          "then the same command on the healed server")
    print(f"{'rate':>5} {'attempts':>8} {'wall s':>7} {'requests':>8} {'gen failed':>10} "
          f"{'lab failed':>10} {'exit':>4} | {'2nd exit':>8} {'2nd gen paid':>12} "
          f"{'2nd lab paid':>12} {'table=':>6}  error line")
    for rate in (0.2, 0.5):
        for attempts in (None, 2):
            label = f"rate{int(rate * 100)}-a{attempts or 6}"
            run_dir = work / label
            extra = ["--attempts", str(attempts)] if attempts else []
            with LoopbackServer(responder=Recorder(), latency_s=latency,
                                faults=fault_schedule(rate, seed)) as server:
                code, err, wall = run(audit_command(server, inputs, run_dir, extra))
                sent = len(server.requests)
                gen_failed, lab_failed = failures_in(run_dir)
                server.faults = None
                before_g, _ = counts(server, "G")
                before_l, _ = counts(server, "L")
                code2, err2, _ = run(audit_command(server, inputs, run_dir, extra))
                paid_g = counts(server, "G")[0] - before_g
                paid_l = counts(server, "L")[0] - before_l
            equal = drift_table(run_dir) == reference["table"]
            print(f"{rate:>5.0%} {attempts or 6:>8} {wall:>7.1f} {sent:>8} {gen_failed:>10} "
                  f"{lab_failed:>10} {code:>4} | {code2:>8} {paid_g:>12} {paid_l:>12} "
                  f"{str(equal):>6}  {clip(error_line(err), 150) if code else ''}", flush=True)
            if code not in (0, 3, 4):
                problems.append(f"{label}: exit {code}: {error_line(err)}")
            if code == 0 and (gen_failed or lab_failed):
                problems.append(f"{label}: exit 0 with {gen_failed} failed generation calls and "
                                f"{lab_failed} failed label calls stored")
            if code2 != 0 or not equal:
                problems.append(f"{label}: second run on the healed server exited {code2}, table "
                                f"equal {equal} ({error_line(err2) if code2 else ''})")
    return problems


# ---------------------------------------------------------------- 3. misbehaving servers

def servers_section(work: Path, inputs) -> list[str]:
    problems: list[str] = []
    print("\n3. Misbehaving servers, --timeout 1 --attempts 2")
    print(f"{'server':12} {'wall s':>7} {'1st req':>7} {'requests':>8} {'exit':>4}  error line"
          "   (1st req = seconds from start to the first request: imports, manifest)")
    cases = [("never answers", "hang", 4), ("trickles", "trickle:0.5", 4),
             ("closes", "close", 4), ("resets", "reset", 4), ("401 always", "401", 2)]
    for name, fault, expected in cases:
        with LoopbackServer(responder=Recorder(), faults=lambda i, b, f=fault: f,
                            hang_s=60) as server:
            began = time.monotonic()
            code, err, wall = run(audit_command(server, inputs, work / fault.split(":")[0],
                                                ["--timeout", "1", "--attempts", "2"]))
            sent = len(server.requests)
            first = server.requests[0].received_at - began if server.requests else float("nan")
        print(f"{name:12} {wall:>7.1f} {first:>7.1f} {sent:>8} {code:>4}  "
              f"{clip(error_line(err), 230)}",
              flush=True)
        if code != expected:
            problems.append(f"{name}: exit {code}, expected {expected}: {error_line(err)}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=12, help="8 generation calls each")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--sigints", type=int, default=5)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--skip", default="", help="sections to skip, e.g. '2,3'")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    began = time.monotonic()
    print(f"machine: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; python {sys.version.split()[0]}; "
          f"audit: {args.questions} questions x 8 calls, latency {args.latency} s, concurrency 4, "
          f"seed {args.seed}")
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="memlens-faults-") as tmp:
        work = Path(tmp)
        inputs = write_inputs(work, args.questions)
        reference = reference_run(work, inputs, args.latency)
        if "1" not in skip:
            problems += kills_section(work, inputs, args.latency, reference, args.kills,
                                      args.sigints, args.seed)
        if "2" not in skip:
            problems += status_section(work, inputs, args.latency, reference, args.seed)
        if "3" not in skip:
            problems += servers_section(work, inputs)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}; benchmark {time.monotonic() - began:.0f} s")
    print("not as documented:" if problems else "everything as documented")
    for problem in problems:
        print("  - " + problem)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
