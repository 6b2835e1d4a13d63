"""Files and settings, Dash-free: model and data files, uploads, limits, settings -> one Workspace.

Modules
-------
settings      :class:`~workspace.settings.Settings`, every ``CANDOR_*`` variable read once
errors        :class:`~workspace.errors.CandorError` (one-line messages) and ``first_line``
model_files   ``load_model``: the model-file trust rule (skops reviewed types; pickle/TorchScript only trusted)
model_safety  the skops type allowlist and archive size checks
model_structures  a loaded model's tree node arrays checked, neighbour search trees rebuilt
import_hooks  a library module patched as it is imported (``AfterImport``)
torch_files   PyTorch state dicts, safetensors and TorchScript (``TorchOptions``)
tables        ``read_table``: CSV/TSV/Parquet within the cell and memory limits
columns       ``feature_columns``, ``encode_target``
smoke         run the model on a few rows before serving it
workspace     ``Workspace``, ``load_pair``, ``load_user_workspace``, ``one_vs_rest``, ``load_sample_workspace``
uploads       stored uploads, their index, quota and retention
limits        resource limits (``CANDOR_MAX_*``), the memory ceiling and the model-call timeout
json_cache    ``json_cache``: on-disk caches that hold JSON only (``JSONOnlyDisk``, never unpickles a row)

Nothing here imports dash, flask or plotly (``tests/test_boundaries.py`` checks).
"""
