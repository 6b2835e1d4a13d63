"""The services' mutation guard (:func:`app.services.tabular.guarded`) reuses the previous job's "after" as its
"before" (issue 23: a random forest's model call costs about 25 ms whatever its rows, and the guard made four of
a lacking row's nine), and still catches a model changed by a job."""
import pytest

from app.services import tabular
from workspace.errors import CandorError


class _Model:
    """A stand-in workspace whose fingerprint is its state; counts how often it is read."""

    def __init__(self):
        self.state, self.reads = 0, 0


@pytest.fixture
def ws(monkeypatch):
    m = _Model()

    def fingerprint(w=None):
        m.reads += 1
        return str(m.state)

    monkeypatch.setattr(tabular, "workspace", lambda: m)
    monkeypatch.setattr(tabular, "fingerprint", fingerprint)
    monkeypatch.setattr(tabular, "_last_fingerprint", (None, ""))
    return m


def test_two_jobs_read_the_fingerprint_three_times_not_four(ws):
    assert tabular.guarded("SHAP", lambda: 1) == 1
    assert tabular.guarded("LIME", lambda: 2) == 2
    assert ws.reads == 3


def test_a_job_that_changes_the_model_is_caught_after_a_reused_before(ws):
    tabular.guarded("SHAP", lambda: None)

    def mutate():
        ws.state += 1

    with pytest.raises(CandorError, match="predictions changed while computing LIME"):
        tabular.guarded("LIME", mutate)


def test_another_workspace_never_reuses_the_last_fingerprint(ws, monkeypatch):
    tabular.guarded("SHAP", lambda: None)
    other = _Model()
    other.state = 7
    monkeypatch.setattr(tabular, "workspace", lambda: other)
    reads = ws.reads
    tabular.guarded("SHAP", lambda: None)  # reads its own "before" (the stand-in counts on ws)
    assert ws.reads == reads + 2
