"""A store built in a test module, with the services put back afterwards (the one home of that fixture's body)."""
from __future__ import annotations

import contextlib
from pathlib import Path

from workspace.settings import Settings


@contextlib.contextmanager
def built_sample_store(folder: Path, settings: Settings | None = None, **build_kwargs):
    """``python -m app build`` of ``settings`` (default: the bundled sample, caches in ``folder``) into
    ``folder / "store"``; yields ``(manifest, workspace, store folder)``. Afterwards no store is in use and the
    workspace installed before is installed again."""
    from app import services
    from app.cli.build import build

    settings = settings or Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state")
    previous = services.state().workspace
    manifest = build(settings, folder / "store", **build_kwargs)
    try:
        yield manifest, services.workspace(), folder / "store"
    finally:
        services.use_built_store(None)
        if previous is not None:
            services.init(previous, warm=False)
