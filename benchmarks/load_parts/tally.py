"""What the viewers of :mod:`benchmarks.load` measured: every request's kind, seconds and outcome, thread-safe."""
from __future__ import annotations

import threading
from collections import Counter, defaultdict

import numpy as np


class Tally:
    """Request times by kind, and errors (non-200 answers and failed connections) with a few examples."""

    def __init__(self):
        self.lock = threading.Lock()
        self.times: dict[tuple[str, str], list[float]] = defaultdict(list)  # (kind, page): seconds
        self.errors: Counter = Counter()
        self.examples: list[str] = []
        self.counting = False  # requests before the timed window (logins, first pages) are not counted

    def record(self, kind: str, page: str, seconds: float, ok: bool, detail: str = "") -> None:
        with self.lock:
            if not self.counting:
                return
            self.times[kind, page].append(seconds)
            if not ok:
                self.errors[kind] += 1
                if len(self.examples) < 5:
                    self.examples.append(f"{kind}: {detail}")

    def count(self) -> int:
        return sum(len(v) for v in self.times.values())

    def summary(self) -> dict:
        """``{kind: {"n", "p50_ms", "p95_ms", "max_ms"}}``, plus ``"row change"`` (both row kinds), ``"all"`` and
        ``"row change <page>"`` for each page."""
        kinds: dict[str, list[float]] = defaultdict(list)
        for (kind, page), seconds in self.times.items():
            kinds[kind] += seconds
            kinds["all"] += seconds
            if kind.startswith("row"):
                kinds["row change"] += seconds
                kinds[f"row change {page}"] += seconds
        out = {}
        for kind, seconds in kinds.items():
            if seconds:
                ms = np.asarray(seconds) * 1000
                out[kind] = {"n": len(ms), "p50_ms": round(float(np.percentile(ms, 50)), 1),
                             "p95_ms": round(float(np.percentile(ms, 95)), 1), "max_ms": round(float(ms.max()), 1)}
        return out
