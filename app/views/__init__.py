"""Views: Plotly figures and Dash components built from services' results, per page family.

No callback is registered here (``app/callbacks/`` registers them and calls these): a page's ``render_*`` calls its
one service and draws the result, or says in one line why not; ``draw_*`` is the drawing a callback keeps
(:func:`app.views.drawn.drawn_once`). Issue 24's rooms; ``docs/architecture.md``.
"""
