"""A cached surrogate belongs to the model and table it was fitted on, not to a file name (attack F1's kind;
the report engineer saw the key was ``workspace.source``): the cache outlives the server, so a model
re-trained into the same file was answered with the old model's surrogate."""
import dataclasses

from sklearn.tree import DecisionTreeClassifier

from app import services
from app.services import surrogates
from workspace.workspace import adapted_workspace


def _key(ws):
    services.init(ws, warm=False)
    return surrogates._key("muse", {"max_rules": 5})


def test_same_file_name_other_model_other_key_and_same_content_same_key(sample_workspace):
    ws = sample_workspace
    # another model re-trained on the same rows (a shallow tree: an unscaled logistic regression took 1,900 L-BFGS
    # iterations, 7.5 s of CPU, for the same purpose)
    other = DecisionTreeClassifier(max_depth=3, random_state=0).fit(ws.X.iloc[ws.train_idx], ws.y[ws.train_idx])
    retrained = adapted_workspace(other, ws.X, ws.y, classes=ws.classes, target=ws.target, train_idx=ws.train_idx,
                                  test_idx=ws.test_idx, name=ws.name, source=ws.source, metadata=ws.metadata)
    assert retrained.source == ws.source
    first, again, other_key = _key(ws), _key(dataclasses.replace(ws)), _key(retrained)
    services.init(ws, warm=False)
    assert first == again and first != other_key
    resplit = dataclasses.replace(ws, train_idx=ws.train_idx[1:])
    assert _key(resplit) != first
    services.init(ws, warm=False)


def test_the_default_surrogate_is_fitted_again_when_its_cached_result_has_gone(sample_workspace, tmp_path):
    """The default MUSE's key is remembered for the process; its result lives in the shared cache, which may lose it
    (evicted, the folder cleared or another folder set). Asking for the default then fitted it again under the same
    key, instead of answering "that surrogate is no longer cached" (found as an order dependence of the report's
    tests: a report built in a fresh cache folder after another test had fitted the default in its own)."""
    from workspace import settings

    services.init(sample_workspace, warm=False)
    with settings.overridden(cache_dir=tmp_path / "first"):
        key = services.default_muse_key()
        first = services.muse_view(key)
    with settings.overridden(cache_dir=tmp_path / "second"):  # the remembered key, a cache that never held it
        assert key not in surrogates._results()
        again = services.default_muse_key()
        assert again == key and key in surrogates._results()
        assert services.muse_view(again).rule_set == first.rule_set
    services.init(sample_workspace, warm=False)
