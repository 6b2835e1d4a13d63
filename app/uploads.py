"""Store uploaded files server-side, under one folder, with size limits and safe names.

The browser sends a file once; it is written under ``CANDOR_UPLOAD_DIR``
(default ``instance/uploads``) with a sanitised name and never sent back. Names
cannot escape the folder: directory parts, ``..``, drive letters, NUL bytes and
leading dots are removed, the result is checked to resolve inside the folder.
Only data suffixes and ``.skops`` are accepted: uploads are never unpickled.
"""
from __future__ import annotations

import base64
import binascii
import os
import re
import uuid
from pathlib import Path

from .errors import CandorError

ROOT = Path(__file__).resolve().parent.parent
MODEL_SUFFIXES = (".skops",)
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")
MAX_MODEL_BYTES = 50 * 2**20
MAX_DATA_BYTES = 50 * 2**20
"""The upload page's dcc.Upload enforces the same limits in the browser (base64 through Dash's JSON)."""


def upload_dir() -> Path:
    """The folder uploads go to (created on first use)."""
    folder = Path(os.environ.get("CANDOR_UPLOAD_DIR", ROOT / "instance" / "uploads")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def safe_name(filename: str) -> str:
    """The last path component of ``filename`` with only letters, digits, ``-``, ``_`` and ``.`` kept.

    Raises
    ------
    CandorError
        If nothing usable is left (e.g. ``".."``).
    """
    base = re.split(r"[\\/]", str(filename).replace("\x00", ""))[-1]
    base = re.sub(r"^[A-Za-z]:", "", base)
    base = re.sub(r"[^\w.\-]", "_", base, flags=re.ASCII).lstrip(".")
    if not base or set(base) <= {".", "_"}:
        raise CandorError(f"upload name {filename!r} has no usable file name")
    return base[:120]


def store_upload(filename: str, content: bytes | str, *, kind: str, folder: Path | None = None) -> Path:
    """Write one uploaded file and return its server-side path.

    Parameters
    ----------
    filename : str
        As sent by the browser (untrusted).
    content : bytes or str
        Raw bytes, or a ``data:...;base64,`` string as ``dcc.Upload`` gives it.
    kind : {"model", "data"}
    folder : Path, optional
        Default :func:`upload_dir`.

    Raises
    ------
    CandorError
        Wrong suffix, too large, not decodable, or a name that would leave the folder.
    """
    name = safe_name(filename)
    suffixes, limit = (MODEL_SUFFIXES, MAX_MODEL_BYTES) if kind == "model" else (DATA_SUFFIXES, MAX_DATA_BYTES)
    suffix = Path(name).suffix.lower()
    if suffix not in suffixes:
        extra = ("; PyTorch and pickle/joblib models load from the command line only (python -m app --model ...)"
                 if kind == "model" else "")
        raise CandorError(f"{name}: a {kind} upload must be one of {', '.join(suffixes)}{extra}")
    if isinstance(content, str):
        try:
            content = base64.b64decode(content.split(",", 1)[-1], validate=True)
        except (binascii.Error, ValueError):
            raise CandorError(f"{name}: the upload is not valid base64") from None
    if len(content) > limit:
        raise CandorError(f"{name}: {len(content) / 2**20:.1f} MiB is over the {limit / 2**20:.0f} MiB limit")
    folder = (folder or upload_dir()).resolve()
    target = (folder / f"{uuid.uuid4().hex[:12]}-{name}").resolve()
    if target.parent != folder:
        raise CandorError(f"upload name {filename!r} would leave the upload folder")
    target.write_bytes(content)
    return target
