"""Candor's Dash app: pages, callbacks and figures over :mod:`explainers`."""
