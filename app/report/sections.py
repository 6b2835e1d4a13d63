"""The report's sections as HTML text: model card, global views, one section per row, provenance.

Numbers are formatted as the pages format them (:func:`app.views.components.fmt`, :func:`app.views.figures.plain`, the
Persuasive page's cost table :data:`app.callbacks.persuasive._ROW`); rule text through
:func:`explainers.rules.rule_text`. Every user string is escaped here.
"""
from __future__ import annotations

from html import escape

from app.services import counterfactuals as cfs
from app.views import figures, figures_persuasive
from app.views import methods as method_views
from app.views.figures_persuasive import COST_ROWS
from app.views.components import fmt
from app.report.section_performance import performance_section
from explainers.persuasive import gilpin_label
from explainers.rules import rule_text

MAX_DROPPED = 25
"""Dropped features listed by name (the rest summed in one line)."""
MAX_BARS = 30
"""Bars of the descriptive chart (the Persuasive page draws every feature; a report is read on paper)."""


def _table(head, rows) -> str:
    """An HTML table of ``rows`` (every cell escaped); ``head`` None: a two-column fact table, the first
    column as row headers."""
    if head is None:
        trs = "".join(f"<tr><th scope=\"row\">{escape(str(k))}</th><td>{escape(str(v))}</td></tr>" for k, v in rows)
        return f"<table class=\"facts\"><tbody>{trs}</tbody></table>"
    th = "".join(f"<th scope=\"col\">{escape(str(h))}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def model_card(c) -> str:
    s = c.summary
    metrics = ", ".join(f"{k.replace('_', ' ')} {fmt(v)}" for k, v in s.metrics.items())
    rows = [("task", s.task), ("target", s.target), ("classes", " / ".join(map(str, s.classes)) or "(regression)"),
            ("explained output", c.output_label),
            ("data", f"{c.n_rows} rows × {c.n_features} feature columns ({s.n_train} training, {s.n_test} held out)"),
            ("held-out metrics", metrics or "n/a"), ("source", s.source)]
    notes = "".join(f"<li>{escape(n)}</li>" for n in c.notes)
    described = getattr(c, "descriptions", ())
    features = ("<h3>Features</h3>" + _table(("feature", "description"), list(described))) if described else ""
    return ("<h2 id=\"model-card\">Model card</h2>" + _table(None, rows) + features
            + (f"<p class=\"note\">Loading notes:</p><ul class=\"note\">{notes}</ul>" if notes else ""))


def _surrogate(c, figs) -> str:
    if c.surrogate is None:
        return f"<h3>Rule surrogate</h3><p class=\"note\">Not applicable: {escape(c.surrogate_why or '')}</p>"
    v = c.surrogate
    q, rs, d = v.heldout, v.rule_set, v.detail
    low, high = getattr(q, "agreement_low", float("nan")), getattr(q, "agreement_high", float("nan"))
    triv = getattr(d, "trivial_agreement", float("nan"))
    facts = [("agreement with the model", f"{fmt(q.agreement)} (95 % Wilson interval {fmt(low)} to {fmt(high)}) "
                                          f"on {v.n_eval} held-out rows"),
             ("trivial surrogate", f"always {d.trivial_label}: {fmt(triv)}"),
             ("Gilpin label", gilpin_label(rs).text()),
             ("size", f"{q.size} rules, {q.numpreds} predicates, {q.numdsets} neighborhoods; default rule "
                      f"{rs.default_label} on {q.default_share:.1%} of held-out rows")]
    warn = ""
    if not q.agreement > triv:
        warn = (f"<p class=\"warn\">This surrogate does not beat always answering {escape(str(d.trivial_label))} "
                "on the held-out rows: its rules explain nothing the majority label does not.</p>")
    where = {nb: (v.neighborhood_texts[i] or "everywhere") for i, nb in enumerate(rs.neighborhoods)}
    rules = [(where.get(r.descriptor, "everywhere"), rule_text([v.rule_texts[i]], label=r.label, always="always"),
              r.support, fmt(r.precision, 2), fmt(v.rule_agreement[i], 2)) for i, r in enumerate(rs.rules)]
    rules.append(("otherwise", f"default rule: {rs.default_label}", "", "", ""))
    return ("<h3>Rule surrogate: MUSE two-level decision set (the Surrogate page's default)</h3>" + warn
            + _table(None, facts)
            + _table(("if", "decision rule", "support (training)", "precision (training)", "held-out agreement"), rules)
            + figs.add(figures.confusion(d)) + f"<p class=\"note\">{escape(v.source)}</p>")


def _method(v, figs) -> str:
    """A global method of the table of methods beside mean |SHAP| (the Descriptive page's panel), or why not."""
    if v.result is None:
        return f"<h3>{escape(v.title.capitalize())}</h3><p class=\"note\">Not applicable: {escape(v.why_not or '')}</p>"
    return (f"<h3>{escape(v.title.capitalize())} beside mean |SHAP|</h3>" + figs.add(method_views.figure(v))
            + f"<p>{escape(method_views.agreement_text(v))}</p><p class=\"note\">{escape(v.result.source)}</p>")


def global_views(c, figs) -> str:
    bars = figures.importance_bar(c.importance, max_display=15)  # tall enough that every label shows
    bars.update_layout(height=26 * min(15, len(c.importance.feature_names)) + 110)
    out = ["<h2 id=\"global\">Global views</h2>", figs.add(bars),
           f"<p class=\"note\">{escape(c.importance.source)}</p>",
           *(_method(v, figs) for v in getattr(c, "methods", ())),
           _surrogate(c, figs)]
    if c.global_curve is not None:
        out += ["<h3>The persuasive story over all held-out rows</h3>",
                figs.add(figures_persuasive.global_tradeoff(c.global_curve, c.k)
                         .update_layout(height=figures_persuasive.GLOBAL_TRADEOFF_HEIGHT))]
    else:
        out.append(f"<p class=\"note\">Persuasive layer not applicable: {escape(c.persuasive_why or '')}</p>")
    return "".join(out) + cohorts_section(c, figs)


def cohorts_section(c, figs) -> str:
    """The Cohorts page on every held-out row: the error tree's leaves, where the story misleads most, their figures."""
    from app.views import cohorts as cohort_views

    v = getattr(c, "cohorts", None)
    if v is None:
        why = getattr(c, "cohorts_why", None)
        return f"<p class=\"note\">Cohorts not applicable: {escape(why)}</p>" if why else ""
    rows = [(x.name, f"{x.n_rows:,}", cohort_views._ci(x.accuracy, x.accuracy_low, x.accuracy_high),
             cohort_views._ci(x.agreement, x.agreement_low, x.agreement_high), cohort_views._story(x, "sufficiency"),
             cohort_views._story(x, "mass_retained")) for x in v.ranked]
    leaves = "".join(f"<li>Leaf {i + 1}: {escape(t)}</li>" for i, t in enumerate(v.leaf_texts))
    return ("<h3>Cohorts: where the model errs and where the story misleads most</h3>"
            + figs.add(cohort_views.error_tree_figure(v)) + figs.add(cohort_views.misleads_figure(v))
            + _table(("Cohort", "Rows", "Accuracy [95 % CI]", "Surrogate agreement", f"Story sufficiency (top {v.story_k})",
                      "Share of |attribution| shown"), rows)
            + f"<ol class=\"note\">{leaves}</ol>" + "".join(f"<p class=\"note\">{escape(n)}</p>" for n in v.notes))


def dependence_section(c, figs) -> str:
    """The Dependence page's views of the top features: SHAP dependence beside partial dependence and ICE, with
    what the average hides (empty when there are none)."""
    from app.services.dependence import colour_text
    from app.views import dependence as dependence_views

    views = getattr(c, "dependence", ())
    if not views:
        return ""
    out = [f"<h2 id=\"dependence\">Dependence of the {len(views)} features with the largest mean |SHAP|</h2>"]
    for v in views:
        out += [f"<h3>{escape(v.feature)}</h3>", figs.add(dependence_views.shap_figure(v)),
                figs.add(dependence_views.pdp_figure(v)), f"<p>{escape(v.hidden)}</p>",
                f"<p class=\"note\">{escape(colour_text(v))} Scatter: {escape(v.rows_statement)}. "
                f"{escape(v.partial.source)}. {escape(v.shap.method)}.</p>"]
    return "".join(out)


def _cost(view) -> str:
    s = view.simplification
    before, after = s.fidelity_before, s.fidelity_after

    def shown(values, key, f):
        return (f.format(values[key]) if f else fmt(values[key])) if key in values else "n/a"

    rows = [(label, shown(after, key, f), shown(before, key, f)) for key, label, f in COST_ROWS]
    ca, cb = s.complexity_after, s.complexity_before
    rows.append(("Items / words / chunks", f"{ca['n_items']} / {ca['n_words']} / {ca['n_chunks']}",
                 f"{cb['n_items']} / {cb['n_words']} / {cb['n_chunks']}"))
    note = ""
    if after.get("curve_gap_small"):
        note = ("<p class=\"warn\">Deletion/insertion say little for this row: the baseline already scores close to "
                "the row's output, so their normalised areas divide by almost nothing.</p>")
    return _table(("what it cost", f"the story (k = {view.settings['k']})", "all features"), rows) + note


def _dropped(view) -> str:
    d = view.dropped
    if not d:
        return "<p>Nothing was dropped: every feature is named.</p>"
    rows = [(x.feature + (" (sensitive)" if x.sensitive else ""), x.rank, figures.plain(x.attribution, signed=True),
             f"{x.share:.1%}") for x in d[:MAX_DROPPED]]
    if len(d) > MAX_DROPPED:
        rest = d[MAX_DROPPED:]
        rows.append((f"{len(rest):,} more features", "", figures.plain(sum(x.attribution for x in rest), signed=True),
                     f"{sum(x.share for x in rest):.1%}"))
    return _table(("dropped feature", "rank", "attribution", "share of |attribution|"), rows)


def row_section(sec, figs) -> str:
    head = (f"<section class=\"row-section\" id=\"row-{sec.row}\"><h2>Row {sec.row}</h2>"
            f"<p class=\"sub\">{escape(sec.reason)} · {escape(sec.status)}</p>")
    view = sec.persuasive
    if view is None:
        return (head + "<p class=\"note\">The persuasive layer does not apply (see the global views); the "
                "descriptive explanation alone:</p>" + figs.add(figures.waterfall(sec.shap)) + "</section>")
    s, e = view.simplification, sec.shap
    full = figures.attribution_bar(e, max_display=min(len(e.values), MAX_BARS),
                                   title=f"Descriptive: {'every' if len(e.values) <= MAX_BARS else f'the {MAX_BARS} largest'}"
                                         f" SHAP attribution(s)<br><sup>Gilpin: {figures.esc(view.descriptive_label.text())}</sup>")
    full.update_layout(margin=dict(t=75))
    story = figures_persuasive.persuasive_items(s, f"Persuasive: {len(s.items)} item(s) shown<br><sup>Gilpin: "
                                                   f"{figures.esc(view.persuasive_label.text())}</sup>")
    withheld = sum(not ch.ok for ch in s.sentences)
    guard = "".join(f"<p class=\"warn\">{escape(n.message)}</p>" for n in view.guardrail)
    statement = escape(s.statement or "(nothing to say: k = 0)")
    return (head + guard
            + f"<p class=\"statement\"><strong>What a reader is told:</strong> {statement}</p>"
            + (f"<p class=\"warn\">{withheld} sentence(s) withheld: a claim did not match the SHAP attributions.</p>"
               if withheld else "")
            + f"<div class=\"pair\"><div>{figs.add(full)}</div><div>{figs.add(story)}</div></div>"
            + f"<h3>What was dropped ({len(view.dropped):,} features)</h3>" + _dropped(view)
            + "<h3>What the simplification costs</h3>" + _cost(view)
            + figs.add(figures_persuasive.row_tradeoff(view.curve, s)
                       .update_layout(height=figures_persuasive.ROW_TRADEOFF_HEIGHT))
            + _story_test(sec.story)
            + f"<p class=\"note\">{escape(e.source)}</p></section>")


def _story_test(view) -> str:
    """The story test of the row's story and its counterfactuals (the Persuasive page's card, as tables)."""
    if view is None:
        return ""
    t = view.test
    share = "n/a" if t.k == 0 else f"{t.n_need_hidden} of {t.k} ({t.share:.0%}, 95 % Wilson {t.share_low:.0%}–{t.share_high:.0%})"
    figures_rows = [("story names", ", ".join(t.story) or "nothing"),
                    ("story alone flips", "yes" if t.story_flips else "no"),
                    ("cheapest distance, story only / any feature",
                     " / ".join("n/a" if c.cheapest is None else figures.plain(c.cheapest) for c in (t.story_only, t.any_feature))),
                    ("cheapest flips needing a hidden feature", share),
                    ("model evaluations, story only / any feature", f"{t.story_only.n_evaluated:,} / "
                     f"{t.any_feature.n_evaluated:,} (budget {view.settings['budget']:,} each)")]
    story = set(t.story)
    listed = [(i + 1, figures.plain(c.distance), c.n_changed,
               "; ".join(f"{ch.feature}: {ch.before} → {ch.after}" + ("" if ch.feature in story else " (hidden)")
                         for ch in c.changes)) for i, c in enumerate(t.any_feature.shown)]
    return ("<h3>Story test: can the story's features change the outcome?</h3>"
            + f"<p>{escape(cfs.verdict(t))}</p>" + _table(None, figures_rows)
            + (_table(("#", "distance", "features changed", "changes"), listed) if listed else "")
            + f"<p class=\"note\">Counterfactuals: {escape(t.any_feature.distance)}; "
              f"{escape(t.any_feature.source)}.</p>")


def provenance_section(p) -> str:
    files = [(role, name, digest) for role, name, digest in p.files] or [("files", "not recorded", "")]
    rows = files + [("table as explained", "column names and values", p.table_sha256),
                    ("model", "explained output on the first 20 rows", p.model_fingerprint)]
    return ("<h2 id=\"provenance\">Provenance</h2>"
            + _table(("what", "name", "SHA-256"), rows)
            + _table(("explainer", "parameters and seeds"), p.parameters)
            + _table(("library", "version"), p.versions)
            + f"<p class=\"note\">Built {escape(p.created)} by Candor.</p>")


def body(c, figs) -> str:
    """The report's ``<body>`` content; ``figs`` (:class:`app.report.render.Figures`) collects the figures."""
    rows = ", ".join(f"<a href=\"#row-{s.row}\">row {s.row}</a>" for s in c.rows)
    head = (f"<header><h1>Candor review: {escape(c.name)}</h1><p class=\"sub\">{escape(c.summary.task)} · "
            f"{escape(c.provenance.created)} · rows: {rows}</p><p class=\"note\">{escape(c.rows_rule)}</p></header>")
    return (head + model_card(c) + performance_section(c, figs) + global_views(c, figs) + dependence_section(c, figs)
            + "".join(row_section(s, figs) for s in c.rows)
            + provenance_section(c.provenance))
