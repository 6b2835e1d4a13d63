"""Candor in a notebook: ``Candor.load(...)`` gives the dashboard's explanations, costs and figures as objects
(:class:`~app.notebook.facade.Candor`), and opens the dashboard (``.run()``) or writes the report (``.report()``)."""
from .facade import Candor
from .served import Dashboard

__all__ = ["Candor", "Dashboard"]
