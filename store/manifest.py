"""Reading and checking a store's manifest and files before anything in them is used.

Every check fails with one line (:class:`~workspace.errors.CandorError`) that names the store and
what is wrong: too large, not a Candor store, another format version, a file missing, of another size
or another SHA-256 than the manifest says (tampered or half-copied), a file name outside the store or
of a kind that could run code, or a model or data other than the ones it was built for.
"""
from __future__ import annotations

import json
from pathlib import Path

from workspace.errors import CandorError
from .format import ALLOWED_SUFFIXES, FORMAT_VERSION, MANIFEST, MAX_MANIFEST_BYTES
from .hashes import file_sha256


def read_manifest(folder: Path) -> dict:
    """The manifest of the store in ``folder``, its size checked before it is read.

    Raises
    ------
    CandorError
        If it is missing, larger than :data:`~store.format.MAX_MANIFEST_BYTES`, not JSON, not a
        Candor store, or of another format version.
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise CandorError(f"store {folder}: no {MANIFEST} there; build one with: python -m app build ... --out {folder}")
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise CandorError(f"store {folder}: {MANIFEST} is {size:,} bytes, over the {MAX_MANIFEST_BYTES:,}-byte limit")
    try:
        manifest = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise CandorError(f"store {folder}: {MANIFEST} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "candor-store":
        raise CandorError(f"store {folder}: {MANIFEST} is not a Candor store's manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CandorError(f"store {folder}: format version {manifest.get('format_version')!r}, this Candor reads "
                          f"version {FORMAT_VERSION}; rebuild it with python -m app build")
    if not isinstance(manifest.get("files"), dict):
        raise CandorError(f"store {folder}: {MANIFEST} lists no files")
    return manifest


def check_files(folder: Path, manifest: dict, max_bytes: int) -> None:
    """Check every file the manifest names: a plain name of an allowed kind, its size, then its SHA-256.

    Sizes are compared (and their sum against ``max_bytes``) before any file is read.

    Raises
    ------
    CandorError
        Naming the first file that is missing, misnamed, resized or altered, or the total over the limit.
    """
    folder = Path(folder)
    total = 0
    for name, entry in manifest["files"].items():
        if (not isinstance(name, str) or Path(name).name != name or name.startswith(".")
                or not name.endswith(ALLOWED_SUFFIXES)):
            raise CandorError(f"store {folder}: the manifest names {name!r}, not a file this store format has")
        path = folder / name
        if not path.is_file():
            raise CandorError(f"store {folder}: {name} is missing")
        size = path.stat().st_size
        if not isinstance(entry, dict) or size != entry.get("bytes"):
            raise CandorError(f"store {folder}: {name} is {size:,} bytes, the manifest says {entry.get('bytes')!r} "
                              "(tampered with or half-copied); rebuild the store")
        total += size
    if total > max_bytes:
        raise CandorError(f"store {folder}: {total / 2**20:,.1f} MiB of files, over the {max_bytes / 2**20:,.0f} MiB "
                          "limit (CANDOR_MAX_STORE_MB)")
    for name, entry in manifest["files"].items():
        if file_sha256(folder / name) != entry.get("sha256"):
            raise CandorError(f"store {folder}: {name} does not match the SHA-256 in its manifest (tampered with "
                              "or corrupted); rebuild the store")


def check_hashes(folder: Path, manifest: dict, model_sha256: str, data_sha256: str) -> None:
    """Refuse a store built for another model or data.

    Raises
    ------
    CandorError
        Naming which of the two differs, with both hashes' first 12 digits.
    """
    for what, given in (("model", model_sha256), ("data", data_sha256)):
        built = (manifest.get(what) or {}).get("sha256")
        if built != given:
            raise CandorError(f"store {folder} was built for another {what} (SHA-256 {str(built)[:12]}…, this "
                              f"{what} is {given[:12]}…); rebuild it with python -m app build")
