"""Build-then-serve: explanations computed once into a versioned store (Dash-free, beside ``app/``).

A store is a folder: arrays as ``.npy`` (read with ``numpy.load(..., mmap_mode="r", allow_pickle=False)``,
so every server worker shares one copy through the page cache), tables as Parquet, everything else as
JSON, and ``manifest.json`` naming each file with its size and SHA-256, the model's and the data's
SHA-256, the explainers' parameters and seeds, library versions and the creation date. Nothing in a
store is a pickle.

Modules: :mod:`store.format` (version, what each file holds, limits), :mod:`store.hashes`,
:mod:`store.manifest` (reading and checking it), :mod:`store.write` (atomic writes),
:mod:`store.read` (:func:`~store.read.open_store`, :class:`~store.read.Store`), :mod:`store.codec`
(result types to and from arrays and JSON), :mod:`store.engine` (per-row work in chunks, resumable,
single process or Dask). ``python -m app build`` (``app/cli/build.py``) fills a store through the
services' own functions.
"""
