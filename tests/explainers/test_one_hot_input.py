"""A one-hot Pipeline's final step called on the array built from the levels (``explainers._one_hot_input``) gives
the Pipeline's own outputs bit for bit, and the OneHotEncoder no longer runs on a LIME neighbourhood's strings.

Oracle: the Pipeline's own ``predict_proba`` / ``predict`` / ``decision_function`` on the decoded table, on real data
(UCI Adult, ``shared/data``: 8 string columns with missing levels, 6 numbers) and on LIME's own neighbourhoods
(:class:`explainers._lime_sampler.LimeSpace`); equality with ``np.array_equal``, not a tolerance.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from explainers import LimeExplainer
from explainers._codec import TabularCodec
from explainers._lime_sampler import LimeSpace
from explainers.model_adapter import ModelAdapter, whole_pipeline
from tests.shared_data import adult_data

STRINGS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def adult():
    df = adult_data().sample(3000, random_state=0).reset_index(drop=True)
    X, y = df.drop(columns=["income"]), df["income"]
    codec = TabularCodec(X)
    Z = codec.encode(X).to_numpy()
    space = LimeSpace(Z[:2000], codec.categorical)  # LIME's neighbourhood of held-out rows, as the explainer draws it
    hood = np.concatenate([space.sample(Z[r], 400, seed=r)[1] for r in (2000, 2001, 2500)])
    return X, y, codec, Z, hood


def _one_hot(final, **encoder):
    prep = ColumnTransformer([("str", OneHotEncoder(**{"handle_unknown": "ignore", "sparse_output": False, **encoder}),
                               STRINGS)], remainder="passthrough")
    return Pipeline([("prep", prep), ("model", final)])


def _count_encoder_calls(monkeypatch) -> list:
    calls, own = [], OneHotEncoder.transform

    def counted(self, X, *args, **kwargs):
        calls.append(len(X))
        return own(self, X, *args, **kwargs)

    monkeypatch.setattr(OneHotEncoder, "transform", counted)
    return calls


@pytest.mark.parametrize("final", [HistGradientBoostingClassifier(max_iter=30, random_state=0),
                                   RandomForestClassifier(20, random_state=0), LogisticRegression(max_iter=300)],
                         ids=["hgb", "forest", "logistic"])
def test_outputs_equal_the_pipelines_on_lime_neighbourhoods_without_encoding_strings(adult, final, monkeypatch):
    X, y, codec, Z, hood = adult
    pipe = _one_hot(final).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    # the held-out rows' neighbourhoods (levels the fit never saw among them), the held-out rows, the first 20
    own = pipe.predict_proba(codec.decode(hood)), pipe.predict(X.iloc[2000:]), pipe.predict_proba(X.iloc[:20])
    one = pipe.predict_proba(X.iloc[:1])
    calls = _count_encoder_calls(monkeypatch)
    assert np.array_equal(adapter.outputs(hood), own[0])  # the first call checks the shortcut on its probes
    calls.clear()
    assert np.array_equal(adapter.outputs(pd.DataFrame(hood, columns=codec.names)), own[0])
    assert np.array_equal(adapter.predict(Z[2000:]), own[1])
    assert calls == []  # 1,200 neighbourhood rows and 1,000 rows never went through the OneHotEncoder (before: always)
    assert np.array_equal(adapter.outputs(Z[:20]), own[2]) and np.array_equal(adapter.outputs(Z[:1]), one)
    assert calls == []  # small calls take the shortcut too (before: [20])
    with whole_pipeline():
        assert np.array_equal(adapter.outputs(Z[:20]), own[2])
    assert calls == [20]  # but not within whole_pipeline (the mutation guard's fingerprint)


def test_small_calls_take_the_shortcut_bit_for_bit_and_a_fingerprint_goes_whole(adult, monkeypatch):
    X, y, codec, Z, _ = adult
    pipe = _one_hot(HistGradientBoostingClassifier(max_iter=30, random_state=0)).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    adapter.outputs(Z[:100])  # the shortcut is made and checked
    # the Persuasive row view's small calls: a row alone and an erasure curve's 15 rows (d + 1), on held-out rows
    small = [Z[2000:2001], Z[2500:2515], Z[2100:2163]]
    own = [pipe.predict_proba(codec.decode(rows)) for rows in small]
    calls = _count_encoder_calls(monkeypatch)
    assert all(np.array_equal(adapter.outputs(rows), o) for rows, o in zip(small, own))
    assert calls == []  # before: [1, 15, 63], the OneHotEncoder on the strings every time
    adapter.fingerprint(Z[:20])
    assert calls == [20]  # the fingerprint goes through the whole Pipeline


@pytest.mark.parametrize("final", [HistGradientBoostingClassifier(max_iter=30, random_state=0),
                                   RandomForestClassifier(20, random_state=0)], ids=["hgb", "forest"])
def test_the_tree_views_input_is_the_preprocessings_own_array_without_encoding_strings(adult, final, monkeypatch):
    """Exact Tree SHAP and the Persuasive page's expectations in the trees read a one-hot Pipeline's trees on the
    array its preprocessing gives (``ModelAdapter.tree_view``): built from the levels, equal to the
    ColumnTransformer's own (``np.array_equal``), except within ``whole_pipeline``."""
    X, y, codec, Z, hood = adult
    pipe = _one_hot(final).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    view = adapter.tree_view()
    rows = [Z[2000:2001], Z[2000:2100], hood[:300]]
    own = [pipe[:-1].transform(codec.decode(r)).astype(float) for r in rows]
    if not isinstance(final, HistGradientBoostingClassifier):  # scikit-learn's classic trees compare float32
        own = [o.astype(np.float32).astype(float) for o in own]
    view.transform(Z[:5])  # the shortcut is made and checked
    calls = _count_encoder_calls(monkeypatch)
    assert all(np.array_equal(view.transform(r), o) for r, o in zip(rows, own))
    assert calls == []  # before: [1, 100, 300], the OneHotEncoder on the strings for every row explained
    with whole_pipeline():
        assert np.array_equal(view.transform(rows[0]), own[0])
    assert calls == [1]


def test_the_fingerprint_sees_a_preprocessing_step_changed_in_place(adult):
    X, y, codec, Z, _ = adult
    pipe = _one_hot(HistGradientBoostingClassifier(max_iter=30, random_state=0)).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    fast, before = adapter.outputs(Z[:20]), adapter.fingerprint(Z[:20])
    levels = pipe.named_steps["prep"].named_transformers_["str"].categories_[STRINGS.index("sex")]
    levels[[0, 1]] = levels[[1, 0]]  # the fitted encoder changed in place: Female and Male swapped
    assert not np.array_equal(pipe.predict_proba(X.iloc[:20]), fast)  # the model's own outputs moved
    assert adapter.fingerprint(Z[:20]) != before  # the guard's fingerprint sees it
    assert np.array_equal(adapter.outputs(Z[:20]), fast)  # the shortcut, its blocks made before, cannot


def test_regressor_margin_and_a_one_hot_encoder_that_drops_a_level_give_the_pipelines_outputs(adult, monkeypatch):
    X, y, codec, _, hood = adult
    target = X["hours-per-week"].to_numpy(float)
    reg = _one_hot(HistGradientBoostingRegressor(max_iter=20, random_state=0), drop="if_binary",
                   handle_unknown="infrequent_if_exist", min_frequency=20).fit(X, target)
    margin = _one_hot(RidgeClassifier()).fit(X, y)  # decision_function only: the adapter's "margin" outputs
    calls = _count_encoder_calls(monkeypatch)
    for pipe, own in ((reg, reg.predict(codec.decode(hood))[:, None]),
                      (margin, margin.decision_function(codec.decode(hood))[:, None])):
        adapter = ModelAdapter(pipe, codec)
        assert adapter.kind == ("raw" if pipe is reg else "margin")
        adapter.outputs(hood[:100])  # the shortcut is made and checked
        calls.clear()
        assert np.array_equal(adapter.outputs(hood), own) and calls == []


def test_numbers_through_their_own_imputer_and_scaler_give_the_pipelines_outputs(adult, monkeypatch):
    """The usual user pipeline (tests/byo, the Cohorts page's Adult test): numbers imputed and scaled beside the
    one-hot levels. The scaler is given its columns as the ColumnTransformer gives them; no string is encoded again."""
    X, y, codec, Z, hood = adult
    numbers = [c for c in X.columns if c not in STRINGS]
    scaled = Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())])
    pipe = Pipeline([("prep", ColumnTransformer([("str", OneHotEncoder(handle_unknown="ignore"), STRINGS),
                                                 ("num", scaled, numbers)], sparse_threshold=0)),
                     ("model", LogisticRegression(max_iter=300))]).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    with_nan = hood[:50].copy()
    with_nan[::7, X.columns.get_loc("age")] = np.nan  # the imputer's median where a number is missing
    own = [pipe.predict_proba(codec.decode(rows)) for rows in (hood, Z[2000:2001], with_nan)]
    adapter.outputs(hood[:100])  # the shortcut is made and checked
    calls = _count_encoder_calls(monkeypatch)
    assert all(np.array_equal(adapter.outputs(rows), o) for rows, o in zip((hood, Z[2000:2001], with_nan), own))
    assert calls == []  # before: [1200, 1, 50], the OneHotEncoder on the strings every call


@pytest.mark.parametrize("variant", ["numbers mixed", "sparse output", "unknown level raises"])
def test_a_pipeline_the_shortcut_does_not_cover_is_called_whole(adult, variant, monkeypatch):
    X, y, codec, Z, hood = adult
    if variant == "numbers mixed":  # an output made of several numbers (PCA): not one transformed column per number
        numbers = [c for c in X.columns if c not in STRINGS]
        pipe = Pipeline([("prep", ColumnTransformer([("str", OneHotEncoder(handle_unknown="ignore"), STRINGS),
                                                     ("num", PCA(2), numbers)], sparse_threshold=0)),
                         ("model", LogisticRegression(max_iter=300))])
    else:
        pipe = _one_hot(RandomForestClassifier(10, random_state=0),
                        **({"sparse_output": True} if variant == "sparse output" else {"handle_unknown": "error"}))
    pipe.fit(X.iloc[:2000], y.iloc[:2000])
    if variant == "unknown level raises":  # the table has levels the fit never saw: rows holding none of them
        seen = np.all([np.isin(hood[:, j], Z[:2000, j]) for j in codec.categorical], axis=0)
        j = X.columns.get_loc("native-country")
        assert len(codec.columns[j].levels) > len(np.unique(Z[:2000, j]))  # so the shortcut's probe raises
        hood = hood[seen]
    adapter = ModelAdapter(pipe, codec)
    own = pipe.predict_proba(codec.decode(hood))
    adapter.outputs(hood[:100])  # where the shortcut is tried, it is tried here
    calls = _count_encoder_calls(monkeypatch)
    assert np.array_equal(adapter.outputs(hood), own)
    assert calls == [len(hood)]  # the encoder ran on the strings, as before


def test_lime_explanations_are_the_same_through_the_shortcut(adult):
    X, y, codec, Z, _ = adult
    pipe = _one_hot(HistGradientBoostingClassifier(max_iter=30, random_state=0)).fit(X.iloc[:2000], y.iloc[:2000])
    adapter = ModelAdapter(pipe, codec)
    cats = {j: [codec.columns[j].label(i) for i in range(len(codec.columns[j].levels))] for j in codec.categorical}
    train = pd.DataFrame(Z[:2000], columns=codec.names)
    made = [LimeExplainer(fn, training_data=train, class_names=("<=50K", ">50K"), categorical_names=cats,
                          missing_columns=codec.categorical)
            for fn in (lambda a: adapter.outputs(pd.DataFrame(a, columns=codec.names)),
                       lambda a: pipe.predict_proba(codec.decode(a)))]
    fast, whole = (lime.explain(Z[2100], num_samples=1000) for lime in made)
    assert np.array_equal(fast.values, whole.values) and fast.prediction == whole.prediction
    assert fast.params["standard_error"] == whole.params["standard_error"]
    assert fast.params["heldout_r2"] == whole.params["heldout_r2"]
