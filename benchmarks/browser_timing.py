"""What a user waits for, measured inside headless Chromium (selenium), for ``benchmarks.vs_peer``.

A ``fetch`` wrapper injected before any page script (``Page.addScriptToEvaluateOnNewDocument``)
counts Dash's ``_dash-update-component`` requests in flight and records ``performance.now()`` when
the last one ends (after its body is read and one animation frame, so Dash has rendered it); a
``MutationObserver`` records when a Plotly figure last changed its DOM. A page is **settled** when
no Dash request is in flight, none has ended and no figure has changed for ``QUIET_MS``, nothing
is marked ``data-dash-is-loading="true"``, and the tool's own "drawn" condition holds (a plot
drawn, a table filled). The settle time is the later of the last request end and the last figure
change, so the quiet window itself is never counted.

Each request's body and response sizes are logged too (:func:`requests_since`): how many requests a
click costs and what they carry.

Clicks run as ``setTimeout(() => el.click(), 0)`` inside ``execute_script`` (a click that
navigates cannot block the driver), and the click time is read with ``performance.now()`` in the
page, on the same clock as the settle time.
"""
from __future__ import annotations

import time

QUIET_MS = 500

PROBE = """
(() => {
  const s = window.__cd = {inflight: 0, started: 0, ended: 0, lastEnd: 0, lastPlot: 0, clickAt: null,
                           pending: {}, log: []};
  const orig = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === 'string' ? input : (input && input.url) || '';
    const p = orig.apply(this, arguments);
    if (!url.includes('_dash-update-component')) return p;
    s.inflight++; s.started++;
    const key = s.started;
    let output = '?';
    try { output = JSON.parse(init.body).output; } catch (e) { /* not JSON: keep '?' */ }
    s.pending[key] = {output: output, t: performance.now()};
    const entry = {output: output, sent: (init && typeof init.body === 'string') ? init.body.length : 0, received: 0};
    s.log.push(entry);
    const done = () => requestAnimationFrame(() => {
      s.inflight--; s.ended++; s.lastEnd = performance.now(); delete s.pending[key];
    });
    p.then(r => r.clone().arrayBuffer().then(b => { entry.received = b.byteLength; setTimeout(done, 0); },
                                             () => setTimeout(done, 0)),
           () => setTimeout(done, 0));
    return p;
  };
  const watch = () => {
    new MutationObserver(muts => {
      for (const m of muts) {
        const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
        if (el && el.closest && el.closest('.js-plotly-plot')) { s.lastPlot = performance.now(); return; }
      }
    }).observe(document.documentElement, {subtree: true, childList: true, attributes: true});
  };
  if (document.documentElement) watch(); else document.addEventListener('DOMContentLoaded', watch);
})();
"""

VISIBLE_PLOTS = """
return [...document.querySelectorAll('.js-plotly-plot')]
  .filter(p => p.getClientRects().length > 0 && p.querySelector('.main-svg')).length;
"""

STATE = """
const s = window.__cd || {};
return {inflight: s.inflight, started: s.started, ended: s.ended, lastEnd: s.lastEnd, lastPlot: s.lastPlot,
        clickAt: s.clickAt, now: performance.now(), pending: Object.values(s.pending || {}).map(p => p.output),
        pendingSince: Object.values(s.pending || {}).map(p => p.t),
        loading: document.querySelectorAll('[data-dash-is-loading="true"]').length};
"""

CLICK = """
const el = (%s);
if (!el) return false;
setTimeout(() => { window.__cd.clickAt = performance.now(); el.click(); }, 0);
return true;
"""


def install_probe(driver) -> None:
    """Inject :data:`PROBE` into every document the driver opens from now on."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})


def state(driver) -> dict:
    """The probe's counters and clock (ms since navigation start), and how many elements are loading."""
    return driver.execute_script(STATE)


def click(driver, element_js: str) -> int:
    """Click the element the JavaScript expression ``element_js`` finds; return the Dash requests started so far.

    Raises
    ------
    RuntimeError
        If the expression finds no element.
    """
    before = state(driver)["started"]
    if not driver.execute_script(CLICK % element_js):
        raise RuntimeError(f"nothing to click: {element_js}")
    deadline = time.time() + 5
    while state(driver)["clickAt"] is None and time.time() < deadline:
        time.sleep(0.01)
    return before


def wait_settled(driver, drawn_js: str, *, since_started: int | None = None, timeout: float = 300,
                 ignore_before: float | None = None) -> dict:
    """Wait until the page is settled (module docstring); return the probe state with ``settled_ms``.

    Parameters
    ----------
    drawn_js : str
        JavaScript body returning true once the tool's content is drawn (for example a plot).
    since_started : int, optional
        The request count before a click: then at least one request must have started after it.
    timeout : float
        Seconds.
    ignore_before : float, optional
        Page clock (ms): requests started before it are not waited for, nor are loading markers (used
        when an earlier request, such as a slow global panel, is still running: then only what a
        click started is measured).

    Raises
    ------
    TimeoutError
        If the page does not settle within ``timeout`` (the last state is in the message).
    """
    deadline = time.time() + timeout
    st = {}
    while time.time() < deadline:
        st = state(driver)
        last = max(st["lastEnd"] or 0, st["lastPlot"] or 0)
        quiet = st["now"] - last >= QUIET_MS
        new_work = since_started is None or st["started"] > since_started
        if ignore_before is None:
            idle = st["inflight"] == 0 and not st["loading"]
        else:
            idle = not any(t >= ignore_before for t in st["pendingSince"])
        if idle and quiet and new_work and driver.execute_script(drawn_js):
            return {**st, "settled_ms": last}
        time.sleep(0.1)
    raise TimeoutError(f"page not settled within {timeout} s: {st}")


def requests_since(driver, started: int) -> list[dict]:
    """The Dash requests started after the first ``started``: ``{"output", "sent", "received"}`` each (bytes of
    the request body and of the response body; ``received`` is 0 until the response is read)."""
    return driver.execute_script("return window.__cd.log.slice(arguments[0]);", started)


def reset_click(driver) -> None:
    """Forget the previous click time."""
    driver.execute_script("window.__cd.clickAt = null;")
