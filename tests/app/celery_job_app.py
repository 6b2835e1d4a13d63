"""A one-callback Dash app on the product's background manager, for the Celery job test.

The test's Flask client posts to it; a Celery worker started by the test runs its jobs
(``celery -A tests.app.celery_job_app:celery worker``). ``CANDOR_REDIS_URL`` must be set in both.
"""
import os
import time

import dash
from dash import Input, Output, dcc, html

from app import components as _components  # noqa: F401  (the refusal alert's library, loaded before any callback as in the real app)
from app.server import background_manager

manager = background_manager(redis_url=os.environ["CANDOR_REDIS_URL"])
app = dash.Dash(__name__, background_callback_manager=manager)
app.layout = html.Div([dcc.Input(id="n", type="number"), html.Div(id="out")])


@dash.callback(Output("out", "children"), Input("n", "value"), background=True, prevent_initial_call=True)
def square(n):
    """``n`` squared and the pid that computed it; a negative ``n`` first sleeps ``-n`` seconds."""
    if n < 0:
        time.sleep(-n)
    return f"{n * n} computed by pid {os.getpid()}"


celery = manager.handle
