"""Review reports: one self-contained HTML file (and a PDF printed from it) that travels without the server.

:func:`~app.report.content.report_content` computes what the report holds through the pages' services;
:func:`~app.report.render.render_html` writes it with the pages' figure builders and plotly.js inlined;
:func:`~app.report.pdf.print_pdf` prints it with headless Chromium; ``python -m app report``
(:mod:`app.report.cli`) and the navbar's "Export report" button (:mod:`app.report.button`) call them.
"""
from .content import ReportContent, RowSection, default_rows, parse_rows, report_content
from .render import expected_figures, render_html

__all__ = ["ReportContent", "RowSection", "default_rows", "expected_figures", "parse_rows", "render_html",
           "report_content"]
