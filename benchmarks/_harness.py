"""Shared helpers of the benchmarks: subprocess measurements, machine info, Markdown."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKER = HERE / "_worker.py"
RESULTS_DIR = HERE / "results"
MIB = 1024.0  # ru_maxrss is in KiB


class WorkerError(RuntimeError):
    pass


def has_module(name: str) -> tuple[bool, str]:
    """Whether ``name`` imports in the benchmark interpreter (checked in a subprocess)."""
    p = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True)
    if p.returncode == 0:
        return True, ""
    lines = p.stderr.strip().splitlines()
    return False, lines[-1] if lines else f"exit {p.returncode}"


def run_worker(task: str, lib: str, qrels: Path, run: Path, *, warmup: bool = False,
               fresh_numba_cache: bool = False, timeout: float = 3600) -> dict:
    """One measurement in a fresh interpreter; returns the worker's JSON."""
    cmd = [sys.executable, str(WORKER), task, lib, str(qrels), str(run)]
    if warmup:
        cmd.append("--warmup")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    tmp = None
    if fresh_numba_cache:  # numba's on-disk cache would hide the JIT compile time
        tmp = tempfile.TemporaryDirectory(prefix="numba-cache-")
        env["NUMBA_CACHE_DIR"] = tmp.name
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                           cwd=ROOT)
    finally:
        if tmp is not None:
            tmp.cleanup()
    if p.returncode != 0:
        raise WorkerError(f"{lib} {task} failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def best_of(samples: list[dict]) -> dict:
    """The fastest sample (by total time); peak memory is the largest over samples."""
    best = dict(min(samples, key=lambda s: s["times"]["total"]))
    best["peak"] = max(s["peak"] for s in samples)
    best["base"] = min(s["base"] for s in samples)
    best["n"] = len(samples)
    best["all_totals"] = [s["times"]["total"] for s in samples]
    return best


def warm_page_cache(*paths: Path) -> None:
    """Read the files once so every library starts from the page cache."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kib / 1024 ** 2:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    versions = {}
    for dist in ("numpy", "pyarrow", "pandas", "pytrec-eval-terrier", "ranx", "numba"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory": mem,
            "python": platform.python_version(), "platform": platform.platform(),
            "versions": versions, "ireval": _git_state()}


def _git_state() -> str:
    """Commit of the checkout and whether ireval_core has uncommitted changes."""
    def git(*args: str) -> str:
        p = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
        return p.stdout.strip() if p.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown"
    dirty = git("status", "--porcelain", "--", "ireval_core")
    return f"commit {head}" + (" + uncommitted changes in ireval_core" if dirty else "")


def machine_markdown(info: dict) -> str:
    v = ", ".join(f"{k} {x}" for k, x in info["versions"].items())
    return (f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory']} RAM, "
            f"Python {info['python']}, {info['platform']}.  \nVersions: {v}.  \n"
            f"ireval: {info.get('ireval', 'unknown')}.")


def md_table(header: list[str], rows: list[list[object]]) -> str:
    def cell(x: object) -> str:
        return "" if x is None else str(x)

    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if i > 1 else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def fmt_s(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def fmt_mib(kib: float | None) -> str:
    return "–" if kib is None else f"{kib / MIB:,.0f}"


def fmt_ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}×"


def load_note(samples: list[dict]) -> str:
    """The 1-minute load average seen at the end of the kept runs (contention hint)."""
    loads = [s["load"] for s in samples if "load" in s]
    if not loads:
        return ""
    return (f"1-min load average at the end of the kept runs: {min(loads):.1f}–{max(loads):.1f} "
            f"on {os.cpu_count()} CPUs.")


def save_json(name: str, data: dict) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(data, indent=1))
    return path


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
