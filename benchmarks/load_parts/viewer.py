"""A logged-in viewer as the browser drives Candor: a page is the Dash requests dash-renderer sends for it.

The requests are read from the app itself, never written here: ``/_dash-dependencies`` gives each callback's
inputs, state and outputs, and ``/_dash-layout`` plus the page's ``_pages_content`` answer give the values the
components start with. Opening a page (the first one: ``GET`` of the page, the layout and the dependencies)
sends Dash's page callback, then every server callback whose inputs are all on the page and that does not
``prevent_initial_call``, in waves: a callback whose input another one sets waits for it and gets its answer.
A row change sends the page's callbacks whose inputs include the row box (Model & data: the row it asks for,
``overview-row-wanted``, which a clientside callback sets from the box). Clientside callbacks run in the
browser and are not sent.
"""
from __future__ import annotations

import json
import random
import re
import threading
import time

import requests

ROW_INPUTS = ("row-input.value", "overview-row-wanted.data")
MAX_POLLS = 240
"""A background callback (the Surrogate page's frontier) is polled as the renderer polls it, at most this often."""
"""What a row change sets: the navbar's row box, and the Model & data page's copy of it (a clientside callback)."""


def component_key(cid) -> str:
    """A component id as a dictionary key (a dict id as sorted JSON, as Dash writes it)."""
    return json.dumps(cid, sort_keys=True, separators=(",", ":")) if isinstance(cid, dict) else str(cid)


def layout_props(node, into: dict | None = None) -> dict:
    """``{component key: props}`` of every component with an id in a Dash layout (JSON as Dash sends it)."""
    into = {} if into is None else into
    if isinstance(node, list):
        for child in node:
            layout_props(child, into)
    elif isinstance(node, dict):
        if "props" in node and "type" in node:
            props = node["props"]
            if "id" in props:
                into[component_key(props["id"])] = props
            for value in props.values():
                if isinstance(value, (dict, list)):
                    layout_props(value, into)
        else:
            for value in node.values():
                layout_props(value, into)
    return into


def is_wildcard(cid) -> bool:
    """Whether a dependency's id is a pattern (a dict with a ``["ALL"]``, ``["MATCH"]`` ... value)."""
    return isinstance(cid, dict) and any(isinstance(v, list) for v in cid.values())


def is_all(cid) -> bool:
    """Whether a dependency's id is an ``ALL`` pattern (every other key fixed)."""
    return is_wildcard(cid) and all(v == ["ALL"] for v in cid.values() if isinstance(v, list))


def matching(cid: dict, props: dict) -> list[dict]:
    """The ids of the components in ``props`` an ``ALL`` pattern matches, in the page's order."""
    fixed = {k: v for k, v in cid.items() if not isinstance(v, list)}
    out = []
    for key in props:
        if key.startswith("{"):
            other = json.loads(key)
            if other.keys() == cid.keys() and all(other[k] == v for k, v in fixed.items()):
                out.append(other)
    return out


def parse_outputs(spec: str) -> list[dict]:
    """``[{"id", "property"}]`` of a dependency's output text (``..a.x...b.y..``; ids may be JSON; ``@hash`` dropped)."""
    out = []
    for part in (spec[2:-2].split("...") if spec.startswith("..") else [spec]):
        name, prop = part.rsplit(".", 1)
        out.append({"id": json.loads(name) if name.startswith("{") else name, "property": prop.split("@")[0]})
    return out


class App:
    """The app's server callbacks (from ``/_dash-dependencies``) and the shell's starting values."""

    def __init__(self, deps: list[dict], shell: dict):
        self.server = [d for d in deps if d.get("clientside_function") is None]
        self.shell = layout_props(shell)
        self.pages = next(d for d in self.server if "_pages_content.children" in d["output"])

    @staticmethod
    def _ids(items: list[dict]) -> list[str]:
        return [f"{component_key(i['id'])}.{i['property']}" for i in items]

    def _present(self, dep: dict, props: dict) -> bool:
        """Whether every input and output of ``dep`` is on the page; an ``ALL`` wildcard matches any number of
        components, none included (the what-if editor's controls until it is opened); ``MATCH`` callbacks are left
        out."""
        items = dep["inputs"] + parse_outputs(dep["output"])
        if any(is_wildcard(i["id"]) and not is_all(i["id"]) for i in items):
            return False
        return all(is_all(i["id"]) or component_key(i["id"]) in props for i in items)

    def initial(self, props: dict) -> list[list[dict]]:
        """The server callbacks dash-renderer fires when a page with components ``props`` opens, in waves."""
        todo = [d for d in self.server if d is not self.pages and d.get("prevent_initial_call") is not True
                and self._present(d, props)]
        waves = []
        set_by = {o: d for d in todo for o in self._ids(parse_outputs(d["output"]))}
        while todo:
            ready = [d for d in todo if all(i not in set_by or set_by[i] is d or set_by[i] not in todo
                                            for i in self._ids(d["inputs"]))]
            ready = ready or todo  # a cycle: fire the rest
            waves.append(ready)
            todo = [d for d in todo if d not in ready]
        return waves

    def row_callbacks(self, props: dict) -> list[dict]:
        """The page's server callbacks a row change sends."""
        return [d for d in self.server if d is not self.pages and self._present(d, props)
                and any(i in ROW_INPUTS for i in self._ids(d["inputs"]))]


class Viewer:
    """One logged-in viewer: opens a page, then every ``think`` seconds changes the row or the page.

    Parameters
    ----------
    base : str
        ``http://127.0.0.1:PORT``.
    name, password : str
        A viewer account of the users file.
    pages : list of str
        Paths it moves between (``/``, ``/descriptive`` ...).
    rows : list of int
        Rows it picks from.
    record : callable
        ``record(kind, page, seconds, ok, detail)`` for every request.
    seed : int
        Its own random stream (pages, rows, think times).
    """

    def __init__(self, base: str, name: str, password: str, pages: list[str], rows: list[int], record, seed: int,
                 *, think: float = 2.0, page_share: float = 0.25, seen: set | None = None,
                 lock: threading.Lock | None = None):
        self.base, self.name, self.password = base, name, password
        self.pages, self.rows, self.record, self.think, self.page_share = pages, rows, record, think, page_share
        self.rng = random.Random(seed)
        self.http = requests.Session()
        self.http.headers.update({"Origin": base, "Referer": base + "/"})
        self.app: App | None = None
        self.resends = 0
        self.end_id = ""  # the page load's signed token, echoed on every callback (Dash's background handles)
        self.props: dict = {}
        self.page, self.row = pages[0], rows[0]
        self.seen = set() if seen is None else seen  # (page, row) pairs any viewer asked for: later ones are warm
        self.lock = lock or threading.Lock()

    # ---- HTTP ----------------------------------------------------------------------------------------
    def _timed(self, kind: str, method: str, path: str, **kw) -> requests.Response | None:
        t = time.perf_counter()
        try:
            try:
                r = self.http.request(method, self.base + path, timeout=120, **kw)
            except requests.ConnectionError:  # gunicorn closed the kept-alive connection (keepalive 2 s):
                self.resends += 1             # a browser sends again on a new one
                r = self.http.request(method, self.base + path, timeout=120, **kw)
            ok = r.status_code in (200, 204)  # 204: the callback raised PreventUpdate
            detail = "" if ok else f"{r.status_code} {r.text[:120]!r}"
        except requests.RequestException as err:
            r, ok, detail = None, False, type(err).__name__
        self.record(kind, self.page, time.perf_counter() - t, ok, detail)
        return r if ok else None

    def login(self) -> None:
        """``POST /login`` as the form does; raises SystemExit if the server refuses (the users file is wrong)."""
        r = self.http.post(self.base + "/login", data={"username": self.name, "password": self.password, "next": "/"},
                           timeout=120, allow_redirects=False)
        if r.status_code != 303 or "candor_session" not in self.http.cookies:
            raise SystemExit(f"benchmarks.load: login of {self.name} answered {r.status_code}")

    def _callback(self, kind: str, dep: dict, changed: list[str]) -> dict | None:
        def value(i):
            if is_all(i["id"]):  # as Dash sends a wildcard: one entry per matching component
                return [{"id": m, "property": i["property"], "value": self.props.get(component_key(m), {}).get(
                    i["property"])} for m in matching(i["id"], self.props)]
            return {"id": i["id"], "property": i["property"],
                    "value": self.props.get(component_key(i["id"]), {}).get(i["property"])}
        outputs = [[{"id": m, "property": o["property"]} for m in matching(o["id"], self.props)] if is_all(o["id"])
                   else o for o in parse_outputs(dep["output"])]
        body = {"output": dep["output"], "outputs": outputs if len(outputs) > 1 else outputs[0],
                "inputs": [value(i) for i in dep["inputs"]], "changedPropIds": changed,
                "state": [value(i) for i in dep.get("state", [])]}
        params = {"endId": self.end_id} if self.end_id else {}
        r = self._timed(kind, "POST", "/_dash-update-component", json=body, params=params)
        data = r.json() if r is not None and r.content else {}  # 204: PreventUpdate
        for _ in range(MAX_POLLS if "job" in data and "response" not in data else 0):  # a background job
            time.sleep((dep.get("background") or {}).get("interval", 500) / 1000)
            blank = {**body, "inputs": [{**i, "value": None} for i in body["inputs"]],
                     "state": [{**i, "value": None} for i in body["state"]]}
            r = self._timed("job poll", "POST", "/_dash-update-component", json=blank,
                            params={**params, "cacheKey": data["cacheKey"], "job": data["job"]})
            polled = r.json() if r is not None and r.content else {}
            if r is None or r.status_code == 204 or "response" in polled:
                data = polled
                break
        if r is None:
            return None
        answer = data.get("response", {})
        for key, props in answer.items():
            self.props.setdefault(key, {}).update(props)
        return answer

    # ---- what a browser does -----------------------------------------------------------------------
    def open_first(self) -> None:
        """The first page: the HTML, the layout and the callbacks' list, then :meth:`open_page`."""
        html = self._timed("static", "GET", self.page + f"?row={self.row}")
        found = re.search(r'<script id="_dash-config" type="application/json">(.*?)</script>', html.text if html else "",
                          re.S)
        self.end_id = json.loads(found.group(1)).get("end_id", "") if found else ""
        shell = self._timed("static", "GET", "/_dash-layout")
        deps = self._timed("static", "GET", "/_dash-dependencies")
        if shell is None or deps is None:
            raise SystemExit("benchmarks.load: /_dash-layout or /_dash-dependencies failed")
        self.app = App(deps.json(), shell.json())
        self.open_page(self.page)

    def open_page(self, path: str) -> None:
        """Move to ``path`` as a navbar link does: Dash's page callback, then the page's initial callbacks."""
        self.page = path
        self.props = {k: dict(v) for k, v in self.app.shell.items()}
        for loc in ("url", "_pages_location"):
            self.props[loc].update(pathname=path, search=f"?row={self.row}", href=f"{self.base}{path}?row={self.row}")
        self.props["row-input"]["value"] = self.row
        answer = self._callback("page", self.app.pages, ["_pages_location.pathname"])
        if answer is None:
            return
        layout_props(answer.get("_pages_content", {}).get("children"), self.props)
        if "overview-row-wanted" in self.props:
            self.props["overview-row-wanted"]["data"] = {"row": self.row}
        for wave in self.app.initial(self.props):
            for dep in wave:  # the address changed: the callbacks that read it say so (a viewer may start a job so)
                self._callback("page callback", dep, [i for i in App._ids(dep["inputs"]) if i.startswith("url.")])

    def change_row(self) -> None:
        """Pick another row and send what the page sends for it."""
        self.row = self.rng.choice(self.rows)
        self.props["row-input"]["value"] = self.row
        if "overview-row-wanted" in self.props:
            self.props["overview-row-wanted"]["data"] = {"row": self.row}
        with self.lock:
            first = (self.page, self.row) not in self.seen
            self.seen.add((self.page, self.row))
        for dep in self.app.row_callbacks(self.props):
            changed = [i for i in App._ids(dep["inputs"]) if i in ROW_INPUTS]
            self._callback("row (first ask)" if first else "row", dep, changed)

    def run(self, start: threading.Barrier, stop: threading.Event) -> None:
        """Log in and open the first page (not timed), wait for the others at ``start``, then act every ``think``
        seconds (±25 %) until ``stop`` is set: a row change, or (``page_share`` of the time, and always on a page
        without rows such as the Surrogate page) another page."""
        try:
            self.login()
            self.open_first()
        finally:
            start.wait()
        while not stop.wait(self.think * self.rng.uniform(0.75, 1.25)):
            if len(self.pages) > 1 and (self.rng.random() < self.page_share
                                        or not self.app.row_callbacks(self.props)):  # no row picker here
                self.open_page(self.rng.choice([p for p in self.pages if p != self.page]))
            else:
                self.change_row()
