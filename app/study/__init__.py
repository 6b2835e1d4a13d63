"""Study mode: user studies of explanation trust (METHODS §5).

Dash-free: nothing here imports ``dash`` or the rest of ``app/`` at import time,
so the CLI, the database layer and the analysis run without the web stack.
Modules: :mod:`.schema` (study files), :mod:`.instruments`, :mod:`.randomisation`,
:mod:`.models` and :mod:`.db` (SQLAlchemy + Alembic), :mod:`.analysis`,
:mod:`.export`, :mod:`.cli`.
"""
