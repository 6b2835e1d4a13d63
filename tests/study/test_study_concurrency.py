"""Concurrency and durability of study mode under gunicorn: the races ``benchmarks.study_load`` found.

- The first requests of a freshly started server register the study from several workers and
  threads at once; all of them must succeed (one row).
- ``gunicorn --preload`` opens (and migrates) the database in the master and then forks the
  workers; a worker must not reuse a pooled connection inherited from the master.
"""

from __future__ import annotations

import multiprocessing
import threading

from sqlalchemy import func, select, text

from study import store
from study.db import open_database
from study.models import StudyRow


def test_concurrent_registration_of_one_study_all_succeed(engine, study):
    barrier = threading.Barrier(6)
    errors = []

    def register():
        barrier.wait()
        try:
            store.register_study(engine, study)
        except Exception as err:  # noqa: BLE001 - the test reports any failure
            errors.append(repr(err))

    threads = [threading.Thread(target=register) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(StudyRow)) == 1


def _child(engine, queue):
    queue.put(engine.pool.checkedin())
    with engine.connect() as conn:
        queue.put(conn.scalar(text("SELECT 1")))


def test_forked_worker_opens_its_own_connections(db_url):
    engine = open_database(db_url)
    try:
        assert engine.pool.checkedin() == 0  # the master holds no connection when it forks
        with engine.connect() as conn:  # ... and even if it did, the child drops the inherited pool
            conn.execute(text("SELECT 1"))
        assert engine.pool.checkedin() == 1
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_child, args=(engine, queue))
        child.start()
        child.join(30)
        assert child.exitcode == 0
        assert queue.get(timeout=5) == 0
        assert queue.get(timeout=5) == 1
        assert engine.pool.checkedin() == 1  # the parent's connection was not closed by the child
    finally:
        engine.dispose()
