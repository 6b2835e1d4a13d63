"""One concept, one room (issue 12): the import graph has no cycle and respects the layers, and a public
name defined twice in ``explainers/`` means one concept whose definitions agree on a shared oracle.

Layers, lowest first: ``explainers/`` (pure computation) < ``workspace/``, ``accounts/``, ``study/``
(Dash-free domains) < ``app/``. Imports go down only; lazy imports inside functions count.
"""
from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.test_boundaries import _module_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("explainers", "workspace", "accounts", "study", "store", "app")
LOWER = {"explainers": set(), "workspace": {"explainers"}, "accounts": {"explainers", "workspace"},
         "study": {"explainers", "workspace", "accounts"}, "store": {"explainers", "workspace"},
         "app": {"explainers", "workspace", "accounts", "study", "store"}}
"""Packages each package may import (besides itself)."""


def _files() -> dict[str, Path]:
    files = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            files[".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")] = p
    return files


def _graph() -> dict[str, set[str]]:
    """Module -> project modules it imports (a name resolves to its longest module prefix); edges between a
    package and its own descendants are left out (a package's ``__init__`` re-exports its children)."""
    files = _files()

    def resolve(name):
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for m, p in files.items():
        deps = {resolve(i) for pkg in PACKAGES for i in _module_imports(p, pkg)}
        graph[m] = {d for d in deps if d and d != m and not (d.startswith(m + ".") or m.startswith(d + "."))}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index, low, stack, on, found, counter = {}, {}, [], set(), [], itertools.count()

    def visit(v):
        index[v] = low[v] = next(counter)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle():
    """The oracle of the next test: a three-module cycle and a self-contained module."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_project_import_graph_has_no_cycle():
    """No module of the project reaches itself through its imports (lazy ones included)."""
    assert _cycles(_graph()) == []


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
