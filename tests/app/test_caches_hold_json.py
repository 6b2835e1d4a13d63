"""What the app's caches hold after real work is JSON, never a pickle (issue 14): a background job through the
product's DiskcacheManager, and the Text page's head analysis."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.app.test_celery_jobs import _run
from tests.app.test_text_callbacks import text_app  # noqa: F401 (fixture: results cache in a fresh folder, MiniLM)
from tests.store.json_checks import assert_same, cache_rows, pickles_in


@pytest.fixture
def job_app(tmp_path, monkeypatch):
    """A one-callback Dash app on ``app.serve.server.background_manager`` (diskcache under ``tmp_path``)."""
    import dash
    import plotly.graph_objects as go
    from dash import Input, Output, dcc, html

    from app import services
    from app.serve.server import background_manager
    from app.serve.startup import setup_dash_now

    monkeypatch.setattr(services.warm_done, "wait", lambda timeout=None: True)  # no warm-up in this process
    manager = background_manager(tmp_path)
    app = dash.Dash(__name__, background_callback_manager=manager)
    app.layout = html.Div([dcc.Input(id="n", type="number"), html.Div(id="out"), html.Div(id="progress"),
                           html.Div(id="side")])

    def view(n):
        return html.Div([html.P(f"{n * n}"), dcc.Graph(figure=go.Figure(go.Bar(x=np.arange(3), y=[n, 2.5, np.nan])))])

    @app.callback(Output("out", "children"), Input("n", "value"), background=True, prevent_initial_call=True,
                  progress=[Output("progress", "children")])
    def square(set_progress, n):
        set_progress((f"{n} of {n}",))
        dash.set_props("side", {"children": f"side {n}"})
        return view(n)

    setup_dash_now(app)
    return app, manager, view, tmp_path / "background"


def test_a_background_job_through_dash_leaves_json_only_in_the_managers_cache(job_app):
    """The whole path: the browser's request, Dash's signed handles, a forked job, polling, the answer."""
    from dash._utils import to_json

    from app.serve.jobs import REGISTRY

    app, manager, view, folder = job_app
    handles, answer = _run(app.server.test_client(), 7)
    assert answer == json.loads(to_json(view(7)))  # what Dash serves for the component without a cache
    job = int(handles["job"].split("~")[0])
    assert manager.handle.get(REGISTRY) == {str(job): "addr:203.0.113.7"}  # the job limits' registry, as JSON
    assert isinstance(manager.handle.get(manager.SIGNING_SECRET_KEY), str)
    assert len(cache_rows(folder)) >= 3  # the result (kept for the cache key), the registry, the secret
    assert pickles_in(folder) == []


def test_every_value_a_job_writes_is_json_and_reads_back(job_app):
    """Progress, set_props, a result with ``no_update``, an error: each row is JSON and Dash reads it back."""
    import dash
    from dash._utils import to_json

    app, manager, view, folder = job_app

    def fn(set_progress, n):
        set_progress((1, "one of two"))
        dash.set_props("side", {"children": view(n)})
        if n < 0:
            raise ValueError("negative")
        return [view(n), dash.no_update]

    job, before = manager.make_job_fn(fn, progress=True), len(cache_rows(folder))
    for key, n in (("ok", 3), ("failed", -1)):
        job(key, manager._make_progress_key(key), [n], {})  # as the forked process runs it
    assert len(cache_rows(folder)) == before + 6 and pickles_in(folder) == []  # 2 x (progress, set_props, result)
    assert manager.get_progress("ok") == [1, "one of two"]
    assert manager.get_updated_props("ok") == {"side": {"children": json.loads(to_json(view(3)))}}
    assert manager.get_result("ok", None) == [json.loads(to_json(view(3))), {"_dash_no_update": "_dash_no_update"}]
    error = manager.get_result("failed", None)["background_callback_error"]
    assert error["msg"] == "negative" and "ValueError" in error["tb"]


def test_a_head_analysis_is_cached_as_json_and_read_back_unchanged(text_app):
    from app import services

    view, cached = services.head_analysis(services.BUILTIN)  # 12 labelled sentences: roles, importance, pruning
    assert not cached and view.accuracy and view.analysis.importance is not None and view.analysis.word_roles
    folder = text_app.text_dir() / "results-json"
    assert len(cache_rows(folder)) == 1 and pickles_in(folder) == []
    again, cached = services.head_analysis(services.BUILTIN)
    assert cached
    assert_same(view, again)
    assert not (text_app.text_dir() / "results").exists()  # the old pickling folder is not opened
