"""No pickle in any cache (issue 14): head analyses have an exact JSON form, a pickled row is never read,
and every cache in the source is opened JSON-only."""
from __future__ import annotations

import ast
import dataclasses
import json
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.store.json_checks import assert_same, pickles_in

ROOT = Path(__file__).resolve().parents[2]


def _roles(level: str, rng, arcs: bool):
    """Head roles from the real accumulator on random attention (3 layers x 4 heads), with or without gold arcs."""
    from explainers.attention import RoleAccumulator

    acc = RoleAccumulator(3, 4, min_arcs=2, level=level, relations=("nsubj", "obj"))
    for n in (5, 7, 6):
        w = rng.dirichlet(np.ones(n), size=(3, 4, n))
        w[0, 0, np.arange(1, n), np.arange(n - 1)] += 5.0  # head 0.0 looks at the previous position: a role
        gold = dict(heads=[1, -1, 1, 2, 1, 0, 0][:n], deprels=["nsubj", "root", "obj", "obj", "nsubj", "amod", "obj"][:n])
        acc.add(w, rare_index=1, **(gold if arcs else {}))
    return acc.finalize()


@pytest.fixture(scope="module")
def analysis():
    from explainers.text import HeadAnalysis, HeadImportance, PruningCurve

    rng = np.random.default_rng(0)
    raw = rng.random((3, 4))
    curves = tuple(PruningCurve(np.array([0.0, 0.25, 0.5]), np.array([0, 3, 6]), np.array([1.0, 0.9, 2 / 3]), order,
                                ("0.1", "2.3", "1.0", "0.0", "2.2", "1.3"), 9)
                   for order in ("importance (one-shot)", "random(seed=0)"))
    return HeadAnalysis(_roles("token", rng, True), HeadImportance(raw, raw / np.linalg.norm(raw, axis=1, keepdims=True), 9,
                                                             "cross-entropy"),
                        curves, 9, 1 / 3, "toy model; 9 texts", word_roles=_roles("word", rng, False))


def test_a_head_analysis_view_comes_back_from_json_exactly(analysis):
    from app.services.text_data import HeadAnalysisView

    roles, words = analysis.roles, analysis.word_roles  # the case is not empty: relations, roles, NaN, int arrays
    assert roles.syntactic and any(any(r) for r in roles.labels) and np.isnan(words.syntactic_accuracy).all()
    assert roles.modal_offset.dtype == roles.modal_eligible.dtype == np.int64
    accuracy = {"accuracy": 0.7, "n": 10, "balanced_accuracy": 2 / 3, "predicted_share": {"neg": 0.1, "pos": 0.9}}
    for view in (HeadAnalysisView(analysis, "toy: all 9 texts", accuracy, True),
                 HeadAnalysisView(dataclasses.replace(analysis, importance=None, word_roles=None, pruning=()),
                                  "toy", None, False)):
        text = json.dumps(view.to_dict())  # what the cache writes
        back = HeadAnalysisView.from_dict(json.loads(text))
        assert_same(view, back)
        assert json.dumps(back.to_dict()) == text


def _tamper(folder: Path, payload: bytes) -> None:
    """What someone able to write the cache folder could do: turn every row into a pickle."""
    with sqlite3.connect(folder / "cache.db") as db:
        db.execute("UPDATE Cache SET mode = 4, filename = NULL, value = ?", (payload,))


class _Marker:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):  # unpickling this runs code: it creates the marker file
        return Path.touch, (Path(self.path),)


def test_a_pickled_row_in_a_json_cache_is_a_miss_and_never_unpickled(tmp_path):
    import diskcache

    from workspace.json_cache import JSONOnlyDisk, RefusedEntry, json_cache

    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Marker(marker))
    plain = diskcache.Cache(str(tmp_path / "plain"), disk=diskcache.JSONDisk)
    plain.set("k", {"a": 1})
    _tamper(tmp_path / "plain", payload)
    with pytest.raises(TypeError):  # Path.touch gave None, not JSON bytes: but only after it ran
        plain.get("k")
    assert marker.exists()  # the oracle: diskcache's own JSONDisk unpickles a pickled row, running its code
    marker.unlink()

    cache = json_cache(tmp_path / "safe", size_limit=2 ** 20)
    cache.set("k", {"a": [1.5, None], "b": "text"})
    assert cache.get("k") == {"a": [1.5, None], "b": "text"} and not pickles_in(tmp_path / "safe")
    _tamper(tmp_path / "safe", payload)
    assert cache.get("k") is None and cache.get("k", "miss") == "miss" and not marker.exists()
    cache.set("k", [2])  # a miss is recomputed and overwritten
    assert cache.get("k") == [2] and not pickles_in(tmp_path / "safe")
    with sqlite3.connect(tmp_path / "safe" / "cache.db") as db:  # a pickled key is refused too (read when iterating)
        db.execute("UPDATE Cache SET raw = 0, key = ?", (payload,))
    with pytest.raises(RefusedEntry):
        list(cache)
    assert not marker.exists()
    with pytest.raises(TypeError):
        cache.set("x", {1, 2})  # not JSON: refused, never pickled
    with pytest.raises(TypeError, match="JSONOnlyDisk"):
        json_cache(tmp_path / "other", disk=diskcache.JSONDisk)
    assert issubclass(JSONOnlyDisk, diskcache.JSONDisk)


def _json_only_disks(trees) -> set[str]:
    """``JSONOnlyDisk`` and the classes that subclass it (directly or not) in the scanned source."""
    names, grew = {"JSONOnlyDisk"}, True
    while grew:
        grew = False
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in names and any(
                        (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")) in names for b in node.bases):
                    names.add(node.name)
                    grew = True
    return names


def _called(node: ast.Call) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")


def test_every_cache_in_the_source_is_opened_json_only():
    """A ``diskcache.Cache``/``FanoutCache`` anywhere in app/, store/, workspace/, study/, accounts/ passes a
    ``JSONOnlyDisk`` (plain ``JSONDisk`` still unpickles a tampered row); Dash's manager is given such a cache
    (its default cache pickles); Celery moves JSON only."""
    files = [p for pkg in ("app", "store", "workspace", "study", "accounts") for p in (ROOT / pkg).rglob("*.py")]
    trees = {p: ast.parse(p.read_text(), str(p)) for p in files}
    disks = _json_only_disks(trees.values())
    managers = {"DiskcacheManager"} | {n.name for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef)
                                       and any(getattr(b, "attr", getattr(b, "id", "")) == "DiskcacheManager"
                                               for b in n.bases)}
    bad, seen = [], 0
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if _called(node) in ("Cache", "FanoutCache"):
                seen += 1
                disk = next((k.value for k in node.keywords if k.arg == "disk"), None)
                name = disk.id if isinstance(disk, ast.Name) else getattr(disk, "attr", None)
                helper = path == ROOT / "workspace" / "json_cache.py" and name == "disk"  # checked there at run time
                if name not in disks and not helper:
                    bad.append(f"{where}: {ast.unparse(node)}")
            elif _called(node) in managers and not node.args and not any(k.arg == "cache" for k in node.keywords):
                bad.append(f"{where}: {ast.unparse(node)} (Dash's default cache pickles)")
    assert seen and not bad, "caches that may pickle:\n" + "\n".join(bad)

    from app.serve.jobs import celery_app

    conf = celery_app("redis://127.0.0.1:1/0").conf  # no connection is made
    assert (conf.task_serializer, conf.result_serializer, list(conf.accept_content)) == ("json", "json", ["json"])
    assert conf.result_accept_content in (None, ["json"])  # None: the results accept what accept_content says
