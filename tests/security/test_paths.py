"""Issue 11, kind 4: no identifier from the browser reads a file the server did not store for that use.

Every id the browser sends back (the Text page's dataset and CoNLL-U ids, the Your model page's
model and data tokens) is looked up in the upload folder's index; ``../`` ids, absolute paths,
unregistered files and uploads of another kind are all "no longer on the server".
"""
from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from workspace import uploads
from app import services
from app.callbacks import text as text_cb
from workspace.errors import CandorError
from app.services import selection, text as text_services, text_data
from app.services import upload as upload_service

SECRET = "text,ssn\nquiet evening,123-45-6789\nloud morning,987-65-4321\n"
CONLLU = "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n"


def _b64(data: str) -> str:
    return "data:text/csv;base64," + base64.b64encode(data.encode()).decode()


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """Fresh upload and text folders; an uploaded data table of "another user" with a sensitive column."""
    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(text_services, "TEXT_DIR", tmp_path / "text")
    text_data._dataset.cache_clear()
    previous, chosen = services.state().workspace, selection.current()
    stored = upload_service.receive("people.csv", _b64(SECRET), "data")  # the other user's upload
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text(SECRET)
    (outside / "secret.conllu").write_text(CONLLU)
    yield tmp_path, stored
    text_data._dataset.cache_clear()
    selection.start(chosen, warm=False)
    if previous is not None:
        services.init(previous, warm=False)


def _traversal_ids(tmp_path: Path, stored) -> list[str]:
    """Ids that name files outside the text upload folder: relative, absolute, and the other user's upload."""
    text_uploads = text_services.TEXT_DIR / "uploads"
    text_uploads.mkdir(parents=True, exist_ok=True)
    rel = os.path.relpath(tmp_path / "outside" / "secret", text_uploads)
    theirs = os.path.relpath(tmp_path / "uploads" / Path(stored.token).stem, text_uploads)
    return [rel, str(tmp_path / "outside" / "secret"), theirs, "../" * 12 + str(tmp_path / "outside" / "secret"),
            stored.token, Path(stored.token).stem]


def test_text_dataset_ids_cannot_read_csv_files_outside_the_text_uploads(dirs):
    """Attack: a dcc.Store dataset id of ``../../x`` or ``/abs/x`` made the server read ``x.csv`` and list its
    columns and rows (the other user's ``ssn`` column); now every such id is refused as gone."""
    tmp_path, stored = dirs
    for bad in _traversal_ids(tmp_path, stored):
        spec = {"id": bad, "name": "x.csv", "columns": ["text", "ssn"], "text_column": "ssn", "label_column": None}
        with pytest.raises(CandorError, match="no longer on the server"):
            services.dataset(spec)
        options, value, note = text_cb.list_texts("ssn", None, spec)
        assert options == [] and value is None and "no longer on the server" in str(note.children)
        assert "123-45-6789" not in str(options) + str(note)


def test_text_dataset_callbacks_refuse_malformed_stores_with_a_message(dirs):
    """Attack: a store whose id is not a string (a list, a dict) or is missing crashed the callback with a
    traceback (TypeError/KeyError); now it is the same one-line "no longer on the server"."""
    for spec in ({"id": ["a"], "name": "x"}, {"name": "x"}, {"id": {"k": 1}}):
        options, _, note = text_cb.list_texts("text", None, spec)
        assert options == [] and "no longer on the server" in str(note.children)


def test_conllu_ids_cannot_read_files_outside_the_text_uploads(dirs):
    """Attack: the CoNLL-U id of the head analysis read any ``*.conllu`` by ``../``; now refused."""
    tmp_path, _ = dirs
    text_uploads = text_services.TEXT_DIR / "uploads"
    text_uploads.mkdir(parents=True, exist_ok=True)
    for bad in (os.path.relpath(tmp_path / "outside" / "secret", text_uploads), str(tmp_path / "outside" / "secret")):
        with pytest.raises(CandorError, match="no longer on the server"):
            text_data.read_trees(bad, "x.conllu")


def test_uploaded_text_dataset_still_works_through_its_id(dirs):
    """Attack: ids were content hashes, so anyone holding the same file (a public data set) could address another
    user's upload by hashing it; now each upload gets a fresh random id, read back only through the index, and a
    CSV id is not a CoNLL-U id (kinds are checked)."""
    data = _b64("text,label\ngood film,positive\nbad film,negative\n")
    info, again = services.save_csv_upload(data, "films.csv"), services.save_csv_upload(data, "films.csv")
    assert info["id"] != again["id"] and "/" not in info["id"]
    assert services.dataset(info).texts == ("good film", "bad film")
    with pytest.raises(CandorError, match="no longer on the server"):
        text_data.read_trees(info["id"], "films.csv")
    with pytest.raises(CandorError, match="no longer on the server"):
        upload_service.activate(info["id"], info["id"], "label")


def test_upload_tokens_resolve_only_through_the_index(dirs):
    """Attack: a token naming any file in the upload folder (one not stored as an upload, or an upload of the other
    kind) was accepted; now only ids the index records for that kind resolve."""
    tmp_path, stored = dirs
    folder = uploads.upload_dir()
    planted = "0123456789abcdef0123456789abcdef-planted.csv"
    (folder / planted).write_text(SECRET)
    for model_token, data_token in ((stored.token, stored.token), (planted, stored.token), ("index.json", planted),
                                    ("../outside/secret.csv", stored.token), (str(tmp_path / "outside/secret.csv"),
                                                                              stored.token)):
        with pytest.raises(CandorError, match="that upload is no longer on the server"):
            upload_service.activate(model_token, data_token, "ssn")
    with pytest.raises(CandorError, match="no longer on the server"):
        uploads.lookup(planted, ("data",))
    assert uploads.lookup(stored.token, ("data",)).path == folder / stored.token


def test_study_ids_match_whole_strings_only():
    """A study id reaches the file system as ``studies/<id>.yaml``: one with a trailing newline, a slash
    or dots is no study (``$`` used to accept ``"abc\\n"``)."""
    from study import runtime
    from study.schema import ID_RE

    assert ID_RE.match("trust-pilot_2") and not ID_RE.match("abc\n") and not ID_RE.match("../abc")
    assert runtime.get_study("abc\n") is None and runtime.get_study("../../etc/passwd") is None
