"""Resource limits of one Candor server, each from an environment variable, read when used.

==================================  =======  =========================================================
variable                            default  what it bounds
==================================  =======  =========================================================
``CANDOR_MAX_UPLOAD_MB``            50       one uploaded file (the request body may be 4/3 of it + 1 MiB)
``CANDOR_UPLOAD_QUOTA_MB``          500      all files in one upload folder together
``CANDOR_UPLOAD_RETENTION_HOURS``   24       age after which an upload not in use is deleted
``CANDOR_MAX_CELLS``                20e6     rows x columns of a table, and rows x features of model input
``CANDOR_MAX_TABLE_MB``             2048     estimated memory of a loaded table
``CANDOR_MAX_MEMORY_MB``            8192     a process's private writable memory (RLIMIT_DATA); 0: no limit
``CANDOR_MODEL_TIMEOUT_S``          120      one model call (checked between batches of rows)
``CANDOR_MAX_JOBS``                 4        background jobs running at once on the server
``CANDOR_MAX_JOBS_PER_USER``        2        background jobs running at once for one user
==================================  =======  =========================================================

A value that is not a positive number is an error that names the variable (the server refuses to start).
"""
from __future__ import annotations

import functools
import logging

from .errors import CandorError
from .settings import current

log = logging.getLogger(__name__)


def setting(name: str) -> float:
    """The value of limit ``name`` (one of the variables above), from :func:`workspace.settings.current`.

    Raises
    ------
    CandorError
        If the variable is set to something that is not a positive number (0 is allowed where it means "off").
    """
    return current().limit(name)


def mib(name: str) -> int:
    """A ``*_MB`` limit in bytes."""
    return int(setting(name) * 2**20)


def max_request_bytes() -> int:
    """The largest request body the server reads: one upload as base64 (4/3 of its bytes) in Dash's JSON, + 1 MiB."""
    return -(-mib("CANDOR_MAX_UPLOAD_MB") * 4 // 3) + 2**20


def too_large_message() -> str:
    """The one line a request over :func:`max_request_bytes` is refused with (HTTP 413), naming the setting."""
    from explainers.numbers import plain

    return (f"candor: error: the request is larger than the {plain(setting('CANDOR_MAX_UPLOAD_MB'), trim=True)} MiB "
            "upload limit (CANDOR_MAX_UPLOAD_MB)")


def check_cells(rows: int, columns: int, what: str) -> None:
    """Refuse ``rows x columns`` cells over ``CANDOR_MAX_CELLS``.

    Raises
    ------
    CandorError
        Naming ``what``, the numbers, the limit and how to raise it.
    """
    limit = int(setting("CANDOR_MAX_CELLS"))
    if rows * columns > limit:
        raise CandorError(f"{what}: {rows:,} rows x {columns:,} columns = {rows * columns:,} cells is over the limit "
                          f"of {limit:,} cells (CANDOR_MAX_CELLS; an operator can raise it)")


def apply_memory_ceiling() -> int | None:
    """Cap this process's private writable memory at ``CANDOR_MAX_MEMORY_MB`` (RLIMIT_DATA); returns the bytes.

    RLIMIT_DATA (Linux 4.7+) counts heap and private anonymous mappings, the memory an oversized table or
    model input takes, but not the shared libraries or the address-space reservations (torch, OpenBLAS)
    that make RLIMIT_AS unusable. Past the ceiling an allocation fails (``MemoryError`` in NumPy and
    pandas), the request fails and the process keeps serving, instead of the kernel's OOM killer ending
    it. Forked workers and background jobs inherit the cap. A lower hard limit already set is kept.
    """
    import resource

    limit = mib("CANDOR_MAX_MEMORY_MB")
    if not limit:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return soft
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    log.info("candor: memory ceiling %d MiB (RLIMIT_DATA)", limit // 2**20)
    return limit


M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter number for the most malloc arenas (``malloc.h``)."""


@functools.cache
def _libc():
    """The C library the process runs on, opened once (None where it cannot be).

    ``ctypes.CDLL(None)`` reads the symbols the process has loaded, the C library's among them. Never
    ``ctypes.util.find_library``: on Linux it starts ``ldconfig`` in a child process, and the server looked it up
    again on every trim (after each warm-up step, whenever idle): each child began as a copy of the server, and a
    benchmark summing the ``VmHWM`` of the server's process tree (``benchmarks.vs_peer``) counted the server twice
    when it saw one (770 instead of 418 MB on Adult, issue 23).
    """
    import ctypes

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def limit_heap_arenas(arenas: int = 2) -> bool:
    """Let glibc's malloc use at most ``arenas`` arenas (``mallopt(M_ARENA_MAX)``); True if it took effect.

    A threaded server (waitress and gunicorn's gthread workers: a pool of request threads) otherwise spreads allocations over up to
    eight arenas per core, each keeping the memory its threads freed: the resident memory grows with requests,
    not with what is held. Called before the workspace is loaded. A C library without ``mallopt`` (musl,
    macOS) is left as it is.
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, int(arenas)))


M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number for the smallest block malloc maps on its own (``malloc.h``)."""


def map_large_blocks(threshold: int = 2**20) -> bool:
    """Give every block of at least ``threshold`` bytes its own mapping, returned to the system when freed
    (``mallopt(M_MMAP_THRESHOLD)``); True if it took effect.

    glibc raises that threshold to the largest mapped block freed so far (up to 32 MiB): once a 15 MB array of the
    warm-up was freed, a request's arrays of a few MB (LIME's neighbourhoods, a model call's rows) came from the
    arenas and stayed there after the request, in each request thread's arena. Served from the Adult store
    (``benchmarks.vs_peer``'s scenario), five rows the store lacks took the process from 376 to 420 MB; with the
    threshold fixed at 1 MiB, from 370 to 380 MB (peak 397 MB; at 256 KiB 401-408 MB, at 4 MiB 418 MB, issue 23).
    Its cost: a fresh mapping's pages are faulted in, about 16 ms of CPU a row the store lacks on Adult (5 rows:
    0.40-0.43 s against 0.31-0.34 s; 0.47-0.54 s at 256 KiB). Setting it also stops glibc raising it. A C library
    without ``mallopt`` is left as it is.
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, int(threshold)))


def trim_heap() -> bool:
    """Give the memory malloc holds free back to the system (glibc ``malloc_trim(0)``); True if any was.

    Reading a table (the CSV parser's buffers) and the warm-up leave freed memory that malloc keeps for
    reuse: tens of MB on Adult (32,561 x 108). Called once the workspace is loaded and once the warm-up ends.
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    return bool(libc.malloc_trim(0))


@functools.cache
def _model_errors() -> tuple[type, type]:
    """The model-call errors as :class:`CandorError` (one class each per process, so ``except`` and
    ``isinstance`` see the same classes): (took too long, failed)."""
    from explainers.model_adapter import ModelFailed, ModelTimeout

    class ModelTookTooLong(CandorError, ModelTimeout):
        """A model call past ``CANDOR_MODEL_TIMEOUT_S``: a :class:`CandorError`, so every page shows it."""

    class ModelCallFailed(CandorError, ModelFailed):
        """The model raised while predicting: a :class:`CandorError`, so every page shows it in one line."""

    return ModelTookTooLong, ModelCallFailed


def model_call_limits(*, timeout: bool = True):
    """The :class:`~explainers.model_adapter.CallLimits` a workspace's adapter is given (:meth:`Workspace.limited`).

    A model that raises while predicting is a :class:`CandorError` (one line every page and ``check`` show)
    instead of its own exception (a traceback, HTTP 500). With ``timeout`` (the server), each model call gets
    ``CANDOR_MODEL_TIMEOUT_S`` seconds (0: none), checked between batches of rows
    (:mod:`explainers.model_adapter`): a call is stopped at the first batch boundary after its time is up, and a
    single batch is never interrupted; past it the pages show a one-line error. The server's calls also run on one
    OpenMP thread in whichever thread makes them (``CallLimits.openmp_threads``: :func:`one_openmp_thread` reaches
    only the thread that calls it, not the request and warm-up threads). ``check`` and ``build`` pass
    ``timeout=False``: they are not waited on by a page (and keep their own threading).

    Raises
    ------
    CandorError
        If ``CANDOR_MODEL_TIMEOUT_S`` is not a number (named).
    """
    from explainers.model_adapter import CallLimits

    took_too_long, failed = _model_errors()
    seconds = (setting("CANDOR_MODEL_TIMEOUT_S") or None) if timeout else None
    return CallLimits(seconds=seconds, timeout=took_too_long, failed=failed, openmp_threads=1 if timeout else None)


def one_openmp_thread() -> None:
    """Limit every OpenMP runtime loaded so far (scikit-learn's HistGradientBoosting, LightGBM) to one thread.

    Request threads and workers already share the cores, and oversubscribed OpenMP pools stall (as torch's,
    ENVIRONMENT-NOTES). threadpoolctl acts only on libraries loaded at the call, so a server calls this after its
    model is loaded (its libraries are then loaded), not before: scikit-learn is imported at that load, not at the
    server's start (issue 23). OpenMP's limit is per thread: this sets the calling thread's; the server's request
    and warm-up threads get theirs through the adapter's :func:`model_call_limits` (``openmp_threads=1``).
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="openmp")

