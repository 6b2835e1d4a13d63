"""Memory the server freed goes back to the system only when it is idle (issue 14: the server's resident memory).

``malloc_trim`` takes 10-40 ms and holds malloc's locks, so it must never run while a request is in flight, and
must run once the server has been idle for ``IDLE_S``. Oracle: the calls counted on a stand-in for
:func:`workspace.limits.trim_heap`, and glibc's own answers for the real functions.
"""
import ctypes.util
import threading
import time

import pytest

from app.serve import server
from workspace import limits


@pytest.fixture
def trims(monkeypatch):
    calls = []
    monkeypatch.setattr(limits, "trim_heap", lambda: calls.append(time.monotonic()) or True)
    idle = server._IdleTrim()
    idle.IDLE_S = 0.2
    threading.Thread(target=idle.run, daemon=True).start()
    return idle, calls


def test_trims_once_idle_and_never_while_a_request_is_in_flight(trims):
    idle, calls = trims
    idle.begin()
    time.sleep(0.6)
    assert calls == []  # nothing ended yet: no trim while the request runs
    idle.begin()
    idle.end()
    time.sleep(0.6)
    assert calls == []  # one request still in flight
    idle.end()
    ended = time.monotonic()
    time.sleep(0.8)
    assert len(calls) == 1 and calls[0] - ended >= 0.2  # once, after IDLE_S of quiet
    time.sleep(0.4)
    assert len(calls) == 1  # nothing new happened: no second trim


@pytest.mark.skipif(ctypes.util.find_library("c") is None, reason="no C library found")
def test_glibc_takes_the_arena_limit_and_the_trim():
    assert limits.limit_heap_arenas(2) is True  # mallopt returns 1 on success
    assert isinstance(limits.trim_heap(), bool)


def test_giving_memory_back_starts_no_process(monkeypatch):
    """The C library is found without a child process (``ctypes.util.find_library`` runs ``ldconfig``): the server
    trims after every warm-up step and whenever idle, and each child began as a copy of the whole server, which a
    benchmark summing the process tree's ``VmHWM`` counted twice (issue 23). Oracle: any process start raises."""
    import subprocess

    def no_process(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[1:2]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    getattr(limits._libc, "cache_clear", lambda: None)()  # looked up afresh, as a new server does
    assert limits.limit_heap_arenas(2) is True
    assert isinstance(limits.trim_heap(), bool)


_MAPPED = """
import ctypes, sys
import numpy as np
from workspace import limits

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = limits._libc()
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "fixed":
    assert limits.map_large_blocks() is True
large = np.ones(16 * 2**20 // 8)
del large  # glibc's own threshold would now be 16 MB
before = libc.mallinfo2().hblkhd
block = np.ones(4 * 2**20 // 8)
print(libc.mallinfo2().hblkhd - before, block.nbytes)
"""


@pytest.mark.skipif(not hasattr(limits._libc(), "mallinfo2"), reason="not glibc 2.33 or later")
def test_a_large_array_is_given_back_when_freed_even_after_a_larger_one():
    """With the threshold fixed, a freed array of a few MB goes back to the system at once (its own mapping), even after
    a larger array was freed, which would have raised glibc's own threshold above it and left the next arrays of its
    size in the arenas (a request thread's arena kept LIME's neighbourhoods: 376 -> 420 MB over five rows, issue 23).
    Oracle: glibc's ``mallinfo2().hblkhd``, the bytes malloc holds in mappings of their own, read in a fresh process
    (in a process that has run other tests, a free chunk already in an arena can serve the array whatever the
    threshold). Without the fixed threshold the same process maps nothing for it."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def mapped(mode):
        out = subprocess.run([sys.executable, "-c", _MAPPED, mode], cwd=root, capture_output=True, text=True, check=True)
        return [int(v) for v in out.stdout.split()]

    grown, size = mapped("fixed")
    assert grown >= size  # a mapping of its own, unmapped when freed
    grown, size = mapped("glibc")
    assert grown < size  # glibc's own threshold, raised to 16 MB by the freed array, kept it in the arena
