"""One self-contained HTML file from a :class:`~app.report.content.ReportContent`.

plotly.js is inlined once (the installed plotly package's own offline bundle,
:func:`plotly.offline.get_plotlyjs`), the CSS is inline, every figure is the JSON of a figure built by the
pages' own builders (:mod:`app.views.figures`, :mod:`app.views.figures_persuasive`) in a ``<script type="application/json">``
block, drawn by one small script that sets ``data-figures-drawn`` on ``<body>`` when every figure has drawn.
Nothing is fetched: no ``src``/``href`` to any network. Every user string goes through :func:`html.escape`.
"""
from __future__ import annotations

from html import escape

from .content import ReportContent
from .section_performance import figure_count
from .sections import body

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;margin:0 auto;max-width:1180px;
padding:24px;line-height:1.45}
h1{font-size:1.6rem;margin:0 0 4px}h2{font-size:1.25rem;border-bottom:2px solid #d0d7de;padding-bottom:4px;
margin-top:32px}h3{font-size:1.05rem;margin:20px 0 6px}
.sub{color:#52606d;font-size:.9rem}.note{color:#52606d;font-size:.85rem}
table{border-collapse:collapse;margin:6px 0 12px;font-size:.9rem}th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f3f5f7}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:16px}.figure{min-height:260px;break-inside:avoid}
.statement{background:#f3f5f7;border-left:4px solid #1f77b4;padding:8px 12px}
.warn{background:#fff4e5;border-left:4px solid #d97706;padding:6px 12px}
.row-section{break-before:page}code{font-size:.85rem;word-break:break-all}
@media print{body{max-width:none;padding:0}.pair{grid-template-columns:1fr 1fr}}
"""

DRAW = """
(function(){var blocks=document.querySelectorAll('script[type="application/json"][data-figure]');
var pending=[];blocks.forEach(function(b){var f=JSON.parse(b.textContent);
pending.push(Plotly.newPlot(b.getAttribute('data-figure'),f.data,f.layout,{displayModeBar:false,responsive:true}));});
Promise.all(pending).then(function(){document.body.setAttribute('data-figures-drawn',String(pending.length));});})();
"""


class Figures:
    """The report's figures in order: :meth:`add` returns the ``<div>`` and JSON block of one figure."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, fig) -> str:
        self.count += 1
        fid = f"figure-{self.count}"
        data = fig.to_json().replace("</", "<\\/")  # a feature name cannot close the script block
        return (f'<div class="figure" id="{fid}"></div>'
                f'<script type="application/json" data-figure="{fid}">{data}</script>')


def expected_figures(content: ReportContent) -> int:
    """How many figures :func:`render_html` draws for ``content`` (global SHAP, each applicable global method of the
    table of methods, the surrogate's confusion, the held-out curve, two per dependence view, the Cohorts page's two, then three per row with a persuasive view or
    one SHAP waterfall without)."""
    n = 1 + sum(v.result is not None for v in getattr(content, "methods", ())) + (content.surrogate is not None) \
        + (content.global_curve is not None) + 2 * len(getattr(content, "dependence", ()))
    n += 2 * (getattr(content, "cohorts", None) is not None)  # the Cohorts page's error tree and ranking
    n += figure_count(getattr(content, "performance", None))  # the Model performance section
    return n + sum(3 if s.persuasive is not None else 1 for s in content.rows)


def plotly_js() -> str:
    """The installed plotly package's offline plotly.js bundle (no CDN)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render_html(content: ReportContent) -> str:
    """The report as one HTML document (str), plotly.js inlined once; see the module docstring."""
    figs = Figures()
    main = body(content, figs)
    title = escape(f"Candor review: {content.name}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>"
            f"<style>{CSS}</style><script>{plotly_js()}</script></head>"
            f"<body data-figures-expected=\"{figs.count}\">{main}<script>{DRAW}</script></body></html>\n")

