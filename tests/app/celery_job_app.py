"""A one-callback Dash app on the product's background manager, for the Celery job test.

The test's Flask client posts to it; a Celery worker started by the test runs its jobs
(``celery -A tests.app.celery_job_app:celery worker``). ``CANDOR_REDIS_URL`` must be set in both.
"""
import os
import time

import dash
from dash import Input, Output, dcc, html

from app.views import components as _components  # noqa: F401  (the refusal alert's library, loaded before any callback as in the real app)
from app.serve.server import background_manager

from dash import _callback

# Dash moves every module-level @callback registered so far into the first app it sets up and empties its
# global lists: this test app would take the product's callbacks from every app the suite creates later
# (in CI, where Redis runs this test, 13 access and study tests then met "unknown callback").
_saved = (dict(_callback.GLOBAL_CALLBACK_MAP), list(_callback.GLOBAL_CALLBACK_LIST))

manager = background_manager(redis_url=os.environ["CANDOR_REDIS_URL"])
app = dash.Dash(__name__, background_callback_manager=manager)
app.layout = html.Div([dcc.Input(id="n", type="number"), html.Div(id="out")])


@dash.callback(Output("out", "children"), Input("n", "value"), background=True, prevent_initial_call=True)
def square(n):
    """``n`` squared and the pid that computed it; a negative ``n`` first sleeps ``-n`` seconds."""
    if n < 0:
        time.sleep(-n)
    return f"{n * n} computed by pid {os.getpid()}"


from app.serve.startup import setup_dash_now  # noqa: E402

setup_dash_now(app)  # set up now (this app gets its callback), then give the process its own lists back
_callback.GLOBAL_CALLBACK_MAP.clear()
_callback.GLOBAL_CALLBACK_MAP.update(_saved[0])
_callback.GLOBAL_CALLBACK_LIST[:] = _saved[1]

celery = manager.handle
