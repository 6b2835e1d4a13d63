"""Study mode: user studies of explanation trust (docs/methods.md, "Study mode").

A top-level package beside ``app/`` and Dash-free: nothing here imports ``dash``, ``flask``,
``plotly`` or anything from ``app/`` (tests/test_boundaries.py checks), so the CLI, the database
layer and the analysis run without the web stack. The Dash pages and callbacks of study mode
stay in ``app/`` (``app/pages/study.py``, ``app/pages/researcher.py``, ``app/callbacks/study*.py``).
Modules: :mod:`.schema` (study files), :mod:`.instruments`, :mod:`.randomisation`,
:mod:`.models` and :mod:`.db` (SQLAlchemy + Alembic), :mod:`.analysis`,
:mod:`.export`, :mod:`.cli`.
"""
