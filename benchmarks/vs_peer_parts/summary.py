"""The figures of :mod:`benchmarks.vs_peer`: each tool's cold starts summarised (medians, click percentiles,
peak memory), the keys compared as Candor / peer ratios, and the printed table."""
from __future__ import annotations

import numpy as np


def summarise(starts: list[dict]) -> dict:
    """Medians over cold starts; click percentiles over every click of every start; the largest peak RSS.

    A figure no start reached in time is ``None``; ``timeouts`` counts the starts with a stage that timed out.
    """
    clicks = np.concatenate([np.asarray(s["row_click_ms"], float) for s in starts])

    def med(k):
        vals = [s[k] for s in starts if s.get(k) is not None]
        return round(float(np.median(vals)), 2) if vals else None

    local = np.concatenate([np.asarray(s.get("row_click_local_ms", []), float) for s in starts])
    again = np.concatenate([np.asarray(s.get("row_again_ms", []), float) for s in starts])
    per_click = np.concatenate([np.asarray(s.get("requests_per_click", []), float) for s in starts])
    kb = np.concatenate([np.asarray(s.get("kb_per_click", []), float) for s in starts])
    lacking = np.concatenate([np.asarray(s.get("row_lacking_ms", []), float) for s in starts])

    def pct(values, q):
        return round(float(np.percentile(values, q)), 1) if values.size else None
    return {"first_200_s": med("first_200_s"), "landing_s": med("landing_s"),
            "landing_from_start_s": med("landing_from_start_s"), "row_page_s": med("row_page_s"),
            "row_p50_ms": pct(clicks, 50), "row_p95_ms": pct(clicks, 95),
            "rss_mb": round(max(s["rss_mb"] for s in starts), 1),
            "hwm_mb": round(max(s.get("hwm_mb", 0.0) for s in starts), 1) or None,
            "row_lacking_p50_ms": pct(lacking, 50), "row_lacking_p95_ms": pct(lacking, 95),
            "lacking_rows": int(lacking.size), "starts": len(starts), "clicks": int(clicks.size),
            "timeouts": sum("note" in s for s in starts),
            "row_local_p50_ms": pct(local, 50), "row_local_p95_ms": pct(local, 95), "local_clicks": int(local.size),
            "row_again_p50_ms": pct(again, 50), "row_again_p95_ms": pct(again, 95),
            "requests_per_click": pct(per_click, 50), "kb_per_click": pct(kb, 50)}


RATIO_KEYS = ("first_200_s", "landing_s", "landing_from_start_s", "row_page_s", "row_p50_ms", "row_p95_ms",
              "row_again_p50_ms", "row_again_p95_ms", "requests_per_click", "kb_per_click", "rss_mb", "hwm_mb",
              "row_lacking_p50_ms")
PEER_KEY = {"row_lacking_p50_ms": "row_p50_ms"}
"""A ratio whose peer figure is another: a row the store lacks, typed in, against the peer's random-row click
(explainerdashboard has no store: each of its random rows is computed on the click)."""


def table(results: dict) -> str:
    units = {"first_200_s": "s", "landing_s": "s", "landing_from_start_s": "s", "row_page_s": "s",
             "row_p50_ms": "ms", "row_p95_ms": "ms", "row_again_p50_ms": "ms", "row_again_p95_ms": "ms",
             "requests_per_click": "median", "kb_per_click": "median", "rss_mb": "MB", "hwm_mb": "MB",
             "row_lacking_p50_ms": "ms"}
    lines = [f"{'dataset':<14}{'figure':<26}{'store':>10}{'live':>10}{'peer':>10}{'r store':>9}{'r live':>8}"]
    for ds, r in results.items():
        for k in RATIO_KEYS:
            cells = [("-" if t not in r or r[t][PEER_KEY.get(k, k) if t == "peer" else k] is None
                      else str(r[t][PEER_KEY.get(k, k) if t == "peer" else k])) for t in ("candor", "candor_live", "peer")]
            ratios = [("-" if rk not in r or r[rk][k] is None else str(r[rk][k])) for rk in ("ratio", "ratio_live")]
            lines.append(f"{ds:<14}{k + ' (' + units[k] + ')':<26}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}"
                         f"{ratios[0]:>9}{ratios[1]:>8}")
        if "floor" in r:  # a bare Dash app drawing the row's two bar charts (benchmarks.vs_peer_parts.floor)
            f, peer = r["floor"], r["peer"]["row_p95_ms"]
            lines.append(f"{ds:<14}{'floor row p50 / p95 (ms)':<26}{'':>10}{'':>10}{'':>10}"
                         f"  {f['floor_p50_ms']} / {f['floor_p95_ms']}: p95 {f['floor_p95_vs_peer']}x the "
                         f"peer's {peer}")
        timeouts = [str(r[t]["timeouts"]) if t in r else "-" for t in ("candor", "candor_live", "peer")]
        lines.append(f"{ds:<14}{'starts timed out':<26}{timeouts[0]:>10}{timeouts[1]:>10}{timeouts[2]:>10}")
        for k in ("row_local_p50_ms", "row_local_p95_ms"):  # clicks measured while a global panel still computed
            if any(r[t].get(k) is not None for t in ("candor", "candor_live", "peer") if t in r):
                cells = [("-" if t not in r or r[t].get(k) is None else str(r[t][k]))
                         for t in ("candor", "candor_live", "peer")]
                lines.append(f"{ds:<14}{k + ' (ms)':<26}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}")
    return "\n".join(lines)
