"""Every setting Candor reads, read once: :class:`Settings` from the environment or the command line.

``python -m app`` builds :meth:`Settings.from_args` (its flags over the environment) and passes it to
``create_app(settings=...)``; gunicorn's ``app.serve.server:server`` builds :meth:`Settings.from_env`. The server
:func:`install` s the object it was created with, and modules that read a setting deep in a call
(limits, the upload folder, the Text page's model folder, the bound hosts) ask :func:`current`. Without
a server (``python -m app check``, benchmarks, tests) :func:`current` reads the environment at each call.

A bad value is a :class:`~workspace.errors.CandorError` whose one line names the variable and the value.
Variables of the login and study subsystems (``accounts/``, ``study/``) are carried as text here; those
packages still parse them where they are used (docs/architecture.md, Known debts).
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CandorError
from .setting_values import (MIN_SECRET_KEY, _flag, _frame_ancestors, _hops, _hosts, _number, _path, _redis_url,
                             _secret_key, _text, _warm, _whole, redact_url)
from .torch_options import TorchOptions

__all__ = ["Settings", "current", "install", "redact_url", "MIN_SECRET_KEY", "LIMITS", "LIMIT_FIELDS", "RAW", "ROOT",
           "DEFAULT_MAX_UNPACKED_MB"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MAX_UNPACKED_MB = 1024



LIMITS = {"max_upload_mb": ("CANDOR_MAX_UPLOAD_MB", 50), "upload_quota_mb": ("CANDOR_UPLOAD_QUOTA_MB", 500),
          "upload_retention_hours": ("CANDOR_UPLOAD_RETENTION_HOURS", 24),
          "max_cells": ("CANDOR_MAX_CELLS", 20_000_000), "max_table_mb": ("CANDOR_MAX_TABLE_MB", 2048),
          "max_memory_mb": ("CANDOR_MAX_MEMORY_MB", 8192), "model_timeout_s": ("CANDOR_MODEL_TIMEOUT_S", 120),
          "max_jobs": ("CANDOR_MAX_JOBS", 4), "max_jobs_per_user": ("CANDOR_MAX_JOBS_PER_USER", 2),
          "max_store_mb": ("CANDOR_MAX_STORE_MB", 8192), "max_cell_mb": ("CANDOR_MAX_CELL_MB", 16)}
"""Resource limits: field -> (variable, default). ``max_memory_mb`` and ``model_timeout_s`` may be 0 (off)."""
LIMIT_FIELDS = {var: name for name, (var, _) in LIMITS.items()}
"""Variable -> field, for :func:`workspace.limits.setting`."""
RAW = {"researcher_password": "CANDOR_RESEARCHER_PASSWORD", "login_limit": "CANDOR_LOGIN_LIMIT",
       "login_address_limit": "CANDOR_LOGIN_ADDRESS_LIMIT", "login_max_delay_s": "CANDOR_LOGIN_MAX_DELAY_S",
       "login_lockout": "CANDOR_LOGIN_LOCKOUT",
       "secure_cookies": "CANDOR_SECURE_COOKIES", "users_file": "CANDOR_USERS_FILE",
       "auth_header": "CANDOR_AUTH_HEADER", "auth_roles": "CANDOR_AUTH_ROLES",
       "auth_default_role": "CANDOR_AUTH_DEFAULT_ROLE", "session_db": "CANDOR_SESSION_DB",
       "session_hours": "CANDOR_SESSION_HOURS", "secret_key": "CANDOR_SECRET_KEY",
       "study_dir": "CANDOR_STUDY_DIR", "enrol_per_minute": "CANDOR_ENROL_PER_MINUTE",
       "enrol_study_per_minute": "CANDOR_ENROL_STUDY_PER_MINUTE", "database_url": "DATABASE_URL"}
"""Login and study variables carried as text (parsed by ``accounts/`` and ``study/``): field -> variable."""


@dataclass(frozen=True)
class Settings:
    """Every ``CANDOR_*`` variable (and ``DATABASE_URL``) Candor reads, parsed and checked once.

    Parameters
    ----------
    model, data : pathlib.Path, optional
        ``CANDOR_MODEL``, ``CANDOR_DATA`` (``--model``, ``--data``): the user's model file and table.
        Default None: the bundled breast-cancer sample. Both go with ``target``.
    target : str, optional
        ``CANDOR_TARGET`` (``--target``): the table's target column.
    target_class : str, optional
        ``CANDOR_CLASS`` (``--target-class``): the class a multiclass model's pages explain against the
        rest; default None, the last class.
    features_file : pathlib.Path, optional
        ``--features-file``: the features' display names and value formats (``workspace.feature_names``);
        default None, ``<data>.features.yaml`` beside the data if there is one.
    trust_pickle : bool, default=False
        ``CANDOR_TRUST_PICKLE=1`` (``--trust-model-code`` / ``--trust-pickle``): the model file may run
        code (pickle, TorchScript, skops types outside the reviewed list). Never applies to uploads.
    torch : TorchOptions
        ``CANDOR_TORCH_CLASS``, ``CANDOR_TORCH_KWARGS`` (JSON object), ``CANDOR_TORCH_CLASSES``
        (comma-separated), ``CANDOR_TORCH_OUTPUT`` (logits or probabilities), and the ``--torch-*``,
        ``--classes`` flags; default: nothing given.
    text_model : pathlib.Path, optional
        ``CANDOR_TEXT_MODEL`` (``--text-model``): a Hugging Face classifier folder for the Text page;
        default None, the bundled MiniLM.
    text_dir : pathlib.Path
        ``CANDOR_TEXT_DIR``: the Text page's uploads and cached results; default ``<tmp>/candor-text``.
    store : pathlib.Path, optional
        ``CANDOR_STORE`` (``--store``): a store written by ``python -m app build`` for this model and data;
        served without recomputation after its hashes are checked. Default None: compute live.
    warm : bool or "sync", default=True
        ``CANDOR_WARM``: ``1``/unset compute global results in a thread at start, ``sync`` before
        serving (gunicorn ``--preload``), ``0`` on first use.
    redis_url : str, optional
        ``CANDOR_REDIS_URL`` (``redis://``, ``rediss://`` or ``unix://``): run background jobs on Celery
        workers with this Redis as broker and result store (Dash's ``CeleryManager``; start workers
        with ``celery -A app.serve.celery_worker:celery worker``); default None, jobs fork from the server (diskcache).
    cache_dir : pathlib.Path
        ``CANDOR_CACHE_DIR``: background-job results (``background/``) and cached surrogates
        (``results/``); default ``.cache`` in the checkout.
    state_dir : pathlib.Path
        ``CANDOR_STATE_DIR``: each launch's selection file; default ``.cache/state``.
    upload_dir : pathlib.Path
        ``CANDOR_UPLOAD_DIR``: stored uploads and their index; default ``instance/uploads``.
    max_upload_mb, upload_quota_mb, upload_retention_hours, max_cells, max_table_mb, max_memory_mb, \
model_timeout_s, max_jobs, max_jobs_per_user, max_store_mb, max_cell_mb : float
        ``CANDOR_MAX_UPLOAD_MB`` (50 MiB, one file), ``CANDOR_UPLOAD_QUOTA_MB`` (500 MiB, the folder),
        ``CANDOR_UPLOAD_RETENTION_HOURS`` (24 h), ``CANDOR_MAX_CELLS`` (20e6 rows x columns),
        ``CANDOR_MAX_TABLE_MB`` (2048 MiB of a loaded table), ``CANDOR_MAX_MEMORY_MB`` (8192 MiB,
        RLIMIT_DATA; 0 off), ``CANDOR_MODEL_TIMEOUT_S`` (120 s a model call; 0 off),
        ``CANDOR_MAX_JOBS`` (4 background jobs), ``CANDOR_MAX_JOBS_PER_USER`` (2),
        ``CANDOR_MAX_STORE_MB`` (8192 MiB of a store's files, checked before they are read),
        ``CANDOR_MAX_CELL_MB`` (16 MiB: one Parquet page or cell once unpacked, ``workspace/parquet_limits.py``).
        Positive numbers.
    max_model_unpacked_mb : int, default=1024
        ``CANDOR_MAX_MODEL_UNPACKED_MB``: MiB a model archive may unpack to (a positive whole number).
    max_callback_kb : int, default=1024
        ``CANDOR_MAX_CALLBACK_KB``: KiB a callback request's body may have unless the user is an analyst
        (only analysts send files), a whole number from 16 to 1,048,576.
    threads : int, default=16
        ``CANDOR_THREADS``: request threads of ``python -m app`` (waitress, ``app/serve/waitress.py``) and of each
        gunicorn worker (``gunicorn.conf.py``), a positive whole number.
    allowed_hosts : tuple of str
        ``CANDOR_ALLOWED_HOSTS`` (comma-separated): the ``Host`` names served; default empty, meaning
        loopback names and ``bind_hosts``.
    bind_hosts : tuple of str
        ``CANDOR_BIND_HOSTS`` (comma-separated), or ``--host``: the addresses the server binds.
    frame_ancestors, proxy_hops : tuple of str, int
        ``CANDOR_FRAME_ANCESTORS`` (origins, space- or comma-separated; default none) may frame the pages;
        ``CANDOR_PROXY_HOPS`` (0 to 5, default 0) proxies' ``X-Forwarded-*`` are believed (``app/serve/headers.py``).
    researcher_password, login_limit, login_address_limit, login_max_delay_s, login_lockout, secure_cookies, \
users_file, auth_header, auth_roles, auth_default_role, session_db, session_hours, secret_key : str, optional
        ``CANDOR_RESEARCHER_PASSWORD``, ``CANDOR_LOGIN_LIMIT``, ``CANDOR_LOGIN_ADDRESS_LIMIT``,
        ``CANDOR_LOGIN_MAX_DELAY_S``, ``CANDOR_LOGIN_LOCKOUT`` (``accounts/login_limits.py``), ``CANDOR_SECURE_COOKIES``,
        ``CANDOR_USERS_FILE``, ``CANDOR_AUTH_HEADER``, ``CANDOR_AUTH_ROLES``, ``CANDOR_AUTH_DEFAULT_ROLE``,
        ``CANDOR_SESSION_DB``, ``CANDOR_SESSION_HOURS``, ``CANDOR_SECRET_KEY``: logins (SECURITY.md; text,
        parsed by ``accounts/``); None when unset.
    study_dir, enrol_per_minute, enrol_study_per_minute, database_url : str, optional
        ``CANDOR_STUDY_DIR``, ``CANDOR_ENROL_PER_MINUTE``, ``CANDOR_ENROL_STUDY_PER_MINUTE``,
        ``DATABASE_URL``: study mode (docs/study-mode.md; text, parsed by ``study/``); None when unset.
    """

    model: Path | None = None
    data: Path | None = None
    target: str | None = None
    target_class: str | None = None
    features_file: Path | None = None
    trust_pickle: bool = False
    torch: TorchOptions = field(default_factory=TorchOptions)
    text_model: Path | None = None
    text_dir: Path = Path(tempfile.gettempdir()) / "candor-text"
    store: Path | None = None
    warm: bool | str = True
    redis_url: str | None = field(default=None, repr=False)  # may hold a password
    cache_dir: Path = ROOT / ".cache"
    state_dir: Path = ROOT / ".cache" / "state"
    upload_dir: Path = ROOT / "instance" / "uploads"
    max_upload_mb: float = 50.0
    upload_quota_mb: float = 500.0
    upload_retention_hours: float = 24.0
    max_cells: float = 20e6
    max_table_mb: float = 2048.0
    max_memory_mb: float = 8192.0
    model_timeout_s: float = 120.0
    max_jobs: float = 4.0
    max_jobs_per_user: float = 2.0
    max_store_mb: float = 8192.0
    max_cell_mb: float = 16.0
    max_model_unpacked_mb: int = DEFAULT_MAX_UNPACKED_MB
    max_callback_kb: int = 1024
    threads: int = 16
    allowed_hosts: tuple = ()
    bind_hosts: tuple = ()
    frame_ancestors: tuple = ()  # CANDOR_FRAME_ANCESTORS
    proxy_hops: int = 0  # CANDOR_PROXY_HOPS
    researcher_password: str | None = field(default=None, repr=False)  # secrets: never in a repr
    login_limit: str | None = None
    login_address_limit: str | None = None
    login_max_delay_s: str | None = None
    login_lockout: str | None = None
    secure_cookies: str | None = None
    users_file: str | None = None
    auth_header: str | None = None
    auth_roles: str | None = None
    auth_default_role: str | None = None
    session_db: str | None = None
    session_hours: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    study_dir: str | None = None
    enrol_per_minute: str | None = None
    enrol_study_per_minute: str | None = None
    database_url: str | None = field(default=None, repr=False)  # may hold a password

    def __post_init__(self):
        given = [self.model, self.data, self.target]
        if any(given) and not all(given):
            raise CandorError("--model, --data and --target go together (CANDOR_MODEL, CANDOR_DATA, CANDOR_TARGET)")
        if not self.model and (self.torch.given() or self.target_class):
            flags = "--target-class (CANDOR_CLASS) goes" if self.target_class else "--torch-class, --torch-kwargs, " \
                "--classes and --torch-output (CANDOR_TORCH_*) go"
            raise CandorError(f"{flags} with --model")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read and check every variable of ``environ`` (default ``os.environ``) once.

        Raises
        ------
        CandorError
            Naming the variable and its value: a limit that is not a positive number, ``CANDOR_WARM``
            other than 1/0/sync, ``CANDOR_TRUST_PICKLE`` other than 0/1, bad ``CANDOR_TORCH_*`` text,
            a model without its data and target, a ``CANDOR_SECRET_KEY`` shorter than :data:`MIN_SECRET_KEY`
            characters (its value never shown), or a bad ``CANDOR_REDIS_URL`` (shown through :func:`redact_url`).
        """
        env = os.environ if environ is None else environ
        defaults = cls.__dataclass_fields__
        values = dict(
            model=_path(env, "CANDOR_MODEL"), data=_path(env, "CANDOR_DATA"), target=_text(env, "CANDOR_TARGET"),
            target_class=_text(env, "CANDOR_CLASS"), trust_pickle=_flag(env, "CANDOR_TRUST_PICKLE"),
            torch=TorchOptions.from_env(env), text_model=_path(env, "CANDOR_TEXT_MODEL"),
            text_dir=_path(env, "CANDOR_TEXT_DIR") or defaults["text_dir"].default,
            store=_path(env, "CANDOR_STORE"), warm=_warm(env, "CANDOR_WARM"), redis_url=_redis_url(env),
            cache_dir=_path(env, "CANDOR_CACHE_DIR") or defaults["cache_dir"].default,
            state_dir=_path(env, "CANDOR_STATE_DIR") or defaults["state_dir"].default,
            upload_dir=_path(env, "CANDOR_UPLOAD_DIR") or defaults["upload_dir"].default,
            max_model_unpacked_mb=_whole(env, "CANDOR_MAX_MODEL_UNPACKED_MB", DEFAULT_MAX_UNPACKED_MB, "MiB"),
            max_callback_kb=_whole(env, "CANDOR_MAX_CALLBACK_KB", 1024, "KiB"),
            threads=_whole(env, "CANDOR_THREADS", 16, "request threads"),
            allowed_hosts=_hosts(env, "CANDOR_ALLOWED_HOSTS"), bind_hosts=_hosts(env, "CANDOR_BIND_HOSTS"),
            frame_ancestors=_frame_ancestors(env, "CANDOR_FRAME_ANCESTORS"), proxy_hops=_hops(env, "CANDOR_PROXY_HOPS"),
        )
        if not 16 <= values["max_callback_kb"] <= 2**20:
            raise CandorError(f"CANDOR_MAX_CALLBACK_KB must be a whole number of KiB from 16 to 1,048,576, "
                              f"got {env.get('CANDOR_MAX_CALLBACK_KB')!r}")
        for name, (var, default) in LIMITS.items():
            values[name] = _number(env, var, default, zero_ok=name in ("max_memory_mb", "model_timeout_s"))
        values.update({name: env.get(var) or None for name, var in RAW.items()})
        values["secret_key"] = _secret_key(env)
        return cls(**values)

    @classmethod
    def from_args(cls, args, environ: Mapping[str, str] | None = None) -> Settings:
        """The command line's parsed ``args`` (``python -m app``) over :meth:`from_env`.

        Flags given on the command line win; the model's flags (``--model``, ``--data``, ``--target``,
        ``--trust-model-code``, ``--torch-*``) replace the environment's model as a whole.

        Raises
        ------
        CandorError
            As :meth:`from_env`, or for bad ``--torch-*`` text, a ``--text-model`` folder without
            ``config.json``, or ``--target-class``/``--torch-*`` without ``--model``.
        """
        base = cls.from_env(environ)
        change = {}
        torch = TorchOptions.from_args(args)
        if args.model or args.data or args.target or torch.given() or args.target_class:
            change.update(model=Path(args.model) if args.model else None, data=Path(args.data) if args.data else None,
                          target=args.target, trust_pickle=bool(args.trust_pickle), torch=torch,
                          target_class=args.target_class,
                          features_file=Path(args.features_file) if getattr(args, "features_file", None) else None)
        if getattr(args, "store", None):
            change["store"] = Path(args.store).expanduser()
        if args.text_model:
            folder = Path(args.text_model).expanduser()
            if not (folder / "config.json").is_file():
                raise CandorError(f"--text-model {args.text_model}: no config.json there; expected a folder "
                                  "written by save_pretrained (model and tokenizer)")
            change["text_model"] = folder.resolve()
        return dataclasses.replace(base, **change)

    def limit(self, variable: str) -> float:
        """The value of the resource limit named by its ``variable`` (``CANDOR_MAX_CELLS``, ...)."""
        return getattr(self, LIMIT_FIELDS[variable])


_installed: Settings | None = None


def install(settings: Settings | None) -> None:
    """Make ``settings`` what :func:`current` returns in this process (``create_app`` does; None undoes it)."""
    global _installed
    _installed = settings


@contextmanager
def installed(settings: Settings | None):
    """Install ``settings`` for the ``with`` block (None: :func:`current` reads the environment), then put back what
    was installed before, if anything.

    >>> with installed(Settings(max_cells=100.0)):
    ...     current().max_cells
    100.0
    """
    before = _installed
    install(settings)
    try:
        yield settings
    finally:
        install(before)


@contextmanager
def overridden(**changes):
    """:func:`current` with ``changes`` (fields of :class:`Settings`) for the ``with`` block, then what was installed
    before (as scikit-learn's ``config_context``): ``with overridden(cache_dir=tmp): ...``.

    Raises
    ------
    TypeError
        If a name in ``changes`` is not a field of :class:`Settings`.
    """
    with installed(dataclasses.replace(current(), **changes)) as settings:
        yield settings


def current() -> Settings:
    """The settings the server was created with; without a server, the environment read now.

    Raises
    ------
    CandorError
        If no settings are installed and a variable has a bad value (named).
    """
    return _installed if _installed is not None else Settings.from_env()


def drop_dask_trim_setting(value: str) -> None:
    """Remove ``MALLOC_TRIM_THRESHOLD_`` from this process's environment when it holds ``value``.

    A Dask nanny writes its ``pre-spawn-environ`` settings into the environment of the process that runs it
    ("poisoning the process running the Nanny", ``distributed.nanny``), so a local cluster started after another in
    one process gave its workers the setting :data:`store.cluster.LOCAL_WORKERS` leaves out. The one place Candor
    changes its environment: undoing a library's write.
    """
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") == value:
        del os.environ["MALLOC_TRIM_THRESHOLD_"]

