"""A user's Adult HistGradientBoosting pipeline served live (no store): seconds to a first page, to useful, to warm.

``python -m benchmarks.live_hgb [--timeout 600] [--keep] [--quick]``

``--quick`` (for CI; its figures are not the measured ones): fitted on the first 2,000 rows of ``adult.data``,
serving the first 400 rows of ``adult.test``.

The model is the one :func:`benchmarks.build_store.prepare_adult` fits (a one-hot ``ColumnTransformer`` over Adult's
8 string columns, the 6 numbers passed through, ``HistGradientBoostingClassifier(random_state=0)``), trained on UCI
``adult.data`` (32,561 rows) and saved as ``.skops``; the table served is ``adult.test`` (16,281 rows, never seen in
training; Candor holds out a seeded 25 % of it, 4,071 rows). Training and saving are done before the clock starts.

Timed from the moment ``python -m app --model M --data D --target income --port P`` is started (a fresh cache
folder, so nothing is reused from an earlier run):

``first_200_s``
    ``GET /`` first answers 200.
``useful_s``
    The Descriptive page's row explanation is there: the page's row callback (``render_row``: SHAP waterfall, LIME
    bars, their agreement card), posted to ``/_dash-update-component`` as the browser posts it for the row the page
    opens on (the first held-out row, read from the served layout), answers 200 with both figures drawn (each has
    data; an error figure has none). It is posted once the first page has answered, so it shares the machine with
    the warm-up, as a user's first click does.
``ready_s``
    ``/_candor/ready`` answers 200: every warm-up step done, the surrogate frontier included.

Also each warm-up step's wall and process-CPU seconds (the server's ``candor.warmup`` log lines, from
:func:`app.services._core._warm_step`) and the load average. The last line printed is one JSON object
``{"first_200_s", "useful_s", "useful_call_s", "ready_s", "steps": {name: [wall s, CPU s]}, "loadavg"}``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from benchmarks.build_store import _SERVE, _STEP, _get, prepare_adult
from benchmarks.startup_env import server_env
from tests.e2e.serving import free_port

ROOT = Path(__file__).resolve().parent.parent
WATERFALL = "descriptive-shap-waterfall.figure"


def _json(url: str, body: dict | None = None, timeout: float = 300.0):
    """GET (or POST ``body`` as JSON) ``url``: ``(status, parsed JSON or None)``."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except (urllib.error.URLError, OSError, ValueError):
        return 0, None


def _find(node, component_id: str):
    """The props of the component with ``id`` ``component_id`` in a Dash layout (JSON), or None."""
    if isinstance(node, dict):
        props = node.get("props")
        if isinstance(props, dict) and props.get("id") == component_id:
            return props
        return next((p for p in map(lambda v: _find(v, component_id), node.values()) if p is not None), None)
    if isinstance(node, list):
        return next((p for p in map(lambda v: _find(v, component_id), node) if p is not None), None)
    return None


def _split_output(spec: str) -> list[dict]:
    """Dash's multi-output string ``..a.figure...b.children..`` as the request's ``outputs`` list."""
    parts = spec[2:-2].split("...") if spec.startswith("..") else [spec]
    out = []
    for part in parts:
        ident, prop = part.rsplit(".", 1) if not part.startswith("{") else part.rsplit("}.", 1)
        ident = json.loads(ident + "}") if part.startswith("{") else ident
        out.append({"id": ident, "property": prop.split("@")[0]})
    return out


def row_request(base: str) -> tuple[dict, int]:
    """The body the browser posts for the Descriptive page's row callback, and the row it asks for."""
    _, deps = _json(base + "/_dash-dependencies")
    dep = next(d for d in deps if WATERFALL in d["output"])
    _, layout = _json(base + "/_dash-layout")
    row = _find(layout, "row-input")["value"]
    values = {"row-input.value": row, "descriptive-shap-players.value": "children",
              "descriptive-stability-run.n_clicks": None}
    pack = [{"id": i["id"], "property": i["property"], "value": values.get(f"{i['id']}.{i['property']}")}
            for i in dep["inputs"]]
    state = [{"id": s["id"], "property": s["property"], "value": values.get(f"{s['id']}.{s['property']}")}
             for s in dep["state"]]
    return {"output": dep["output"], "outputs": _split_output(dep["output"]), "inputs": pack, "state": state,
            "changedPropIds": ["row-input.value"]}, int(row)


def _drawn(answer) -> bool:
    """Whether a row-callback answer holds the SHAP waterfall and the LIME bars, both with data."""
    resp = (answer or {}).get("response", {})
    figs = [resp.get(k, {}).get("figure") for k in ("descriptive-shap-waterfall", "descriptive-lime-bar")]
    return all(isinstance(f, dict) and f.get("data") for f in figs)


def serve_once(flags: list[str], work: Path, timeout: float) -> dict:
    """Start the server cold and time it (see the module's docstring); the server is killed at the end."""
    port = free_port()
    cache = Path(tempfile.mkdtemp(dir=work, prefix="cache-"))
    env = server_env(CANDOR_CACHE_DIR=str(cache), CANDOR_STATE_DIR=str(cache / "state"))
    err_path = cache / "server.err"
    out = {"first_200_s": None, "useful_s": None, "useful_call_s": None, "ready_s": None, "row": None}
    base = f"http://127.0.0.1:{port}"
    with open(err_path, "w") as err_file:  # a file, not a pipe: a full pipe would stall the server
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _SERVE, *flags, "--port", str(port)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err_file, text=True)
        try:
            while time.perf_counter() - t0 < timeout and proc.poll() is None:
                if out["first_200_s"] is None:
                    if _get(base + "/") == 200:
                        out["first_200_s"] = round(time.perf_counter() - t0, 2)
                        body, out["row"] = row_request(base)
                        sent = time.perf_counter()
                        status, answer = _json(base + "/_dash-update-component", body, timeout=timeout)
                        if status == 200 and _drawn(answer):
                            out["useful_s"] = round(time.perf_counter() - t0, 2)
                            out["useful_call_s"] = round(time.perf_counter() - sent, 2)
                        else:
                            out["useful_error"] = f"row callback answered {status}: {str(answer)[:300]}"
                    else:
                        time.sleep(0.1)
                        continue
                if _get(base + "/_candor/ready") == 200:
                    out["ready_s"] = round(time.perf_counter() - t0, 2)
                    break
                time.sleep(0.25)
        finally:
            proc.kill()  # nothing to save: its cache folder is thrown away
            proc.wait()
    text = err_path.read_text(errors="replace")
    if out["ready_s"] is None and "Traceback" in text:
        out["error"] = text[-800:]
    out["steps"] = {m.group(1): [float(m.group(2)), float(m.group(3))] for m in _STEP.finditer(text)}
    out["loadavg"] = list(os.getloadavg())
    return out


def table(result: dict) -> str:
    """The figures and the warm-up's steps, one line each."""
    lines = [f"first HTTP 200      {result['first_200_s']} s",
             f"useful (row {result['row']})    {result['useful_s']} s (row callback {result['useful_call_s']} s)",
             f"/_candor/ready 200  {result['ready_s']} s", f"{'warm-up step':<28} {'wall s':>8} {'CPU s':>8}"]
    lines += [f"{name:<28} {w:>8.2f} {c:>8.2f}" for name, (w, c) in result["steps"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.live_hgb", description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the server to be ready")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (model, table, server log)")
    p.add_argument("--quick", action="store_true", help="2,000 training rows, 400 served: for CI (figures not asserted)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="candor-live-hgb-"))
    # not timed: the user's model exists before the server starts
    flags = prepare_adult(work, rows=(2_000, 400)) if args.quick else prepare_adult(work)
    before = list(os.getloadavg())
    result = serve_once(flags, work, args.timeout)
    result["loadavg_before"] = before
    print(table(result))
    print(f"(load average before {', '.join(f'{x:.2f}' for x in before)}, after "
          f"{', '.join(f'{x:.2f}' for x in result['loadavg'])}; machine shared)"
          + (f"; kept {work}" if args.keep else ""))
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
