"""One concept, one room (issues 12, 24): the import graph has no cycle and respects the layers, no package
facade hides one of its modules behind another object of the same name, and a public name defined twice in
``explainers/`` means one concept whose definitions agree on a shared oracle.

Layers, lowest first: ``explainers/`` (pure computation) < ``workspace/``, ``accounts/``, ``study/``
(Dash-free domains) < ``app/``. Imports go down only. The graph (``tests/import_graph.py``) is what Python
runs: lazy imports inside functions count, and so do a package's ``__init__`` importing its children and a
module importing a package's child running that package's ``__init__`` (issue 24: the layer test once left
those out and missed ``app.build -> app.server -> app.callbacks -> ... -> app.report.provenance -> app.build``).
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

from tests.import_graph import PACKAGES, cycles, from_base, import_graph, module_files, shortest_cycle

ROOT = Path(__file__).resolve().parent.parent
LOWER = {"explainers": set(), "workspace": {"explainers"}, "accounts": {"explainers", "workspace"},
         "study": {"explainers", "workspace", "accounts"}, "store": {"explainers", "workspace"},
         "app": {"explainers", "workspace", "accounts", "study", "store"}}
"""Packages each package may import (besides itself)."""


def _graph() -> dict[str, set[str]]:
    return import_graph(PACKAGES)


def test_cycle_finder_finds_a_planted_cycle():
    """The oracle of the next tests: a three-module cycle and a self-contained module."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"a"}}
    assert shortest_cycle(graph, ["a", "b", "c", "d", "e"]) == ["a", "b", "c", "a"]


def test_graph_keeps_package_to_child_edges_and_lazy_imports(tmp_path):
    """A planted cycle that runs only through a package's ``__init__`` importing its child and an import inside
    a function: the graph must see both (the old graph, which dropped package-to-child edges, saw no cycle)."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    files = {"pkg/__init__.py": "",
             "pkg/sub/__init__.py": "from .a import f\n",  # the facade imports its child
             "pkg/sub/a.py": "def f():\n    from pkg.b import g\n    return g\n",  # a lazy import
             "pkg/b.py": "from pkg.sub import f\n\ndef g():\n    return f\n",  # a name of the facade
             "pkg/c.py": "from pkg.sub import a\n"}  # runs pkg/sub/__init__.py first
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    graph = import_graph(("pkg",), root=tmp_path)
    assert graph == {"pkg": set(), "pkg.sub": {"pkg.sub.a"}, "pkg.sub.a": {"pkg.b"},
                     "pkg.b": {"pkg.sub"}, "pkg.c": {"pkg.sub.a", "pkg.sub"}}
    assert cycles(graph) == [["pkg.b", "pkg.sub", "pkg.sub.a"]]
    assert shortest_cycle(graph, ["pkg.b", "pkg.sub", "pkg.sub.a"]) == ["pkg.b", "pkg.sub", "pkg.sub.a", "pkg.b"]


def test_project_import_graph_has_no_cycle():
    """No module of the project reaches itself through what importing it runs (lazy imports included)."""
    graph = _graph()
    found = [" -> ".join(shortest_cycle(graph, c)) + f"  ({len(c)} modules: {', '.join(c)})" for c in cycles(graph)]
    assert found == [], "import cycles:\n" + "\n".join(found)


def _facade_shadows(files: dict[str, Path]) -> list[str]:
    """``package.name`` bound in a package's ``__init__`` (import, def, class or assignment) to something other
    than its submodule ``name``: then ``package.name`` and ``import package.name`` mean two objects, and which one
    ``package.name`` is depends on import order (``mock.patch("package.name.x")`` patches the wrong one)."""
    found = []
    for package, path in files.items():
        if path.name != "__init__.py":
            continue
        children = {m.rpartition(".")[2] for m in files if m.rpartition(".")[0] == package}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            bound = []
            if isinstance(node, ast.ImportFrom):
                base = from_base(node, package)
                bound = [(a.asname or a.name, f"{base}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                bound = [(a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0])
                         for a in node.names]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = [(node.name, None)]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = [(n.id, None) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            found += [f"{package}.{name} (line {node.lineno})" for name, what in bound
                      if name in children and what != f"{package}.{name}"]
    return found


def test_facade_shadow_finder_finds_a_planted_shadow(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from . import kept\nfrom .view import view\nfrom .other import x as kept2\n")
    for name in ("kept", "view", "kept2", "other"):
        (tmp_path / "pkg" / f"{name}.py").write_text("def view():\n    pass\nx = 1\n")
    assert _facade_shadows(module_files(("pkg",), root=tmp_path)) == ["pkg.view (line 2)", "pkg.kept2 (line 3)"]


def test_no_facade_name_shadows_its_submodule():
    """A package's ``__init__`` never binds a submodule's name to a function or class (this test found
    ``app.services.persuasive``, a function, hiding ``app/services/persuasive.py``)."""
    assert _facade_shadows(module_files(PACKAGES)) == []


def test_imports_only_go_down_the_layers():
    """explainers/ imports none of workspace/, accounts/, study/, app/; the Dash-free domains never import app/."""
    wrong = sorted(f"{m} -> {d}" for m, deps in _graph().items() for d in deps
                   if d.split(".")[0] != m.split(".")[0] and d.split(".")[0] not in LOWER[m.split(".")[0]])
    assert wrong == []


def _public_definitions() -> dict[str, list[str]]:
    """Public function name -> modules of explainers/ defining it at top level."""
    found: dict[str, list[str]] = {}
    for p in sorted((ROOT / "explainers").rglob("*.py")):
        module = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(module)
    return found


PROTOCOL = {"is_compatible"}
"""Defined by every method family on purpose: which model and data a family applies to (LIT's
``is_compatible``); :mod:`explainers.capabilities` asks each."""

ORACLE_CHECKED = {"integrated_gradients"}
"""One method for two input types (tabular rows, token embeddings), both through
:func:`explainers.gradients.until_complete`; checked below against completeness."""


def test_a_public_name_is_defined_once_in_explainers_unless_checked_against_an_oracle():
    twice = {n: ms for n, ms in _public_definitions().items() if len(ms) > 1}
    unexplained = {n: ms for n, ms in twice.items() if n not in PROTOCOL | ORACLE_CHECKED}
    assert unexplained == {}, "one concept, one room: rename one, or check both against a shared oracle here"


def _every_exposed(name: str) -> list[tuple[str, object]]:
    """(module, object) for every importable module of explainers/ exposing ``name`` (re-exports included)."""
    import explainers

    out = []
    for info in pkgutil.walk_packages(explainers.__path__, "explainers."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional backend missing here
            continue
        obj = module.__dict__.get(name) or (getattr(module, name, None) if name in getattr(module, "__all__", ())
                                            else None)
        if callable(obj):
            out.append((info.name, obj))
    return out


def test_every_top_k_overlap_agrees_with_brute_force_on_signed_attributions():
    """The review found ``explainers.top_k_overlap`` and ``explainers.text.top_k_overlap`` returning 1.0 and 0.0
    on the same signed input. Every function of that name anywhere must give the brute-force |a|-top-k overlap."""
    rng = np.random.default_rng(0)
    exposed = _every_exposed("top_k_overlap")
    assert len(exposed) >= 2  # the home and at least one re-export
    for _ in range(20):
        a, b = rng.normal(size=9), rng.normal(size=9)
        b[rng.integers(0, 9, 3)] *= -1
        for k in (1, 3, 5):
            top = lambda v: set(sorted(range(9), key=lambda i: (-abs(v[i]), i))[:k])  # noqa: E731
            want = len(top(a) & top(b)) / k
            for where, fn in exposed:
                assert fn(a, b, k) == pytest.approx(want), where
    a = np.array([3.0, -2.0, 1.0])
    for where, fn in exposed:
        assert fn(a, -a, 2) == 1.0, where  # same magnitudes, opposite signs: same top-2 features


def test_both_integrated_gradients_are_complete_on_closed_forms():
    """Completeness (Sundararajan et al. 2017): attributions sum to f(x) - f(baseline); on f(x) = x1 x2 from
    0 the straight-line path gives each feature x1 x2 / 2 exactly (tabular), and the token-level method sums
    to the logit difference it reports (text, a tiny random BERT)."""
    import torch
    from torch import nn

    from explainers.gradients import integrated_gradients as tabular_ig

    class Product(nn.Module):
        def forward(self, x):
            return x[:, 0] * x[:, 1]

    e = tabular_ig(Product(), [2.0, 3.0], [0.0, 0.0], feature_names=("x1", "x2"), target="g", output_space="raw")
    np.testing.assert_allclose(e.values, [3.0, 3.0], rtol=1e-3)
    assert abs(e.values.sum() - 6.0) <= 0.01 * 6.0

    from transformers import AutoTokenizer, BertConfig, BertModel

    from explainers.text import TextClassifier, ZeroShotSentimentModel, integrated_gradients, minilm_model_dir
    from explainers.text._model import _find_attention_outputs, _freeze

    tok = AutoTokenizer.from_pretrained(minilm_model_dir(), local_files_only=True)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32, attn_implementation="eager")
    enc = BertModel(cfg, add_pooling_layer=False)
    module = _freeze(ZeroShotSentimentModel(enc, torch.randn(2, 16), scale=5.0))
    model = TextClassifier(module=module, tokenizer=tok, labels=("negative", "positive"),
                           word_embeddings=enc.get_input_embeddings(), attention_outputs=_find_attention_outputs(enc),
                           n_layers=1, n_heads=2, max_length=32, name="tiny")
    t = integrated_gradients(model, "a warm and clever film", target=1)
    gap = abs(float(np.sum(t.values)) - (t.prediction - t.base_value))
    assert gap <= 0.01 * abs(t.prediction - t.base_value) + 1e-6
