"""Which pages apply: families declare what they need (``is_compatible``), pages declare their family."""
import pytest

from app.services.applicable import FAMILIES, SEE_ALSO
from explainers.capabilities import Capabilities

PROBA = Capabilities(task="binary", output_kind="probability", n_classes=2, has_attention_model=True)


def test_every_family_applies_to_the_bundled_sample_kind_of_model():
    assert all(check(PROBA) is None for check in FAMILIES.values())


@pytest.mark.parametrize("caps, family, start", [
    (Capabilities("regression", "raw"), "surrogate", "Rule surrogates (MUSE, CART) imitate a classifier's labels"),
    (Capabilities("binary", "margin", 2), "persuasive", "The persuasive layer measures"),
    (Capabilities("multiclass", "label", 3), "persuasive", "The persuasive layer measures"),
    (Capabilities("binary", "probability", 2), "attention", "The Attention page explains the bundled"),
])
def test_a_family_that_does_not_apply_says_why(caps, family, start):
    assert FAMILIES[family](caps).startswith(start)


def test_margin_reason_names_the_units_and_where_to_look():
    from app import services
    from app.services import applicable

    why = FAMILIES["persuasive"](Capabilities("binary", "margin", 2))
    assert why.endswith("this model gives decision_function margins.")
    assert SEE_ALSO["persuasive"] == "The Descriptive page explains it in those units."
    assert services.why_not is applicable.why_not and services.why_not(None) is None


def test_pages_declare_a_known_family():
    """The pages that need a family say so in ``register_page(..., requires=REQUIRES)`` (read from source:
    importing a page needs a Dash app)."""
    import ast
    from pathlib import Path

    pages = Path(__file__).resolve().parents[2] / "app" / "pages"
    declared = {}
    for path in pages.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["REQUIRES"]:
                declared[path.stem] = node.value.value
    assert declared == {"surrogate": "surrogate", "persuasive": "persuasive", "attention": "attention", "cohorts": "cohorts"}
    assert set(declared.values()) <= set(FAMILIES)
