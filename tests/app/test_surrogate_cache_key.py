"""A cached surrogate belongs to the model and table it was fitted on, not to a file name (attack F1's kind;
the report engineer saw the key was ``workspace.source``): the cache outlives the server, so a model
re-trained into the same file was answered with the old model's surrogate."""
import dataclasses

from sklearn.linear_model import LogisticRegression

from app import services
from app.services import surrogates
from workspace.workspace import adapted_workspace


def _key(ws):
    services.init(ws, warm=False)
    return surrogates._key("muse", {"max_rules": 5})


def test_same_file_name_other_model_other_key_and_same_content_same_key(sample_workspace):
    ws = sample_workspace
    other = LogisticRegression(max_iter=2000).fit(ws.X.iloc[ws.train_idx], ws.y[ws.train_idx])
    retrained = adapted_workspace(other, ws.X, ws.y, classes=ws.classes, target=ws.target, train_idx=ws.train_idx,
                                  test_idx=ws.test_idx, name=ws.name, source=ws.source, metadata=ws.metadata)
    assert retrained.source == ws.source
    first, again, other_key = _key(ws), _key(dataclasses.replace(ws)), _key(retrained)
    services.init(ws, warm=False)
    assert first == again and first != other_key
    resplit = dataclasses.replace(ws, train_idx=ws.train_idx[1:])
    assert _key(resplit) != first
    services.init(ws, warm=False)
