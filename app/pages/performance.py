"""Performance: how well the model does on its held-out rows (ROC, precision-recall, calibration, the confusion at
a threshold the user moves; a regressor's predicted vs actual and residuals; a multiclass model's every class)."""
import dash
from dash import html

from app import services
from app.shell.url_state import from_url
from app.views.components import error_alert
from app.views.performance import page_body
from workspace.errors import CandorError

dash.register_page(__name__, path="/performance", name="Performance", title="Candor · Performance", order=0.5)


@from_url('/performance')  # the threshold from and to its URL (app/shell/url_state.py)
def layout(**_):
    ws = services.workspace()
    intro = html.P(f"How well the model does on the {len(ws.test_idx):,} held-out rows it was not fitted on "
                   f"({ws.output_label}); every figure has its text alternative, each interval says how it was made.",
                   className="text-muted small")
    try:
        body = page_body(services.performance.performance())
    except CandorError as err:
        body = [error_alert(str(err))]
    return html.Div([html.H2("Model performance"), intro, *body])
