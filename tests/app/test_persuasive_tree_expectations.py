"""The Persuasive page's ERASER expectations on the bundled sample (a GradientBoostingClassifier) are taken in its
trees (``explainers.tree_shap.HybridOutputs``), and equal the hybrid rows given to the model one by one."""
import numpy as np

from explainers.persuasive import masked_outputs
from explainers.tree_shap import HybridOutputs


def test_the_sample_story_uses_the_trees_and_gets_the_model_calls_numbers(sample_workspace):
    from app.services import persuasive as sp
    from app.services.tabular import background, predict_positive

    assert isinstance(sp._hybrid(), HybridOutputs)
    ctx = sp._row_context(7)
    assert ctx.predict_fn is sp.explained_output
    x, bg = sample_workspace.X.iloc[7].to_numpy(dtype=float), background().to_numpy(dtype=float)
    d = len(x)
    order = np.argsort(-np.abs(x - bg.mean(axis=0)))
    sets = [order[:k] for k in range(d + 1)] + [order[k:] for k in range(1, d)]
    got = masked_outputs(sp.explained_output, x, sets, bg)
    by_rows = []
    for keep in sets:  # the definition, row by row through the user's model
        rows = bg.copy()
        rows[:, keep] = x[keep]
        by_rows.append(predict_positive(rows).mean())
    np.testing.assert_allclose(got, by_rows, rtol=0, atol=1e-12)
    assert got[0] != got[-1]  # the sets matter: keeping every feature gives the row's own prediction
    np.testing.assert_allclose(got[d], predict_positive(x[None, :])[0], rtol=0, atol=1e-12)
