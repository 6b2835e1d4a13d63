"""Views: Plotly figures and Dash components built from services' results, per page family.

Pure builders: no callback is registered here and nothing is computed beyond layout (issue 24's rooms;
``docs/architecture.md``).
"""
