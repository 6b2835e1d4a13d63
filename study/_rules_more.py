"""Validation rules for the study-file keys added in issue 16 (exclusion rule, recruitment links).

Each rule takes the :class:`study._rules._Checker` collecting errors with their YAML lines.
"""

from __future__ import annotations

from .recruitment import URL_RE


def _exclusions(c, e, checks) -> None:
    """``exclusions: {max_failed_attention_checks: K}``: the pre-declared rule the analysis applies."""
    p = ("exclusions",)
    if e is None or not c.typed(e, dict, p, "a mapping with max_failed_attention_checks"):
        return
    c.keys(e, p, {"max_failed_attention_checks"}, ("max_failed_attention_checks",))
    k = e.get("max_failed_attention_checks")
    if k is not None and c.typed(k, int, p + ("max_failed_attention_checks",), "an integer") and k < 0:
        c.err(p + ("max_failed_attention_checks",), f"expected 0 or more failed checks, got {k}")
    if "max_failed_attention_checks" in e and not checks:
        c.err(p + ("max_failed_attention_checks",), "an exclusion rule on attention checks needs attention_checks")


def _recruitment(c, r) -> None:
    """``recruitment: {completion_url: https://..., redirect_seconds: S}``: the link shown with the
    completion code, and how long the page waits before going there by itself (null: never)."""
    p = ("recruitment",)
    if r is None or not c.typed(r, dict, p, "a mapping with completion_url"):
        return
    c.keys(r, p, {"completion_url", "redirect_seconds"})
    s = r.get("redirect_seconds")
    if s is not None and c.typed(s, int, p + ("redirect_seconds",), "a whole number of seconds (or null: no "
                                 "automatic redirect)") and not 0 <= s <= 600:
        c.err(p + ("redirect_seconds",), f"expected 0..600 seconds, got {s}")
    if "redirect_seconds" in r and "completion_url" not in r:
        c.err(p + ("redirect_seconds",), "redirect_seconds needs a completion_url to redirect to", at_key=True)
    url = r.get("completion_url")
    if url is not None and (not isinstance(url, str) or not URL_RE.match(url)):
        c.err(p + ("completion_url",), f"expected an http(s) URL of at most 2000 characters without spaces or "
                                       f"quotes ({{code}} is replaced by the completion code), got {str(url)[:80]!r}")
