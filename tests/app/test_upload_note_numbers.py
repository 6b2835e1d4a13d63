"""The upload page's note reads sizes as people read them ("1,862 KiB", as the house formatter writes them)."""
from app.callbacks.upload import _stored_note
from app.services.upload import Stored


def test_stored_note_groups_thousands():
    size = 1_906_190  # the new user's wine.skops, shown as "1862 KiB" before
    note = _stored_note(Stored("t", "wine.skops", size, tuple(f"c{i}" for i in range(1_200)))).children
    assert f"({round(size / 1024):,} KiB, 1,200 columns)" in note and "(1,862 KiB" in note
    assert "(0.5 KiB)" in _stored_note(Stored("t", "tiny.csv", 512)).children
