"""The store attacked (issue 14 security test, F1-F7): each kind refused in one line, or recomputed.

One store is built per module (the bundled sample, 6 rows: ``test_build_serve.built``); each test tampers a
copy the way the tester did and, where the attacker could, rewrites the manifest's size and SHA-256 to
match (a manifest is not signed). Oracles: the untampered store's own arrays, and ``json``/``numpy`` reads.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workspace.errors import CandorError
from workspace.settings import Settings
from .test_build_serve import ROOT, _copy, _env, built  # noqa: F401  (module fixture: one build here)

BIG = 2**30


def _open(folder: Path, max_bytes: int = BIG):
    from store.read import open_store

    m = json.loads((folder / "manifest.json").read_text())
    return open_store(folder, model_sha256=m["model"]["sha256"], data_sha256=m["data"]["sha256"], max_bytes=max_bytes)


def _relist(folder: Path, name: str, data: bytes | None = None, *, drop: bool = False, write: bool = True) -> None:
    """Write ``name`` (``data``, if ``write``) and make the manifest agree with ``data``, as an attacker can."""
    m = json.loads((folder / "manifest.json").read_text())
    if drop:
        del m["files"][name]
    else:
        if data is not None and write:
            (folder / name).write_bytes(data)
        raw = (folder / name).read_bytes() if data is None else data
        m["files"][name] = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(), "holds": ""}
    (folder / "manifest.json").write_text(json.dumps(m))


def _npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a), allow_pickle=False)
    return buf.getvalue()


def _parquet(frame: pd.DataFrame, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buf, **kw)
    return buf.getvalue()


# ---- F1: a resumed build never reuses chunks computed under another key -----------------------------------
def test_a_resumed_build_does_not_reuse_chunks_of_other_settings(built, tmp_path, monkeypatch):  # noqa: F811
    from app.cli import build as build_mod
    from app.services import tabular

    _, ws, folder = built
    settings = Settings(warm=False, cache_dir=tmp_path / "cache", state_dir=tmp_path / "state")
    out = tmp_path / "store"
    real_call = build_mod.RowTask.__call__

    def killed_after_first_chunk(self, start, stop):
        if start >= 1:
            raise RuntimeError("killed")
        return real_call(self, start, stop)

    with monkeypatch.context() as m:  # build A: other LIME settings, killed after its first chunk (row 0)
        m.setattr(tabular, "LIME_SAMPLES", 40)
        m.setattr(build_mod.RowTask, "__call__", killed_after_first_chunk)
        with pytest.raises(RuntimeError, match="killed"):
            build_mod.build(settings, out, max_rows=2, chunk_rows=1, skip=("persuasive", "surrogates", "cohorts"))
        keys = list(tmp_path.rglob("key.json"))
        assert len(keys) == 1 and json.loads(keys[0].read_text())["explainers"]["lime"]["num_samples"] == 40
    build_mod.build(settings, out, max_rows=2, chunk_rows=1, skip=("persuasive", "surrogates", "cohorts"))  # build B, resumed
    rows = np.load(out / "rows.npy")
    full_rows = np.load(folder / "rows.npy").tolist()
    at = [full_rows.index(int(r)) for r in rows]
    for part in ("lime_values", "shap_values"):  # B's explanations, as the 6-row store (default settings) has them
        np.testing.assert_array_equal(np.load(out / f"{part}.npy"), np.load(folder / f"{part}.npy")[at])
    assert json.loads((out / "manifest.json").read_text())["explainers"]["lime"]["num_samples"] == tabular.LIME_SAMPLES
    assert not build_mod.partial_folder(out).exists() and not (out / ".build").exists()


def test_a_build_replaces_out_whole_and_refuses_a_folder_that_is_not_a_store(tmp_path):
    from app.cli.build import build

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.txt").write_text("not a store")
    with pytest.raises(CandorError, match=r"--out .*mine: a folder that is not a Candor store"):
        build(Settings(warm=False), tmp_path / "mine", max_rows=0)
    assert (tmp_path / "mine" / "thesis.txt").read_text() == "not a store"


# ---- F2: structure checked at open ------------------------------------------------------------------------
def _five_columns(f):
    _relist(f, "shap_values.npy", _npy(np.load(f / "shap_values.npy")[:, :5]))


def _strings(f):
    _relist(f, "shap_base.npy", _npy(np.array(["abc"] * 6)))


def _reversed(f):
    _relist(f, "rows.npy", _npy(np.load(f / "rows.npy")[::-1].copy()))


def _dropped(f):
    _relist(f, "lime_se.npy", drop=True)


def _int_values(f):
    _relist(f, "lime_values.npy", _npy(np.load(f / "lime_values.npy").astype(np.int64)))


def _huge_value(f):
    v = np.load(f / "shap_values.npy").copy()
    v[2, :2] = 1e308  # finite, but the row's sum is not
    _relist(f, "shap_values.npy", _npy(v))


def _bad_meta_entry(f):
    frame = pd.read_parquet(f / "row_meta.parquet")
    frame.loc[3, "shap"] = json.dumps({"method": "shap"})
    _relist(f, "row_meta.parquet", _parquet(frame))


def _renamed_features(f):
    m = json.loads((f / "manifest.json").read_text())
    m["global"]["feature_names"][0] = "something else"
    (f / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("tamper, message", [
    (_five_columns, r"shap_values.npy is <f8 \(6, 5\), expected <f8 \(6, 30\)"),
    (_strings, r"shap_base.npy is <U3 \(6,\), expected <f8 \(6,\)"),
    (_int_values, r"lime_values.npy is <i8 \(6, 30\), expected <f8"),
    (_reversed, r"rows.npy is not strictly increasing rows of the 569-row table"),
    (_dropped, r"lime_se.npy not in the manifest"),
    (_huge_value, r"shap_values.npy holds values that are not finite"),
    (_renamed_features, r"the manifest's global view names features other than the table's columns"),
])
def test_a_store_of_the_wrong_structure_is_refused_at_open(built, tmp_path, tamper, message):  # noqa: F811
    copy = _copy(built[2], tmp_path)
    tamper(copy)
    with pytest.raises(CandorError, match=message) as err:
        _open(copy)
    assert "\n" not in str(err.value)


def test_an_entry_that_is_not_an_explanation_is_refused_when_its_row_is_asked(built, tmp_path):  # noqa: F811
    """Entries are parsed when their row is asked (store/row_meta.py: parsing the full Adult store's 16,282 at open
    held 57 MB and took 1.9 s): the tampered row is refused in one line naming it, every other entry served as built;
    the CLI commands that load a store check them all first."""
    copy = _copy(built[2], tmp_path)
    _bad_meta_entry(copy)
    opened, untampered = _open(copy), _open(built[2])
    row = int(opened.rows[3])
    with pytest.raises(CandorError, match=rf"store {re.escape(str(copy))}: row_meta.parquet: the shap entry of row "
                                          rf"{row} is not an explanation of this table's columns") as err:
        opened.explanation("shap", row)
    assert "\n" not in str(err.value)
    for r in map(int, opened.rows):
        for method in ("shap", "lime"):
            if (r, method) != (row, "shap"):
                assert opened.explanation(method, r).to_dict() == untampered.explanation(method, r).to_dict()
    with pytest.raises(CandorError, match=rf"the shap entry of row {row} is not an explanation"):
        opened.check_entries()
    untampered.check_entries()
    out = subprocess.run([sys.executable, "-m", "app", "study", "validate", "--store", str(copy),
                          str(ROOT / "study" / "examples" / "reliance-breast-cancer.yaml")], cwd=ROOT,
                         env={**_env(), "CANDOR_CACHE_DIR": str(tmp_path / "c")}, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr, out.stdout[-2000:] + out.stderr[-2000:]
    assert re.fullmatch(rf".*reliance-breast-cancer.yaml:1: store {re.escape(str(copy))}: row_meta.parquet: the shap "
                        rf"entry of row {row} is not an explanation of this table's columns",
                        out.stdout.strip().splitlines()[-1]), out.stdout[-2000:]


def test_report_refuses_a_malformed_store_in_one_line(built, tmp_path):  # noqa: F811
    copy = _copy(built[2], tmp_path)
    _five_columns(copy)
    out = subprocess.run([sys.executable, "-m", "app", "report", "--store", str(copy), "--out", str(tmp_path / "r.html")],
                         cwd=ROOT, env={**_env(), "CANDOR_CACHE_DIR": str(tmp_path / "c")}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(f"candor: error: store {copy}: shap_values.npy is <f8 (6, 5)")


# ---- F3: row_meta.parquet checked from its metadata before it is read ---------------------------------------
def test_a_parquet_decompression_bomb_is_refused_unread(built, tmp_path, monkeypatch):  # noqa: F811
    copy = _copy(built[2], tmp_path)
    frame = pd.read_parquet(copy / "row_meta.parquet")
    many = pd.DataFrame({"row": np.zeros(300_000, dtype=np.int64), "shap": frame["shap"][0], "lime": frame["lime"][0]})
    _relist(copy, "row_meta.parquet", _parquet(many, compression="zstd"))
    assert (copy / "row_meta.parquet").stat().st_size < 200_000  # small on disk
    with pytest.raises(CandorError, match=r"row_meta.parquet has 300000 rows and columns .*expected 6 rows"):
        _open(copy)
    wide = frame.assign(shap=frame["shap"] + " " * 3_000_000)  # 6 rows, ~36 MB unpacked, a few kB packed
    _relist(copy, "row_meta.parquet", _parquet(wide, compression="zstd"))
    with pytest.raises(CandorError, match=r"row_meta.parquet: a page of column 'shap' unpacks to [\d,]+ bytes, over "
                                          r"the 4,194,304-byte limit of one page or cell"):
        _open(copy, max_bytes=4 * 2**20)
    _relist(copy, "row_meta.parquet", _parquet(frame.assign(extra=1)))
    with pytest.raises(CandorError, match=r"row_meta.parquet has 6 rows and columns .*expected 6 rows and columns"):
        _open(copy)


PEAK = """
import json, sys
from pathlib import Path


def peak():
    return next(int(x.split()[1]) * 1024 for x in open("/proc/self/status") if x.startswith("VmHWM:"))


import pyarrow.parquet  # noqa: E401,F401  imported before the baseline
from store.read import open_store
from workspace.errors import CandorError

folder = Path(sys.argv[1])
m = json.loads((folder / "manifest.json").read_text())
base = peak()
try:
    open_store(folder, model_sha256=m["model"]["sha256"], data_sha256=m["data"]["sha256"], max_bytes=8 * 2**30)
    result = "opened"
except CandorError as err:
    result = str(err)
print(json.dumps({"result": result, "growth_mib": (peak() - base) / 2**20}))
"""


def test_one_cell_that_inflates_is_refused_before_its_memory_is_spent(built, tmp_path):  # noqa: F811
    """Attack (issue 27): one 64 MiB entry in row_meta.parquet (3 KiB with zstd) passed the size check (under the
    store's 8 GiB) and cost 440 MiB before it was refused as not an explanation. Now its page header is read
    first: refused in one line, the process's peak memory grows by under 16 MiB (measured in a subprocess)."""
    copy = _copy(built[2], tmp_path)
    frame = pd.read_parquet(copy / "row_meta.parquet")
    big = frame.assign(shap=[frame["shap"][0][:-1] + ', "pad": "' + "x" * 64 * 2**20 + '"}'] + list(frame["shap"][1:]))
    _relist(copy, "row_meta.parquet", _parquet(big, compression="zstd"))
    assert (copy / "row_meta.parquet").stat().st_size < 32_000  # 22 KB here
    out = subprocess.run([sys.executable, "-c", PEAK, str(copy)], cwd=ROOT, env=_env(), capture_output=True,
                         text=True, timeout=300)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert re.fullmatch(rf"store {re.escape(str(copy))}: row_meta.parquet: a page of column 'shap' unpacks to "
                        r"67,1\d\d,\d\d\d bytes, over the 16,777,216-byte limit of one page or cell "
                        r"\(CANDOR_MAX_CELL_MB; an operator can raise it\)", got["result"]), got
    print("MEASURED", got)
    assert got["growth_mib"] < 16, got
    # one entry over 4 MiB in a small page (dictionary-encoded, 6 rows pointing at it) is refused by its length
    five = "x" * 5 * 2**20
    _relist(copy, "row_meta.parquet", _parquet(frame.assign(lime=[frame["lime"][0][:-1] + f', "p": "{five}"}}'] * 6),
                                               compression="zstd", dictionary_pagesize_limit=64 * 2**20))
    with pytest.raises(CandorError, match=r"row_meta.parquet: a cell of column 'lime' decodes to 5,24[\d,]+ bytes, "
                                          r"over the 4,194,304-byte limit of one cell"):
        _open(copy)


# ---- F4/F5: regular files inside the store only -------------------------------------------------------------
def test_symbolic_links_and_special_files_are_refused(built, tmp_path):  # noqa: F811
    copy = _copy(built[2], tmp_path)
    outside = tmp_path / "outside.npy"
    os.replace(copy / "shap_values.npy", outside)
    (copy / "shap_values.npy").symlink_to(outside)  # same bytes, so size and hash match
    with pytest.raises(CandorError, match=r"shap_values.npy: a symbolic link or outside"):
        _open(copy)
    (copy / "shap_values.npy").unlink()
    (copy / "shap_values.npy").symlink_to("/proc/self/pagemap")  # stat size 0: would be hashed for ever
    _relist(copy, "shap_values.npy", b"", write=False)
    with pytest.raises(CandorError, match=r"shap_values.npy: a symbolic link or outside"):
        _open(copy)
    (copy / "shap_values.npy").unlink()
    os.mkfifo(copy / "shap_values.npy")
    with pytest.raises(CandorError, match=r"shap_values.npy: not a regular file"):
        _open(copy)


@pytest.mark.parametrize("linked", ["added", "added/lime"])
def test_rows_added_live_are_never_written_through_a_link(built, tmp_path, linked):  # noqa: F811
    _, ws, folder = built
    copy = _copy(folder, tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (copy / linked).parent.mkdir(parents=True, exist_ok=True)
    (copy / linked).symlink_to(outside, target_is_directory=True)
    st = _open(copy)
    e = st.explanation("lime", int(st.rows[0]))
    row = int(ws.train_idx[0])
    assert st.add("lime", row, e) is False
    assert list(outside.rglob("*")) == [] and st.explanation("lime", row) is None


# ---- F6: what is served is what was checked ------------------------------------------------------------------
def test_json_is_served_from_the_bytes_checked_at_open(built, tmp_path):  # noqa: F811
    copy = _copy(built[2], tmp_path)
    _relist(copy, "muse_default.json", json.dumps({"checked": True}).encode())
    st = _open(copy)
    (copy / "muse_default.json").write_text(json.dumps({"checked": False, "pad": "x" * 10_000}))
    assert st.json("muse_default.json") == {"checked": True}
    assert st.json("frontier_default.json") is None


# ---- F7: a malformed added row is recomputed and rewritten, never a 500 -----------------------------------------
def _valid_payload(st, ws, row):
    from store import codec

    e = st.explanation("shap", int(st.rows[0]))
    return {"row": row, "model_sha256": st.manifest["model"]["sha256"], "data_sha256": st.manifest["data"]["sha256"],
            "explanation": codec.explanation_to_json(e)}


@pytest.mark.parametrize("bad", ["list", "nested", "huge", "short", "infinity"])
def test_a_malformed_added_row_is_recomputed_and_rewritten(built, tmp_path, bad):  # noqa: F811
    from app import services
    from app.services import tabular

    _, ws, folder = built
    copy = _copy(folder, tmp_path)
    st = _open(copy)
    row = int(ws.train_idx[1])
    payload = _valid_payload(st, ws, row)
    values = payload["explanation"]["values"]
    if bad == "huge":
        values[0] = values[1] = 1e308
    elif bad == "short":
        payload["explanation"]["values"] = values[:5]
    elif bad == "infinity":
        payload["explanation"]["base"] = float("inf")
    text = {"list": "[]", "nested": "[" * 100_000}.get(bad) or json.dumps(payload)
    path = copy / "added" / "shap" / f"{row}.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    services.use_built_store(st)
    services.init(ws, warm=False)
    try:
        served = services.shap_row(row)
    finally:
        services.use_built_store(None)
        services.init(ws, warm=False)
    live = tabular._live_shap_row(row)
    np.testing.assert_array_equal(served.values, live.values)
    assert served.base_value == live.base_value
    rewritten = json.loads(path.read_text())  # overwritten with the recomputed row
    assert rewritten["explanation"]["values"] == list(map(float, live.values))
