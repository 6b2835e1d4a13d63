"""Fixtures for study-mode tests: a migrated database per test, on SQLite and,
when ``CANDOR_TEST_POSTGRES_URL`` is set, on PostgreSQL (a fresh database each)."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from study.db import open_database, resolve_url
from study.schema import load_study

DATA = Path(__file__).parent / "data"
PG_URL = os.environ.get("CANDOR_TEST_POSTGRES_URL")
BACKENDS = ["sqlite"] + (["postgresql"] if PG_URL else [])


@contextlib.contextmanager
def _database(backend: str, tmp_path):
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'study.sqlite3'}"
        return
    base = make_url(resolve_url(PG_URL))
    name = "candor_t_" + uuid.uuid4().hex[:12]
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    """URL of an empty database (migrations not yet applied), on every back end."""
    with _database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def one_db_url(tmp_path):
    """URL of an empty database on the most production-like back end available (PostgreSQL if
    CANDOR_TEST_POSTGRES_URL is set), for the slow browser test that runs once."""
    with _database(BACKENDS[-1], tmp_path) as url:
        yield url


@pytest.fixture
def engine(db_url):
    """A migrated engine on each back end."""
    eng = open_database(db_url)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def study():
    """The example three-arm, stratified study."""
    return load_study(DATA / "example_study.yaml")


@pytest.fixture(scope="session")
def example_text():
    return (DATA / "example_study.yaml").read_text(encoding="utf-8")
