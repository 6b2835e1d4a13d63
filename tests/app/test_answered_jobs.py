"""A background job whose result the cache already holds forks nothing (issue 27).

Every visit to the Surrogate page starts its default frontier as a background job; Dash kept the result
under the job's key (``cache_by``) but forked a copy of the server to compute it again, at the fork gate
(:mod:`app.serve.fork_gate`), which first waits for every request in flight. Oracle: the forks Dash's own
``DiskcacheManager.call_job_fn`` is asked for, and the value the first poll reads.
"""
from __future__ import annotations

import dash
import pytest

from app.serve.jobs import REFUSED


@pytest.fixture
def manager(tmp_path, monkeypatch):
    from app import services
    from app.serve.server import background_manager

    monkeypatch.setattr(services.warm_done, "wait", lambda timeout=None: True)  # no warm-up in this process
    forks = []
    monkeypatch.setattr(dash.DiskcacheManager, "call_job_fn",
                        lambda self, key, job_fn, args, context: forks.append(key) or 4242)
    m = background_manager(tmp_path)
    m.forks = forks
    return m


def test_a_cached_result_is_read_without_a_fork(manager):
    manager.handle.set("frontier-key", {"multi": True, "response": "the frontier"})
    job = manager.call_job_fn("frontier-key", None, (), {})
    assert manager.forks == []
    assert not manager.job_running(job)  # no process under this id: the poll does not wait for one
    assert manager.get_result("frontier-key", str(job)) == {"multi": True, "response": "the frontier"}


@pytest.mark.parametrize("cached", [None, {REFUSED: "too many jobs"},
                                    {"background_callback_error": {"msg": "boom", "tb": ""}}])
def test_a_missing_refused_or_failed_result_is_computed_again(manager, cached):
    if cached is not None:
        manager.handle.set("frontier-key", cached)
    assert manager.call_job_fn("frontier-key", None, (), {}) == 4242
    assert manager.forks == ["frontier-key"]
