"""``benchmarks.slice`` finds the callbacks it times in today's app (issue 27: it died with StopIteration on
the ``overview-summary`` output, gone since the landing page's layout carries its summary)."""
from __future__ import annotations

import pytest

from benchmarks import slice as bench


DEPS = """
import json, sys
from pathlib import Path
from app.serve.server import create_app
from workspace.settings import Settings
folder = Path(sys.argv[1])
app = create_app(settings=Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state",
                                   upload_dir=folder / "uploads"))
with app.server.test_client() as client:
    print(json.dumps(client.get("/_dash-dependencies").get_json()))
"""


@pytest.fixture(scope="module")
def deps(tmp_path_factory):
    """The app's declared callbacks, from an app made in its own process: a second app in the test process
    replaced process-wide Dash state (the background manager's signing secret) that later tests use."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", DEPS, str(tmp_path_factory.mktemp("slice"))], cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("output", ["_pages_content", "descriptive-global-bar", *bench.ROW_PAGES.values()])
def test_every_output_it_times_is_a_server_callback(deps, output):
    dep = bench._find(deps, output)
    assert [o["id"] for o in bench._ids(dep["output"])]  # and its outputs parse as dash-renderer sends them


def test_a_missing_output_is_named_in_one_line(deps):
    with pytest.raises(SystemExit, match="no server callback outputs 'overview-summary'"):
        bench._find(deps, "overview-summary")
