"""Where a ``python -m app build`` spends its wall time against its CPU time (issue 23: the full Adult store).

:func:`run` starts the build and watches its process tree until it exits: every :data:`INTERVAL_S` seconds, each
process's CPU seconds (user + system) and whether any of its threads is runnable (state ``R`` in
``/proc/PID/task/*/stat``: computing, or waiting for a core); and each progress line the build prints on its
standard error (``candor: build: WHAT DONE/TOTAL``), with its time. :func:`parts` then cuts the run at those lines
into the build's parts (start-up, rows, after the rows, row panels, the end) and gives, for each one and per process
(the build's own process, each Dask worker), the CPU seconds and the share of samples in which it was runnable. A
process that is not runnable waits: a worker waiting for a task is idle whatever the machine's load, which the CPU
share alone cannot tell on a shared machine.

The quiet wall time of a part is projected from the CPU each process did in each interval: on a quiet machine with
:data:`CORES` cores, that work takes at least the larger of its CPU seconds over the cores and the CPU seconds of its
busiest process (each computes on one thread); summed over the intervals. It assumes nothing waits for anything but
a core within an interval (a worker waiting for its task's data, the build waiting for a file, show no CPU and are
not counted).
"""
from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import psutil

INTERVAL_S = 0.5
"""Seconds between two samples of the process tree."""
CORES = 2
"""The cores of the quiet machine the projection is for (this machine's)."""
PROGRESS = re.compile(r"^candor: build: (.*) (\d+)/(\d+)$")


def _runnable(pid: int) -> bool:
    """Whether any thread of ``pid`` is in state R (running or waiting for a core)."""
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the thread ended meanwhile
            continue
        if text[text.rfind(")") + 2:].startswith("R"):
            return True
    return False


def _role(proc: psutil.Process, root: int, roles: dict) -> str:
    """``build`` (the build's process), ``worker N`` (a Dask worker: multiprocessing's spawned child, numbered in
    the order they appear) or ``other``."""
    if proc.pid not in roles:
        try:
            spawned = "spawn_main" in " ".join(proc.cmdline())
        except psutil.Error:
            spawned = False
        workers = sum(r.startswith("worker") for r in roles.values())
        roles[proc.pid] = "build" if proc.pid == root else f"worker {workers + 1}" if spawned else "other"
    return roles[proc.pid]


def _sample(root: int, roles: dict) -> dict[str, tuple[float, bool]]:
    """Each process of the tree under ``root``: (CPU seconds so far, runnable now), by role."""
    out = {}
    try:
        procs = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
    except psutil.Error:
        return out
    for p in procs:
        try:
            cpu = sum(p.cpu_times()[:2])
        except psutil.Error:
            continue
        role = _role(p, root, roles)
        if role == "other":
            continue
        out[role] = (cpu, _runnable(p.pid))
    return out


def run(cmd: list[str], *, cwd, env: dict, log_path: Path) -> dict:
    """Run the build ``cmd``, its progress lines written to ``log_path`` with their seconds since the start; return
    :func:`parts` of the run.

    Raises
    ------
    subprocess.CalledProcessError
        If the build exits with another status than 0 (its log says why).
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []

    def read():
        with open(log_path, "w") as log:
            for line in proc.stderr:
                t = time.perf_counter() - t0
                lines.append((t, line.rstrip("\n")))
                log.write(f"{t:9.2f} {line}")
                log.flush()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples, roles, loads = [], {}, []
    while proc.poll() is None:
        samples.append((time.perf_counter() - t0, _sample(proc.pid, roles)))
        loads.append(float(Path("/proc/loadavg").read_text().split()[0]))
        time.sleep(INTERVAL_S)
    end = time.perf_counter() - t0
    reader.join()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return {"interval_s": INTERVAL_S, "load_1min": [min(loads, default=None), max(loads, default=None)],
            "parts": parts(samples, lines, end)}


def _milestones(lines: list[tuple[float, str]], end: float) -> list[tuple[str, float]]:
    """``(part, its end)`` in order: the build's parts as its progress lines show them."""
    rows = [(t, int(m[2]), int(m[3])) for t, line in lines if (m := PROGRESS.match(line)) and m[1].startswith("rows")]
    panels = [t for t, line in lines if (m := PROGRESS.match(line)) and "row panels" in m[1]]
    marks = []
    if rows:
        marks.append(("start-up", rows[0][0]))
        marks.append(("rows", next((t for t, done, total in rows if done == total), rows[-1][0])))
    if panels:
        marks.append(("after the rows", panels[0]))
        marks.append(("row panels", panels[-1]))
    marks.append(("end", end))
    return marks


def parts(samples: list[tuple[float, dict]], lines: list[tuple[float, str]], end: float) -> list[dict]:
    """Each part's wall seconds, projected quiet seconds (module docstring), CPU seconds and runnable share by process,
    and a last entry ``all`` over the whole run.

    Parameters
    ----------
    samples : list of (float, dict)
        ``(seconds since the start, {role: (CPU seconds so far, runnable)})``, in time order.
    lines : list of (float, str)
        The build's standard error lines with their seconds since the start.
    end : float
        Seconds from the start to the build's exit.
    """
    bounds, start = [], 0.0
    for name, stop in _milestones(lines, end):
        bounds.append((name, start, stop))
        start = stop
    bounds.append(("all", 0.0, end))
    out = []
    for name, start, stop in bounds:
        cpu, runnable, seen, projected = {}, {}, {}, 0.0
        previous: dict = {}
        for t, now in samples:
            inside = start < t <= stop
            deltas = {role: c - previous.get(role, (0.0, False))[0] for role, (c, _) in now.items()}
            previous = now
            if not inside:
                continue
            for role, d in deltas.items():
                cpu[role] = cpu.get(role, 0.0) + d
                seen[role] = seen.get(role, 0) + 1
                runnable[role] = runnable.get(role, 0) + now[role][1]
            projected += max(sum(deltas.values()) / CORES, max(deltas.values(), default=0.0))
        out.append({"part": name, "wall_s": round(stop - start, 1), "projected_quiet_s": round(projected, 2),
                    "cpu_s": {r: round(c, 1) for r, c in sorted(cpu.items())},
                    "runnable": {r: round(runnable[r] / seen[r], 2) for r in sorted(seen)}})
    return out


def table(timeline: dict) -> str:
    """The parts as printed lines."""
    lines = [f"  build timeline (sampled every {timeline['interval_s']} s, 1-min load "
             f"{timeline['load_1min'][0]}-{timeline['load_1min'][1]}): part, wall s, projected quiet s, "
             "CPU s and runnable share by process"]
    for p in timeline["parts"]:
        by = ", ".join(f"{r} {c} ({p['runnable'].get(r, 0):.0%})" for r, c in p["cpu_s"].items())
        lines.append(f"  {p['part']:<15} {p['wall_s']:>7} {p['projected_quiet_s']:>7} | {by}")
    return "\n".join(lines)
