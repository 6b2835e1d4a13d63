"""``benchmarks.slice`` finds the callbacks it times in today's app (issue 27: it died with StopIteration on
the ``overview-summary`` output, gone since the landing page's layout carries its summary)."""
from __future__ import annotations

import pytest

from benchmarks import slice as bench


@pytest.fixture(scope="module")
def deps(tmp_path_factory):
    from app.server import create_app
    from workspace.settings import Settings

    folder = tmp_path_factory.mktemp("slice")
    app = create_app(settings=Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state",
                                       upload_dir=folder / "uploads"))
    with app.server.test_client() as client:
        return client.get("/_dash-dependencies").get_json()


@pytest.mark.parametrize("output", ["_pages_content", "descriptive-global-bar", *bench.ROW_PAGES.values()])
def test_every_output_it_times_is_a_server_callback(deps, output):
    dep = bench._find(deps, output)
    assert [o["id"] for o in bench._ids(dep["output"])]  # and its outputs parse as dash-renderer sends them


def test_a_missing_output_is_named_in_one_line(deps):
    with pytest.raises(SystemExit, match="no server callback outputs 'overview-summary'"):
        bench._find(deps, "overview-summary")
