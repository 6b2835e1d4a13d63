"""Chunked, resumable per-row computation: in this process or on a Dask cluster.

``run_chunks(task, n_rows, chunk_rows=..., out_dir=...)`` cuts ``range(n_rows)`` into chunks, runs
``task(start, stop)`` on each one that is not on disk yet, writes each finished chunk atomically to
``out_dir/chunks/{start:09d}-{stop:09d}.npz`` and returns every array concatenated in row order.
A build killed halfway (the process, the machine, a Dask worker) is rerun with the same arguments
and computes only the chunks that are missing.

The chunks are written by the process that calls ``run_chunks`` (Dask workers return arrays), so a
remote cluster needs no file system shared with the caller. Dask is imported only when a client is
given or made (``store/cluster.py::client_from_address``, which says who may be one); the single-process path needs numpy only.
"""
from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from workspace.errors import CandorError

Task = Callable[[int, int], Mapping[str, np.ndarray]]
Progress = Callable[[int, int], None]

CHUNK_NAME = re.compile(r"^(\d{9})-(\d{9})\.npz$")


def chunk_bounds(n_rows: int, chunk_rows: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(n_rows)`` in chunks of ``chunk_rows`` (the last may be shorter).

    Raises
    ------
    CandorError
        If ``n_rows`` is negative or ``chunk_rows`` is not positive.
    """
    if n_rows < 0 or chunk_rows < 1:
        raise CandorError(f"chunks need n_rows >= 0 and chunk_rows >= 1, got {n_rows} and {chunk_rows}")
    return [(s, min(s + chunk_rows, n_rows)) for s in range(0, n_rows, chunk_rows)]


def chunk_path(out_dir: Path | str, start: int, stop: int) -> Path:
    """Where the chunk ``[start, stop)`` of a run in ``out_dir`` is written."""
    return Path(out_dir) / "chunks" / f"{start:09d}-{stop:09d}.npz"


def _checked(arrays, start: int, stop: int) -> dict[str, np.ndarray]:
    """The task's result as plain arrays, each with ``stop - start`` rows; a one-line error otherwise."""
    if not isinstance(arrays, Mapping) or not arrays:
        raise CandorError(f"chunk {start}-{stop}: the task returned {type(arrays).__name__}, "
                          "not a non-empty dict of arrays")
    out = {}
    for name, value in arrays.items():
        a = np.asarray(value)
        if not isinstance(name, str) or not name.isidentifier():
            raise CandorError(f"chunk {start}-{stop}: array name {name!r} is not an identifier")
        if a.dtype.hasobject:
            raise CandorError(f"chunk {start}-{stop}: array {name!r} holds Python objects; "
                              "chunks store numbers and fixed-width strings only")
        if a.ndim == 0 or a.shape[0] != stop - start:
            raise CandorError(f"chunk {start}-{stop}: array {name!r} has shape {a.shape}, "
                              f"expected {stop - start} rows first")
        out[name] = a
    return out


def _write_atomically(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` to a temporary file beside ``path``, then rename it: a reader sees all of it or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _read(path: Path, start: int, stop: int) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise CandorError(f"chunk file {path} cannot be read ({exc}); delete it to recompute it") from None
    return _checked(arrays, start, stop)


def _layout(path: Path, start: int, stop: int) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each array's shape and dtype in the chunk file ``path``, from its ``.npy`` headers (no data read)."""
    out = {}
    try:
        with zipfile.ZipFile(path) as zf:
            for member in zf.namelist():
                with zf.open(member) as f:
                    version = np.lib.format.read_magic(f)
                    if version not in ((1, 0), (2, 0)):
                        raise ValueError(f".npy format version {version}")
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(f)
                out[member.removesuffix(".npy")] = (tuple(shape), np.dtype(dtype))
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise CandorError(f"chunk file {path} cannot be read ({exc}); delete it to recompute it") from None
    return out


def _gather(out_dir: Path | str, bounds, n_rows: int) -> dict[str, np.ndarray]:
    """The chunks on disk in row order, each name in one array filled chunk by chunk.

    The arrays are allocated once from the chunks' headers (dtype: ``numpy.result_type`` of the chunks',
    as ``numpy.concatenate`` gives), then each chunk is read and copied in: peak memory is the result
    plus one chunk, not the result twice (all chunks, then their concatenation)."""
    if not bounds:
        return {}
    layouts = [_layout(chunk_path(out_dir, *b), *b) for b in bounds]
    first = layouts[0]
    for layout, (start, stop) in zip(layouts, bounds):
        if set(layout) != set(first):
            raise CandorError(f"chunk {start}-{stop} holds arrays {sorted(layout)}, the first chunk "
                              f"{sorted(first)}: the chunks on disk come from different tasks")
        for k, (shape, _) in layout.items():
            if shape[1:] != first[k][0][1:]:
                raise CandorError(f"chunks do not stack (array {k!r}: {shape} in chunk {start}-{stop}, "
                                  f"{first[k][0]} in the first): the chunks on disk come from different tasks")
    out = {k: np.empty((n_rows, *shape[1:]), dtype=np.result_type(*(layout[k][1] for layout in layouts)))
           for k, (shape, _) in first.items()}
    for (start, stop), layout in zip(bounds, layouts):
        part = _read(chunk_path(out_dir, start, stop), start, stop)
        if {k: (a.shape, a.dtype) for k, a in part.items()} != layout:  # the file changed since its header was read
            raise CandorError(f"chunk file {chunk_path(out_dir, start, stop)} changed while being read; rerun the build")
        for k, a in part.items():
            out[k][start:stop] = a
    return out


def run_chunks(task: Task, n_rows: int, *, chunk_rows: int, out_dir: Path | str, client=None,
               progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Run ``task`` over ``range(n_rows)`` in chunks, resumably, and return the results in row order.

    Parameters
    ----------
    task : callable ``(start, stop) -> dict[str, numpy.ndarray]``
        Computes rows ``start:stop``; every array's first axis has ``stop - start`` rows, and every
        chunk returns the same names. It must be deterministic for reruns and Dask to give the same
        result as one uninterrupted run (seed from ``start``, not from a global generator). With a
        Dask client it is pickled (cloudpickle) to the workers.
    n_rows : int
        Number of rows.
    chunk_rows : int
        Rows per chunk (the last chunk may be shorter). A rerun must use the same value to reuse chunks.
    out_dir : path
        The run's directory; chunks go to ``out_dir/chunks/{start:09d}-{stop:09d}.npz``. A chunk
        found there is not computed again: the caller keeps one directory per (model, data, task).
    client : dask.distributed.Client, optional
        ``None`` runs the chunks here, one after another. A client runs each missing chunk as a
        Dask task; a task whose worker dies is rerun elsewhere by the scheduler (up to its
        ``allowed-failures``), and the chunks are written here as they arrive.
    progress : callable ``(done_rows, total_rows)``, optional
        Called once at the start (with the rows already on disk) and after each chunk.

    Returns
    -------
    dict of str to numpy.ndarray
        Each name's chunks concatenated along the first axis (``n_rows`` rows); ``{}`` if ``n_rows`` is 0.
        They are read from disk into arrays allocated once: the peak memory is the result plus one chunk.

    Raises
    ------
    CandorError
        On a malformed task result or an unreadable or inconsistent chunk on disk. An exception of
        ``task`` itself propagates unchanged, after the chunks finished before it are written.
    """
    bounds = chunk_bounds(n_rows, chunk_rows)
    (Path(out_dir) / "chunks").mkdir(parents=True, exist_ok=True)
    todo = [b for b in bounds if not chunk_path(out_dir, *b).exists()]
    done_rows = n_rows - sum(stop - start for start, stop in todo)
    if progress is not None:
        progress(done_rows, n_rows)
    for (start, stop), arrays in each_chunk(task, todo, client):
        _write_atomically(chunk_path(out_dir, start, stop), _checked(arrays, start, stop))
        done_rows += stop - start
        if progress is not None:
            progress(done_rows, n_rows)
    return _gather(out_dir, bounds, n_rows)


def each_chunk(task: Callable, todo: list[tuple[int, int]], client=None):
    """Yield ``((start, stop), task(start, stop))`` for each bounds of ``todo``: in this process in order, or as the
    Dask tasks of ``client`` finish (the task shipped to the cluster once; the rest cancelled if one fails).

    What :func:`run_chunks` runs its chunks with, and the build's other work shared out to the same workers (the
    row panels, ``app/cli/build_panels.py``), whose results are not arrays.
    """
    return _in_process(task, todo) if client is None else _on_dask(client, task, todo)


def _in_process(task: Task, todo):
    for start, stop in todo:
        yield (start, stop), task(start, stop)


def _on_dask(client, task: Task, todo):
    """Yield ``((start, stop), arrays)`` as the Dask tasks finish; cancel the rest if one fails."""
    from distributed import as_completed

    if not todo:
        return
    # The task (a model and its data) goes to the cluster once, not with every chunk. It is a computed
    # value, not scattered data: the scheduler keeps its recipe, so if the worker holding it dies the
    # task is rebuilt on another worker (scattered data would be lost with that worker).
    run = os.urandom(4).hex()
    shipped = client.submit(_identity, task, pure=False, key=f"candor-task-{run}")
    futures = {client.submit(_call, shipped, start, stop, pure=False,
                             key=f"candor-chunk-{run}-{start:09d}-{stop:09d}"): (start, stop)
               for start, stop in todo}
    try:
        # on the client's own loop: as_completed otherwise takes the default client's (the newest in the process),
        # and a future a killed worker lost waits on an event of the other loop ("bound to a different event loop")
        for future in as_completed(futures, loop=client.loop):
            arrays = future.result()
            bounds = futures.pop(future)
            future.release()
            yield bounds, arrays
    finally:
        if futures:
            client.cancel(list(futures))
        shipped.release()


def _identity(task: Task) -> Task:
    return task


def _call(task: Task, start: int, stop: int):
    return task(start, stop)
