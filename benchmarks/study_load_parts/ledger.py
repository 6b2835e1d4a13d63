"""What the simulated participants of :mod:`benchmarks.study_load` sent and saw: each submission and its fate,
and the ledger their threads share (latencies, failures, resends, tokens, completion codes)."""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Submission:
    """One answer sent: which participant (token), step and phase, the answer, and its fate."""

    token: str | None
    step: object
    phase: str
    kind: str
    answers: dict
    rows: int
    acked: bool = False
    error: str = ""


@dataclass
class Ledger:
    """Everything the participants saw, shared between their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: list = field(default_factory=list)        # (kind, seconds)
    failures: Counter = field(default_factory=Counter)  # request kind / error -> count
    resent: Counter = field(default_factory=Counter)    # request kind -> resends after a dropped keep-alive
    submissions: list = field(default_factory=list)
    sent_rows: int = 0
    acked_rows: int = 0
    tokens: dict = field(default_factory=dict)         # participant number -> token
    codes: dict = field(default_factory=dict)          # participant number -> completion code
    reloads: int = 0
    in_flight: int = 0
    saving: int = 0                # submissions answered "being saved" (database unreachable) and re-sent
    waiting_screens: int = 0       # step screens answered "one moment" (database unreachable) and rendered again
    participant_errors: int = 0    # error sentences shown for an answer, "being saved" aside

    def add(self, sub: Submission) -> None:
        with self.lock:
            self.submissions.append(sub)
            self.sent_rows += sub.rows

    def ack(self, sub: Submission) -> None:
        with self.lock:
            sub.acked = True
            self.acked_rows += sub.rows
