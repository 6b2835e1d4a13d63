"""A Celery worker's entry point for background jobs: ``celery -A app.serve.celery_worker:celery worker``.

With ``CANDOR_REDIS_URL`` set (and the same ``CANDOR_*`` settings as the web server: model, data,
target, store), the worker builds the same Dash app, which registers every background callback as a
Celery task of the same name, and exposes its Celery app as ``celery``. The worker does not warm up
(``CANDOR_WARM`` is ignored): its prefork pool forks right after this import, and a fork while the
warm-up thread holds a lock hangs the job (app/serve/server.py); jobs compute what they need on first use.
"""
from __future__ import annotations

import dataclasses

from workspace.errors import CandorError
from workspace.settings import Settings

from .server import create_app

_settings = dataclasses.replace(Settings.from_env(), warm=False)
if not _settings.redis_url:
    raise CandorError("celery -A app.serve.celery_worker needs CANDOR_REDIS_URL (the Redis the web server uses)")
celery = create_app(settings=_settings)._background_manager.handle
