"""Issue 11 (model files): no model file takes the server down.

Every malicious file is built here, from a real skops file: a deflated member of zeros that inflates far beyond
the file's size (past the total limit, or by more than 100 times under it), an array header declaring more
than the file holds, and trees whose node arrays point outside themselves (scikit-learn's compiled tree walk
indexes them unchecked). The code-running files are in ``test_model_files.py``, whose helpers these share.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from tests.security.test_model_files import _rewrite, _table
from workspace.errors import CandorError
from workspace.model_files import load_model

ROOT = Path(__file__).resolve().parents[2]


def _npy_header(shape: tuple, dtype=np.float64) -> bytes:
    from numpy.lib import format as npformat

    buf = io.BytesIO()
    npformat.write_array_header_1_0(buf, {"descr": npformat.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                                          "shape": shape})
    return buf.getvalue()


class _RepeatedZeros:
    """zipfile's deflate compressor (level 6), but a chunk of zeros seen before is not deflated again: each chunk
    ends with a full flush (the compressor's state reset, no match reaching back past it), so its deflated bytes are
    the same wherever it falls and are written again as they are. Still a real deflate stream that unpacks to every
    zero (zipfile counts the sizes and CRC of the bytes given); 1,100 MiB of them took 6 s to deflate, now under 1."""

    def __init__(self):
        self._zlib = zlib.compressobj(6, zlib.DEFLATED, -15)  # as zipfile's ZIP_DEFLATED
        self._seen: dict[int, bytes] = {}

    def compress(self, data: bytes) -> bytes:
        zeros = data.count(0) == len(data)
        if zeros and len(data) in self._seen:
            return self._seen[len(data)]
        out = self._zlib.compress(data) + self._zlib.flush(zlib.Z_FULL_FLUSH)
        if zeros:
            self._seen[len(data)] = out
        return out

    def flush(self) -> bytes:
        return self._zlib.flush()


def _stream_member(path: Path, src: bytes, member: str, n_bytes: int) -> Path:
    """The skops zip ``src`` with ``member`` replaced by ``n_bytes`` of deflated zeros (streamed: never held whole)."""
    chunk = bytes(64 * 2**20)
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            if info.filename != member:
                zout.writestr(info.filename, zin.read(info))
        info = zipfile.ZipInfo(member)
        info.compress_type = zipfile.ZIP_DEFLATED
        with zout.open(info, "w", force_zip64=True) as f:
            f._compressor = _RepeatedZeros()  # zipfile still counts the sizes and the CRC of every byte written
            header = _npy_header((1, n_bytes // 8))
            f.write(header)
            left = n_bytes
            while left:
                f.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
    return path


PEAK = textwrap.dedent("""
    import re, sys
    import psutil
    from workspace.errors import CandorError
    from workspace.model_files import load_model
    from workspace.workspace import SAMPLE_MODEL
    hwm = lambda: int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
    load_model(SAMPLE_MODEL)  # imports and first-use caches happen here, not in the measurement
    peak0, rss0 = hwm(), psutil.Process().memory_info().rss
    try:
        load_model(sys.argv[1])
        print("LOADED")
    except CandorError as err:
        print("REFUSED", err)
    print(hwm() - peak0, psutil.Process().memory_info().rss - rss0)
""")
"""Prints whether the file loaded, then the growth of the peak (VmHWM, reset by exec) and current RSS in bytes."""


def test_a_small_file_that_inflates_past_the_limit_is_refused_before_it_is_unpacked(tmp_path):
    """Attack: a ~1 MiB skops file took over 1 GiB of memory while loading (a deflated member of zeros)."""
    path = _stream_member(tmp_path / "bomb.skops", *_bomb_source(), n_bytes=1100 * 2**20)
    assert path.stat().st_size < 2 * 2**20
    out = subprocess.run([sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("REFUSED bomb.skops: unpacks to 1,100.0 MiB"), out.stdout + out.stderr
    assert "over the 1,024.0 MiB limit for model files (CANDOR_MAX_MODEL_UNPACKED_MB)" in lines[0]
    peak_growth, rss_growth = map(int, lines[1].split())
    assert peak_growth < 64 * 2**20 and rss_growth < 64 * 2**20  # the archive was never unpacked


def _bomb_source() -> tuple[bytes, str]:
    frame = _table()
    src = sio.dumps(LogisticRegression().fit(frame[["x", "z"]], frame.label))
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    return src, schema["content"]["content"]["coef_"]["file"]


def test_a_member_that_inflates_more_than_100_times_is_refused_under_the_limit(tmp_path, monkeypatch):
    """Attack: the same bomb below the total limit: 40 MiB from ~40 KiB is refused by its compression ratio."""
    path = _stream_member(tmp_path / "ratio.skops", *_bomb_source(), n_bytes=40 * 2**20)
    with pytest.raises(CandorError, match=r"ratio.skops: member \S+\.npy inflates from [\d,]+ bytes to 40.0 MiB "
                                          r"\([\d,]+ times; at most 100 times"):
        load_model(path)


def test_the_limit_is_set_by_its_environment_variable(tmp_path, monkeypatch):
    """A 24 MiB array stored uncompressed loads by default, and is refused under CANDOR_MAX_MODEL_UNPACKED_MB=16."""
    frame = _table()
    model = LogisticRegression().fit(frame[["x", "z"]], frame.label)
    model.big_ = np.ones(3 * 2**20)
    sio.dump(model, tmp_path / "big.skops")
    assert type(load_model(tmp_path / "big.skops")).__name__ == "LogisticRegression"
    monkeypatch.setenv("CANDOR_MAX_MODEL_UNPACKED_MB", "16")
    with pytest.raises(CandorError, match=r"big.skops: unpacks to 24.0 MiB \(\d+ members\), over the 16.0 MiB limit"):
        load_model(tmp_path / "big.skops")
    monkeypatch.setenv("CANDOR_MAX_MODEL_UNPACKED_MB", "lots")
    with pytest.raises(CandorError, match="CANDOR_MAX_MODEL_UNPACKED_MB must be a positive whole number of MiB, "
                                          "got 'lots'"):
        load_model(tmp_path / "big.skops")


def test_an_array_header_declaring_more_than_the_file_holds_is_refused(tmp_path):
    """Attack: a .npy header declaring 10**12 floats over 8 stored bytes makes numpy allocate the declared size."""
    src, member = _bomb_source()
    path = tmp_path / "shape.skops"
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    path.write_bytes(_rewrite(src, schema, {member: _npy_header((1, 10**12)) + bytes(8)}))
    with pytest.raises(CandorError, match=r"shape.skops: member \S+\.npy declares an array of shape \(1, "
                                          r"1000000000000\) \(8,000,000,000,000 bytes\) but holds 8 bytes"):
        load_model(path)


def test_headers_alike_are_parsed_once_and_each_member_s_bytes_still_checked(tmp_path, monkeypatch):
    """A forest's members share a few header texts (200 trees: 1,001 members, 34 texts), parsed once each (issue 23:
    numpy's literal_eval of every header was 0.09 s of the landing page's path); the declared size is still compared
    with what each member holds, so a member whose header is another's but whose bytes are fewer is refused."""
    from numpy.lib import format as npformat
    from sklearn.ensemble import RandomForestClassifier

    from workspace import model_safety

    frame = _table()
    sio.dump(RandomForestClassifier(n_estimators=30, random_state=0).fit(frame[["x", "z"]], frame.label),
             tmp_path / "rf.skops")
    z = zipfile.ZipFile(tmp_path / "rf.skops")
    members = [i.filename for i in z.infolist() if i.filename.endswith(".npy")]
    getattr(getattr(model_safety, "_npy_header", None), "cache_clear", lambda: None)()  # parsed here, not before
    parsed, read = [], npformat.read_array_header_1_0
    monkeypatch.setattr(npformat, "read_array_header_1_0", lambda *a, **kw: parsed.append(1) or read(*a, **kw))
    model_safety.check_archive(tmp_path / "rf.skops")
    assert len(members) > 60 and 0 < len(parsed) < len(members) / 2
    twins = {}
    for m in members:  # two members with one header text: the second loses its last 8 bytes
        data = z.read(m)
        twins.setdefault(data[:data.index(b"\n") + 1], []).append((m, data))
    (first, _), (second, data) = next(v for v in twins.values() if len(v) > 1 and len(v[1][1]) > 8)[:2]
    schema = json.loads(z.read("schema.json"))
    (tmp_path / "short.skops").write_bytes(_rewrite((tmp_path / "rf.skops").read_bytes(), schema,
                                                    {second: data[:-8]}))
    with pytest.raises(CandorError, match=rf"short.skops: member {second} declares an array of shape .* but holds"):
        model_safety.check_archive(tmp_path / "short.skops")


def _corrupt_tree(tmp_path, name: str, field: str, node: int, value: int) -> Path:
    """A fitted GradientBoostingClassifier whose first tree's ``field`` of ``node`` is set to ``value``."""
    from sklearn.ensemble import GradientBoostingClassifier

    frame = _table()
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(frame[["x", "z"]], frame.label)
    src = sio.dumps(gb)
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    first = schema["content"]["content"]["estimators_"]["content"][0]  # an object ndarray of trees
    nodes_file = _find(first, "nodes")["file"]
    nodes = np.load(io.BytesIO(zipfile.ZipFile(io.BytesIO(src)).read(nodes_file)))
    nodes[field][node] = value
    buf = io.BytesIO()
    np.save(buf, nodes)
    path = tmp_path / name
    path.write_bytes(_rewrite(src, schema, {nodes_file: buf.getvalue()}))
    return path


def _find(tree, key):
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get(key), dict) and "file" in item[key]:
                return item[key]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    raise KeyError(key)


@pytest.mark.parametrize("field, value, message", [
    ("left_child", 10**6, r"node 0's left child is 1000000, outside nodes 1 to \d+"),
    ("right_child", 0, r"node 0's right child is 0, outside nodes 1 to \d+"),  # a cycle: predict never returns
    ("feature", 7, r"node 0 splits on feature 7, but the model takes 2 features"),
])
def test_a_tree_pointing_outside_itself_is_refused_before_it_can_crash_the_server(tmp_path, field, value, message):
    """Attack: scikit-learn's compiled tree walk indexes these arrays unchecked: a segfault or an endless loop."""
    path = _corrupt_tree(tmp_path, "gb.skops", field, 0, value)
    with pytest.raises(CandorError, match=rf"gb.skops: a decision tree is corrupt: {message}"):
        load_model(path)
