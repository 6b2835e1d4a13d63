"""Which model, table and class every page explains, shared by all processes of one server launch.

A server launch may run several processes (gunicorn workers forked from a
``--preload`` master). Choosing another class in the navbar, or loading an
uploaded pair, must switch *every* process, or a reload served by another
worker would show the old model. The choice is therefore a small JSON file, a
:class:`Selection`, written atomically into a folder private to this launch;
every request first calls :func:`sync`, which costs one ``stat`` when nothing
changed and otherwise loads the selected workspace in this process too.

The file names the model and data by their paths on the server (uploads are
stored server-side, :mod:`workspace.uploads`), never their contents.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from workspace import limits, settings
from workspace.errors import CandorError
from workspace.settings import Settings
from workspace.workspace import Workspace, load_sample_workspace, load_user_workspace, one_vs_rest
from workspace.torch_options import TorchOptions
from ._core import init, state, workspace
from ._core import install as install_state

LAUNCH_UID = uuid.uuid4().hex
"""One id per server launch, shared by forked workers: keys the selection file and the job cache."""
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Selection:
    """What the pages explain: the user's files (or the bundled sample) and the class.

    Parameters
    ----------
    model, data : str or None
        Server-side paths of the model and the table; ``None`` for the bundled sample.
    target : str or None
        Target column of ``data``.
    target_class : str or None
        Class explained against the rest (multiclass); ``None`` for the default.
    trust_pickle : bool
        Whether the operator allowed pickle files on the command line.
    torch : dict or None
        :class:`workspace.torch_files.TorchOptions` of a PyTorch model, as a JSON object.
    features : str or None
        The features file given with ``--features-file`` or uploaded on the Your model page (else the one beside
        the data, if any).
    uploaded : bool
        The files came through the upload page: messages show the names the user uploaded,
        not the stored names (``<12 hex>-name``).
    generation : str
        Changes with every selection; a process reloads when it differs from its own.
    """

    model: str | None = None
    data: str | None = None
    target: str | None = None
    target_class: str | None = None
    trust_pickle: bool = False
    torch: dict | None = None
    features: str | None = None
    uploaded: bool = False
    generation: str = ""

    @classmethod
    def from_settings(cls, settings: Settings) -> Selection:
        """The selection ``settings`` name (``--model``/``CANDOR_MODEL`` ...), or the bundled sample: what
        ``python -m app`` serves, ``build`` stores and ``check`` and ``report`` read."""
        if not settings.model:
            return cls()
        torch = settings.torch
        return cls(model=str(settings.model), data=str(settings.data), target=settings.target,
                   target_class=settings.target_class, trust_pickle=settings.trust_pickle,
                   features=str(settings.features_file) if settings.features_file else None,
                   torch=asdict(torch) if torch.given() else None)

    def load(self) -> Workspace:
        """Load the workspace this selection names.

        Raises
        ------
        CandorError
            As :func:`workspace.workspace.load_user_workspace`.
        """
        if not self.model:
            return load_sample_workspace()
        if not self.uploaded:
            return load_user_workspace(self.model, self.data, self.target, trust_pickle=self.trust_pickle,
                                       target_class=self.target_class, torch_options=self.torch_options(),
                                       features_file=self.features)
        stored = (Path(self.model).name, Path(self.data).name) + ((Path(self.features).name,) if self.features else ())
        try:  # an upload is never trusted code; its features file (if one was uploaded) is read as plain data
            ws = load_user_workspace(self.model, self.data, self.target, target_class=self.target_class,
                                     features_file=self.features)
        except CandorError as err:
            raise CandorError(as_uploaded(str(err), *stored)) from None
        for shown in {id(ws): ws, id(ws.pair): ws.pair}.values():  # the pair: a class switch starts from it
            if shown is not None:
                shown.name = as_uploaded(shown.name, *stored)
                shown.source = as_uploaded(shown.source, *stored)
                shown.notes = tuple(as_uploaded(n, *stored) for n in shown.notes)
        return ws

    def torch_options(self) -> TorchOptions | None:
        """:attr:`torch` as :class:`~workspace.torch_files.TorchOptions` (JSON lists back to tuples), or ``None``."""
        if not self.torch:
            return None
        t = dict(self.torch)
        for key in ("classes", "feature_names"):  # JSON gives lists back
            t[key] = tuple(t[key]) if t.get(key) is not None else None
        return TorchOptions(**t)


def as_uploaded(text: str, *stored: str) -> str:
    """Replace stored upload names (``<12 hex>-name``) by the names the user uploaded."""
    for t in stored:
        text = text.replace(t, t.split("-", 1)[-1])
    return text


def shown_file_name(path) -> str:
    """The name people see for a file of the current selection: an upload's name as uploaded (never the stored
    name's internal id), else the file's own name (never the folder it is in)."""
    name = Path(path).name
    return as_uploaded(name, name) if current().uploaded else name


_lock = threading.Lock()
"""Held while this process writes or reads the selection file and installs what it names."""


def state_file() -> Path:
    """This launch's selection file (``CANDOR_STATE_DIR``, default ``.cache/state``)."""
    folder = Path(settings.current().state_dir)
    return folder / f"selection-{LAUNCH_UID}.json"


def current() -> Selection:
    """The selection this process explains (the installed :class:`~app.services.ServiceState`'s)."""
    return state().selection or Selection()


def start(selection: Selection, *, warm: bool | str = True) -> None:
    """Record what this process was started on (no file is written: other workers start on the same).

    ``warm`` (as :func:`app.services.init`) says whether later switches precompute the pages in a
    background thread (``True`` or ``"sync"``) or leave everything lazy (``False``).
    """
    install_state(state().replaced(selection=selection, warm_switches=bool(warm)))


def install(selection: Selection, ws: Workspace | None = None) -> Workspace:
    """Make ``selection`` what every process of this launch explains, starting with this one.

    Parameters
    ----------
    selection : Selection
        Its ``generation`` is replaced by a fresh one.
    ws : Workspace, optional
        The already loaded workspace of ``selection`` (saves loading it twice).

    Raises
    ------
    CandorError
        If the selection cannot be loaded, or the request's user lacks the analyst role; nothing changes then.
    """
    from ..serve.request_user import require_role

    require_role("analyst", "changing the model, the data or the class (for every user)")
    selection = replace(selection, generation=uuid.uuid4().hex,  # as every process will read it back:
                        torch=json.loads(json.dumps(selection.torch)) if selection.torch else None)
    ws = ws or selection.load()
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with _lock:
        tmp.write_text(json.dumps(asdict(selection)))
        os.replace(tmp, path)  # atomic: a reader sees the old file or the new one, never half of one
        _install(ws, selection, path.stat().st_mtime_ns)
    return ws


def sync() -> None:
    """Load the launch's selection if another process changed it (called before every request).

    A selection that fails to load here (a file deleted since) is logged and
    this process keeps explaining what it had.
    """
    path = state_file()
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return
    if mtime == state().seen_mtime:
        return
    with _lock:
        try:
            mtime = path.stat().st_mtime_ns
            if mtime == state().seen_mtime:
                return
            chosen = Selection(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            log.warning("candor: unreadable selection file %s: %s", path, exc)
            return
        state().seen_mtime = mtime
        if chosen.generation == current().generation:
            return
        try:
            ws = chosen.load()
        except CandorError as err:
            log.warning("candor: could not load the selection of another worker: %s", err)
            return
        _install(ws, chosen, mtime)


def _install(ws: Workspace, selection: Selection, mtime: int) -> None:
    """Install ``ws``, loaded from ``selection`` (the file read at ``mtime``), warmed as the server says."""
    limits.one_openmp_thread()  # an uploaded model's libraries (LightGBM's OpenMP) are loaded by now
    init(ws, warm=state().warm_switches, selection=selection)
    state().seen_mtime = mtime


def class_choices() -> tuple[tuple[str, ...], str | None]:
    """The classes a user can explain one against the rest, and the current one.

    Returns ``((), None)`` unless the workspace is a multiclass classifier.
    """
    ws = workspace()
    if ws.task != "multiclass":
        return (), None
    return ws.adapter.class_names, ws.classes[1]


def select_class(name: str) -> str:
    """Explain class ``name`` against the rest, on every page and in every worker; returns a one-line summary.

    Raises
    ------
    CandorError
        If ``name`` is not one of the model's classes, or the workspace has no classes to choose.
    """
    choices, now = class_choices()
    if not choices:
        raise CandorError("this model has no classes to choose from (only multiclass models do)")
    if name not in choices:
        raise CandorError(f"class {name!r} is not one of the model's classes: {', '.join(choices)}")
    if name != now:  # this process re-slices what it loaded; other workers load the files again
        install(replace(current(), target_class=name), one_vs_rest(workspace(), name))
    return f"Explaining class {name!r} against the rest."
