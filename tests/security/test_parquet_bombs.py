"""A Parquet table is bounded per page, per cell and per file before it unpacks (issue 27, workspace/parquet_limits.py).

On ef3d3fe both crafted tables are read: the size check trusted the footer (1 MiB for the dictionary one,
64 MiB for the one-cell one, under the 2 GiB default), and reading spent the memory.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.e2e.serving import ROOT
from workspace.errors import CandorError

PEAK = """
import json, sys


def peak():
    return next(int(x.split()[1]) * 1024 for x in open("/proc/self/status") if x.startswith("VmHWM:"))


import pandas, pyarrow.parquet  # noqa: E401,F401  imported before the baseline
from workspace.errors import CandorError
from workspace.tables import read_table

base = peak()
try:
    result = "read %d rows" % len(read_table(sys.argv[1]))
except CandorError as err:
    result = str(err)
print(json.dumps({"result": result, "growth_mib": (peak() - base) / 2**20}))
"""


def _peak(path, **env):
    import os

    out = subprocess.run([sys.executable, "-c", PEAK, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _one_cell(path, mib: int):
    table = pa.table({"x": [1.0, 2.0, 3.0], "note": ["a", "y" * mib * 2**20, "b"], "target": [0, 1, 0]})
    pq.write_table(table, path, compression="zstd")


def test_a_cell_that_inflates_is_refused_before_its_memory_is_spent(tmp_path):
    """3 rows, one 64 MiB cell, 3 KB on disk: refused from its page header in one line; peak memory grows by under
    16 MiB (on ef3d3fe the table was read)."""
    path = tmp_path / "cell.parquet"
    _one_cell(path, 64)
    assert path.stat().st_size < 10_000
    got = _peak(path)
    print("MEASURED", got)
    assert got["result"] == ("cell.parquet: a page of column 'note' unpacks to 67,108,878 bytes, over the "
                             "16,777,216-byte limit of one page or cell (CANDOR_MAX_CELL_MB; an operator can raise it)")
    assert got["growth_mib"] < 16


def test_a_dictionary_entry_repeated_on_every_row_is_refused_before_it_is_decoded(tmp_path):
    """600 rows pointing at one 1 MiB dictionary entry: 6 KB on disk, 629 MB once decoded, refused from the
    dictionary's lengths (CANDOR_MAX_TABLE_MB=256 here) with peak memory growing by under 32 MiB."""
    path = tmp_path / "dictionary.parquet"
    table = pa.table({"note": ["y" * 2**20] * 600, "x": list(range(600)), "target": [0, 1] * 300})
    pq.write_table(table, path, compression="zstd", dictionary_pagesize_limit=64 * 2**20)
    assert path.stat().st_size < 20_000
    got = _peak(path, CANDOR_MAX_TABLE_MB="256")
    print("MEASURED", got)
    assert got["result"] == ("dictionary.parquet: its text columns decode to over 268,435,456 bytes (at least "
                             "629,145,600; a dictionary entry repeated on many rows)")
    assert got["growth_mib"] < 32


def test_ordinary_tables_read_as_before(tmp_path, monkeypatch):
    """Dictionary-encoded text, numbers and missing values read back equal to pandas' own read."""
    from workspace.tables import read_table

    frame = pd.DataFrame({"city": ["Oslo", "Lima", None, "Oslo"] * 50, "x": range(200), "y": [0.5, None, 1.5, 2.0] * 50})
    path = tmp_path / "ok.parquet"
    frame.to_parquet(path)
    pd.testing.assert_frame_equal(read_table(path), pd.read_parquet(path))
    monkeypatch.setenv("CANDOR_MAX_CELL_MB", "1")  # a smaller cell limit applies to every page
    _one_cell(tmp_path / "two.parquet", 2)
    with pytest.raises(CandorError, match=r"two.parquet: a page of column 'note' unpacks to 2,097,166 bytes, over "
                                          r"the 1,048,576-byte limit"):
        read_table(tmp_path / "two.parquet")


def test_a_study_export_read_back_is_bounded_too(tmp_path):
    """The same kind where a study's exported Parquet is read back (study/export.py::read_parquet)."""
    from study.export import read_parquet

    path = tmp_path / "participants.parquet"
    _one_cell(path, 64)
    with pytest.raises(CandorError, match=r"participants.parquet: a page of column 'note' unpacks to 67,108,878"):
        read_parquet(path, "participants")


def test_garbled_page_headers_are_one_line(tmp_path):
    """Every byte of a small file's page region overwritten in turn (0x00, 0xff, 0x19: a list of 1 billion
    booleans' header): the page check answers or refuses in one CandorError line, never another exception."""
    from workspace.parquet_limits import check_pages

    buf = __import__("io").BytesIO()
    pq.write_table(pa.table({"t": ["ab", "cd", None], "x": [1.5, 2.5, 3.5]}), buf)
    good = buf.getvalue()
    outcomes = set()
    for i in range(4, min(len(good) - 8, 200)):
        for byte in (0x00, 0xFF, 0x19):
            bad = good[:i] + bytes([byte]) + good[i + 1:]
            try:
                check_pages(bad, where="g.parquet", max_cell_bytes=2**20, max_file_bytes=2**24)
                outcomes.add("passed")
            except CandorError as err:
                assert "\n" not in str(err) and str(err).startswith("g.parquet: ")
                outcomes.add("refused")
    assert outcomes == {"passed", "refused"}


@pytest.mark.parametrize("column", [[[1, 2], [3], []], [{"a": 1}, {"a": 2}, {"a": 3}]])
def test_a_column_of_lists_or_records_is_one_line(tmp_path, column):
    """Found by an attack (issue 27): list and struct columns passed the read and failed in the explainers
    (``check``: a 38-line traceback, ``TypeError: unhashable type``; the server: 'an error on the server')."""
    import pandas as pd

    from workspace.tables import read_table

    path = tmp_path / "nested.parquet"
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "odd": column, "y": [0, 1, 0]}).to_parquet(path)
    with pytest.raises(CandorError, match="column 'odd' holds lists, records or maps") as err:
        read_table(path)
    assert "\n" not in str(err.value)
