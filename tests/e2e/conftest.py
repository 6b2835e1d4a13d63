"""Shared e2e fixtures: one `python -m app` server per session, one headless Chromium per module."""
from __future__ import annotations

import shutil

import pytest

from tests.e2e.browser import chromium_driver
from tests.e2e.serving import ROOT, running_app




@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Base URL of the app served by ``python -m app`` (the bundled sample), background jobs enabled."""
    studies = tmp_path_factory.mktemp("candor-studies")  # study mode too, so its pages are checked (axe)
    shutil.copy(ROOT / "tests" / "study" / "data" / "small_study.yaml", studies / "trust-pilot.yaml")
    env = {"CANDOR_TEXT_DIR": str(tmp_path_factory.mktemp("candor-text")),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("candor-background")),
           "CANDOR_STUDY_DIR": str(studies), "DATABASE_URL": f"sqlite:///{studies / 'study.db'}"}
    with running_app([], env, tmp_path_factory.mktemp("server") / "server.log") as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium_driver(width=1400, height=1000) as driver:
        yield driver
