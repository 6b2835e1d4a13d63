"""The table of tabular methods (issue 24): one list that services, build, check, the store's format and the
report read, so that adding a method is its entry, its explainer and its view.

Before the table, ``store/format.py`` said ``METHODS = ("shap", "lime")``, the build zipped ``("shap", shap),
("lime", lime)``, and check printed each by name; these tests import what did not exist then.
"""
from __future__ import annotations

from explainers.methods import ROW_PARTS, TABULAR
from explainers.persuasive import gilpin_label


def test_the_services_table_and_the_facts_list_the_same_methods_in_the_same_order():
    from app.services import methods

    assert [m.name for m in methods.TABLE] == [f.name for f in TABULAR]
    assert all(m.facts is f for m, f in zip(methods.TABLE, TABULAR))
    for m in methods.TABLE:  # a local method computes rows; a global one its one result
        assert (m.row is not None and m.live_rows is not None) == (m.facts.scope == "local"), m.name
        assert (m.result is not None) == (m.facts.scope == "global"), m.name
        assert m.facts.stored != "document" or m.facts.scope == "global", m.name


def test_the_store_format_is_read_from_the_table():
    from store import format as fmt
    from store.structure import required

    assert fmt.METHODS == ("shap", "lime")  # the same per-row files as every store built so far
    assert set(fmt.DOCUMENTS.values()) == {f.name for f in TABULAR if f.stored == "document"}
    for f in TABULAR:
        for name, holds in f.files().items():
            assert fmt.HOLDS[name] == holds  # a file a manifest may name, with what it holds
    assert {f"shap_{p}.npy" for p in ROW_PARTS} | {f"lime_{p}.npy" for p in ROW_PARTS} <= required(3)
    assert not set(fmt.DOCUMENTS) & required(3)  # documents are optional: older stores open without them


def test_gilpin_labels_of_the_tabular_methods_come_from_their_entries():
    for f in TABULAR:
        label = gilpin_label(f.name)
        assert (label.primary, label.subtype, label.scope, label.default_metric) == f.gilpin
    assert gilpin_label("lime").subtype == "linear proxy model" and gilpin_label("shap").scope == "local"
