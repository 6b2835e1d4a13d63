"""Review reports: one self-contained HTML file (and a PDF printed from it) that travels without the server.

:func:`~app.report.content.report_content` computes what the report holds through the pages' services;
:func:`~app.report.render.render_html` writes it with the pages' figure builders and plotly.js inlined;
:func:`~app.report.pdf.print_pdf` prints it with headless Chromium; ``python -m app report``
(:mod:`app.report.cli`) and the navbar's "Export report" button (:mod:`app.report.button`, callback
:mod:`app.callbacks.report`) call them. This package imports nothing itself, so that
:mod:`app.serve.callback_roles` can read the button's ids without loading the services.
"""
