"""The Text page as a user sees it: Dash requests, kilobytes and time to settled per action, in Chromium.

``python -m benchmarks.text_page [--repeats 5] [--timeout 240] [--quick]`` (``--quick``: one repeat, for CI;
its figures are not the measured ones)

Starts ``python -m app`` (the bundled sample and its MiniLM text model) with empty caches, opens ``/text``
in headless Chromium with :mod:`benchmarks.browser_timing`'s probe and repeats each user action of the
page ``--repeats`` times: a new sentence (typed, then Enter), "Analyze" on another typed sentence, a text
picked from the dataset, another layer, another head, another attribution method, metric and "attention
of" reading. Every sentence is new to the server (nothing is served from its per-text memo), so the
sentence actions include computing the text's attention, gradient x input and Integrated Gradients.

For each action it reports the median over the repeats of the ``_dash-update-component`` requests the
action started, the kilobytes they sent and received, and the milliseconds from the click (or key) to
the page settled (:func:`benchmarks.browser_timing.wait_settled`), plus the outputs of each request in
order (the chain). The last line is one JSON object ``{action: {"requests": n, "kb": kb, "settled_ms":
ms, "chain": [...]}}``, with ``"open"`` for opening the page (once: it loads the text model) and ``"reopen"``
for opening it again once the model is loaded (from navigation start, shell callbacks included).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from benchmarks import browser_timing as bt
from tests.e2e.browser import chromium_driver
from tests.e2e.serving import running_app

SENTENCES = (
    "The museum tour was long but the paintings were breathtaking.",
    "My order arrived broken and support ignored every email.",
    "A charming little cafe with the best croissants in town.",
    "The lecture was confusing and the slides were unreadable.",
    "Everything about the concert was loud, late and overpriced.",
    "The new phone feels fast, light and well made.",
    "We got lost twice because the signs made no sense.",
    "Honest pricing, quick repairs and a friendly mechanic.",
    "The sequel repeats every joke of the first film, badly.",
    "A calm, clean campsite with a view of the lake.",
    "The manual is thin and skips the steps that matter.",
    "Great value: the soup was hot and the bread fresh.",
)
"""Typed sentences, none of them a built-in example (so each is computed once, in its own action)."""

DRAWN = ("return [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.getClientRects().length > 0 "
         "&& p.querySelector('.main-svg')).length >= 5 && document.getElementById('text-notes').innerText"
         ".includes(%s);")
"""Five figures drawn and the notes naming what the action chose."""

SET_VALUE = """
const el = document.getElementById(arguments[0]);
const setter = Object.getOwnPropertyDescriptor(window.HTMLTextAreaElement.prototype, 'value').set;
setter.call(el, arguments[1]);
el.dispatchEvent(new Event('input', {bubbles: true}));
"""

OPTION = ("[...document.querySelectorAll(\"[role='option']\")].find(o => o.innerText.trim() === %s)")
RADIO = "document.querySelector(\"#%s input[value='%s']\")"


def _drawn(marker: str) -> str:
    return DRAWN % json.dumps(marker)


def _measure(driver, act, drawn: str, timeout: float) -> dict:
    """Run ``act()`` (it starts the action and sets the probe's click time); the action's requests and timing."""
    bt.reset_click(driver)
    before = bt.state(driver)["started"]
    act()
    st = bt.wait_settled(driver, drawn, since_started=before, timeout=timeout)
    sent = bt.requests_since(driver, before)
    return {"requests": len(sent), "kb": round(sum(r["sent"] + r["received"] for r in sent) / 1024, 1),
            "settled_ms": round(max(st["settled_ms"] - st["clickAt"], 0.0)),
            "chain": [r["output"] for r in sent]}


def _now(driver) -> None:
    driver.execute_script("window.__cd.clickAt = performance.now();")


def open_dropdown(driver, element_id: str) -> None:
    """Open the ``dcc.Dropdown`` ``element_id`` and wait for its options."""
    el = driver.find_element(By.ID, element_id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
    el.click()
    deadline = time.time() + 10
    while not driver.find_elements(By.CSS_SELECTOR, "[role='option']") and time.time() < deadline:
        time.sleep(0.05)


def close_dropdown(driver) -> None:
    """Close the open dropdown (Escape)."""
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    time.sleep(0.2)


def actions(driver, repeats: int, timeout: float) -> dict[str, list[dict]]:
    """Each user action of the Text page ``repeats`` times; action -> one record per repeat."""
    sentences = iter(SENTENCES)
    out: dict[str, list[dict]] = {k: [] for k in ("enter", "analyze", "pick", "layer", "heads", "method",
                                                    "metric", "query")}

    def enter():
        text = next(sentences)
        box = driver.find_element(By.ID, "text-input")
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(text)
        _now(driver)
        box.send_keys(Keys.ENTER)

    def analyze():
        driver.execute_script(SET_VALUE, "text-input", next(sentences))
        bt.click(driver, "document.getElementById('text-submit')")

    for _ in range(repeats):
        out["enter"].append(_measure(driver, enter, _drawn("for typed"), timeout))
    for _ in range(repeats):
        out["analyze"].append(_measure(driver, analyze, _drawn("for typed"), timeout))
    for i in range(1, repeats + 1):  # built-in examples 1..repeats (example 0 was computed on opening)
        open_dropdown(driver, "text-row")
        out["pick"].append(_measure(driver, lambda i=i: bt.click(driver, OPTION % json.dumps(option_label(driver, i))),
                                    _drawn(f"for text {i} of"), timeout))
    for i in range(repeats):
        open_dropdown(driver, "text-layer")
        layer = json.dumps(f"layer {i % 5}")  # 0..4: the page starts on the last layer (5)
        out["layer"].append(_measure(driver, lambda: bt.click(driver, OPTION % layer), _drawn("Predicted"), timeout))
    for i in range(repeats):  # heads 4..: added one by one
        open_dropdown(driver, "text-heads")
        head = json.dumps(f"head {4 + i}")
        out["heads"].append(_measure(driver, lambda: bt.click(driver, OPTION % head), _drawn("Predicted"), timeout))
        close_dropdown(driver)
    for name, values in (("method", ("gxi", "ig")), ("metric", ("kendall", "top_k", "spearman")),
                         ("query", ("mean", "cls"))):
        component = f"text-{name}"
        for i in range(repeats):
            radio = RADIO % (component, values[i % len(values)])
            out[name].append(_measure(driver, lambda: bt.click(driver, radio), _drawn("Predicted"), timeout))
    return out


def option_label(driver, i: int) -> str:
    """The label of option ``i`` of the open dropdown."""
    return driver.find_elements(By.CSS_SELECTOR, "[role='option']")[i].text.strip()


def summarise(records: list[dict]) -> dict:
    """Medians over the repeats; the chain of the first repeat."""
    return {"requests": statistics.median(r["requests"] for r in records),
            "kb": round(statistics.median(r["kb"] for r in records), 1),
            "settled_ms": round(statistics.median(r["settled_ms"] for r in records)),
            "chain": records[0]["chain"]}


def run(repeats: int, timeout: float) -> dict:
    """Serve the sample, measure opening ``/text`` and every action; action -> :func:`summarise`'s figures."""
    with tempfile.TemporaryDirectory(prefix="text-page-") as work:
        work = Path(work)
        env = {"CANDOR_TEXT_DIR": str(work / "text"), "CANDOR_CACHE_DIR": str(work / "cache"),
               "CANDOR_STATE_DIR": str(work / "state")}
        with running_app([], env, work / "server.log", timeout=timeout) as base, \
                chromium_driver(width=1400, height=1000) as driver:
            driver.set_page_load_timeout(timeout)
            bt.install_probe(driver)
            driver.get(base + "/text")
            st = bt.wait_settled(driver, _drawn("built-in example 0"), timeout=timeout)
            opened = {"requests": st["started"], "kb": round(sum(r["sent"] + r["received"] for r in
                                                                 bt.requests_since(driver, 0)) / 1024, 1),
                      "settled_ms": round(st["settled_ms"]), "chain": [r["output"] for r in bt.requests_since(driver, 0)]}
            results = {"open": opened}
            results.update({k: summarise(v) for k, v in actions(driver, repeats, timeout).items()})
            again = []
            for _ in range(repeats):  # the model is loaded now (and example 0 computed): a later visit
                driver.get(base + "/text")
                st = bt.wait_settled(driver, _drawn("built-in example 0"), timeout=timeout)
                sent = bt.requests_since(driver, 0)
                again.append({"requests": len(sent), "kb": round(sum(r["sent"] + r["received"] for r in sent) / 1024, 1),
                              "settled_ms": round(st["settled_ms"]), "chain": [r["output"] for r in sent]})
            results["reopen"] = summarise(again)
    return results


def table(results: dict) -> str:
    lines = [f"{'action':<10}{'requests':>9}{'kB':>9}{'settled ms':>12}  chain (outputs of each request)"]
    for action, r in results.items():
        chain = " | ".join(c[:60] for c in r["chain"])
        lines.append(f"{action:<10}{r['requests']:>9}{r['kb']:>9}{r['settled_ms']:>12}  {chain}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.text_page", description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="repeats of each action (medians reported)")
    p.add_argument("--timeout", type=float, default=240, help="seconds allowed for any one wait")
    p.add_argument("--quick", action="store_true", help="one repeat of each action, for CI (figures not asserted)")
    args = p.parse_args(argv)
    if args.quick:
        args.repeats = 1
    load_before = os.getloadavg()[0]
    results = run(args.repeats, args.timeout)
    print(table(results))
    print(f"median of {args.repeats} per action (open: once, with the text model's first load); load average "
          f"(1 min) before {load_before:.1f}, after {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
