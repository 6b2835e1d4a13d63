"""``python -m app check``: load the user's model and data as the server does, call the pages' own services, never serve.

Prints a short summary and exits 0, or prints one line ``candor: error: ...``
and exits 2. The model's predictions (every output) are fingerprinted before and after all
explanations; a change is an error (Candor never re-fits or mutates a model), and every service
call is guarded the same way the pages' are.

The loaded workspace is installed in :mod:`app.services` (nothing warmed: no all-rows SHAP, no
frontier) and, for one row (default: the first held-out row), each page's own call prints:

- every method of the table of methods (``app/services/methods.py::TABLE``), its entry's ``lines``: the
  Descriptive page's ``local_view(row)``: SHAP (its cost, additivity gap) and LIME (local R²) of the
  explained output, and their rank agreement; a global method's result (or why it does not apply);
- the Performance page's ``performance()``: ROC AUC, average precision and Brier with their intervals and the
  confusion at 0.5 (a regressor: R2 and RMSE), or why the curves do not apply;
- for a PyTorch model, ``gradients.gradient_view(row)``: Integrated Gradients of the same output with
  their completeness gap and rank agreement with SHAP, and a fingerprint of the parameters
  (byte-identical before and after);
- Surrogate (classifiers): the page's default MUSE fit, ``muse_view(fit_muse(muse_params()))``,
  fitted afresh in a temporary cache: held-out agreement and its largest rule;
- Persuasive (class probabilities): ``persuasive_view(row, 3)``, the page's default top-3 story and its cost;
- for ``--text-column``: LIME text over the words of one text (scikit-learn text pipeline), or attention
  and Integrated Gradients (a Hugging Face classifier folder given as ``--model``, loaded by the Text
  page's loader).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from explainers.numbers import plain
from explainers.rules import rule_text
from workspace.errors import CandorError, first_line
from workspace.torch_files import is_torch_model
from workspace.torch_options import TorchOptions, add_torch_arguments


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m app check", description="Load a model and data and explain one row.")
    p.add_argument("--model", required=True, help="fitted scikit-learn estimator or Pipeline (.skops; "
                                                   ".joblib/.pkl with --trust-model-code), a PyTorch tabular model "
                                                   "(state dict .pt/.pth/.safetensors with --torch-class; "
                                                   "TorchScript with --trust-model-code), or a Hugging Face folder")
    p.add_argument("--data", required=True, help="CSV/TSV or Parquet with the feature columns and the target")
    p.add_argument("--target", required=True, help="target column in --data")
    p.add_argument("--text-column", help="explain a text model whose single input is this column")
    p.add_argument("--row", type=int, help="row to explain (default: the first held-out row)")
    p.add_argument("--target-class", help="the class the pages explain against the rest (default: the last class)")
    p.add_argument("--features-file", metavar="FILE", help="YAML/JSON of the features' display names and value "
                   "formats (default: <data>.features.yaml beside --data, if present)")
    p.add_argument("--trust-model-code", "--trust-pickle", dest="trust_pickle", action="store_true",
                   help="the model file may RUN CODE: allow .joblib/.pkl, TorchScript and skops types outside "
                        "Candor's reviewed list; only for files you trust")
    add_torch_arguments(p)
    return p


def _view(name: str, fn):
    from explainers.model_adapter import ModelFailed

    try:
        return fn()
    except ModelFailed as exc:  # the model raised (a CandorError under limits.model_call_limits): name the view
        raise CandorError(f"{name}: {exc}") from None
    except CandorError:
        raise
    except Exception as exc:  # one clear line, naming the view, never a traceback
        raise CandorError(f"{name} failed: {first_line(exc)}") from None


def run_tabular(args, out) -> None:
    """Install the loaded pair in the services and print what each page's own service call returns."""
    import tempfile

    from workspace.workspace import load_user_workspace

    from workspace import limits, settings

    from .. import services

    ws = load_user_workspace(args.model, args.data, args.target, trust_pickle=args.trust_pickle,
                             target_class=args.target_class, torch_options=TorchOptions.from_args(args),
                             features_file=args.features_file)
    ws = ws.limited(limits.model_call_limits(timeout=False))  # a model raising while predicting: one line
    a, X = ws.adapter, ws.X
    is_torch = is_torch_model(a.model)
    row = int(ws.test_idx[0]) if args.row is None else args.row
    if not 0 <= row < len(X):
        raise CandorError(f"--row {row} does not exist; rows are 0 to {len(X) - 1:,}")
    kinds = {}
    for c in a.codec.columns:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"model   {Path(args.model).name}: {type(a.model).__name__}, {a.task}, outputs: {a.kind} "
          f"({', '.join(a.output_names[:6])}{' ...' if len(a.output_names) > 6 else ''})", file=out)
    print(f"data    {ws.name}: {len(X):,} rows x {X.shape[1]:,} features "
          f"({', '.join(f'{n:,} {k}' for k, n in kinds.items())}); target {ws.target!r}", file=out)
    for note in ws.notes:
        print(f"note    {note}", file=out)
    if is_torch:
        import torch

        torch.set_num_threads(1)  # ENVIRONMENT-NOTES: 2 threads on 2 shared cores can stall 40-50x
        params = a.model.parameter_fingerprint()
        n_params = sum(p.numel() for p in a.model.module.parameters())
        what = "one regression output" if a.task == "regression" else a.model.output
        print(f"torch   {a.model.source}: {n_params:,} parameters, {what}; parameters sha256 {params[:16]}", file=out)
    before = a.fingerprint(X.iloc[:20])
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="candor-check-") as cache, settings.overridden(cache_dir=Path(cache)), \
            services.overridden(services.ServiceState(ws)):  # a fresh surrogate fit in a cache of its own
        _pages(services, row, is_torch, out)
    if a.fingerprint(X.iloc[:20]) != before:
        raise CandorError(f"{Path(args.model).name}: the model's predictions changed while explaining it")
    if is_torch and a.model.parameter_fingerprint() != params:
        raise CandorError(f"{Path(args.model).name}: the model's parameters changed while explaining it")
    same = f", parameters sha256 {params[:16]}" if is_torch else ""
    print(f"ok      model unchanged (prediction fingerprint {before[:12]}{same}); {time.perf_counter() - t0:.1f} s",
          file=out)


def _pages(services, row: int, is_torch: bool, out) -> None:
    """The Descriptive, (PyTorch: gradients), Surrogate and Persuasive pages' service calls for ``row``."""
    for m in services.methods.TABLE:  # every tabular method, through the pages' own calls (its entry's lines)
        if m.lines is None:
            continue
        why = m.why_not()
        if why is not None:
            print(f"{m.name[:7]:<8}not applicable: {why}", file=out)
            continue
        where = f"Descriptive row {row}" if m.facts.scope == "local" else m.title
        for line in _view(where, lambda m=m: m.lines(row)):
            print(line, file=out)
    for line in _view("Performance", services.performance.lines):  # the Performance page's scores
        print(line, file=out)
    if is_torch:
        g = _view(f"Integrated Gradients row {row}", lambda: services.gradients.gradient_view(row))
        print(f"ig      row {row}, {g.ig.target!r} ({g.units}): f(x) - f(baseline) = "
              f"{plain(g.ig.prediction - g.ig.base_value, 4, signed=True, trim=True)}, completeness gap "
              f"{plain(g.ig.params['convergence_delta'])} "
              f"({g.ig.params['n_steps']} steps, baseline = training median); Spearman |IG| vs |SHAP| "
              f"{g.spearman:.2f}; top: {services.methods.top_features(g.ig.feature_names, g.ig.values)}", file=out)
    if services.why_not("surrogate") is None:
        params = services.muse_params()
        m = _view("Surrogate", lambda: services.muse_view(services.fit_muse(params)))  # the page's default fit
        rs = m.rule_set
        i = max(range(len(rs.rules)), key=lambda j: rs.rules[j].support) if rs.rules else None
        if i is None:
            largest = f"none (every row gets the default rule: {rs.default_label})"
        else:
            where = m.neighborhood_texts[rs.neighborhoods.index(rs.rules[i].descriptor)]
            largest = rule_text((where, m.rule_texts[i]), label=rs.rules[i].label)
        print(f"rules   MUSE two-level decision set ({params['max_rules']} rules, width {params['max_width']}, "
              f"{params['max_neighborhoods']} neighborhoods at most): held-out agreement with the model "
              f"{m.heldout.agreement:.3f}; largest rule: {largest}", file=out)
    else:
        print("rules   not applicable: rule surrogates explain class labels (regression model)", file=out)
    if services.why_not("persuasive") is None:
        v = _view(f"Persuasive row {row}", lambda: services.persuasive_view(row, 3))  # the page's default: top-3
        f = v.simplification.fidelity_after
        print(f"persuade row {row}, top-3 of SHAP: share of |attribution| shown {f['mass_retained']:.3f}, "
              f"sufficiency {f['sufficiency']:.3f}, comprehensiveness {f['comprehensiveness']:.3f}; "
              f"{len(v.guardrail)} guardrail note(s)", file=out)


def _texts(args, out):
    from workspace.tables import read_table

    notes: list[str] = []
    df = read_table(args.data, notes)
    name = Path(args.data).name
    for col in (args.text_column, args.target):
        if col not in df.columns:
            raise CandorError(f"{name}: column {col!r} not found; columns are {', '.join(map(str, df.columns[:12]))}")
    print(f"data    {name}: {len(df):,} texts in {args.text_column!r}; target {args.target!r}", file=out)
    for note in notes:
        print(f"note    {note}", file=out)
    return df[args.text_column].astype(str).tolist(), df


def _text_row(args, texts) -> int:
    row = 0 if args.row is None else args.row
    if not 0 <= row < len(texts):
        raise CandorError(f"--row {row} does not exist; rows are 0 to {len(texts) - 1}")
    return row


def run_hf_folder(args, out) -> None:
    """A Hugging Face classifier folder: the Text page's own services (attention, prediction, IG) for one text."""
    from ..services import text as text_services
    from ..services import text_loader

    folder = Path(args.model).resolve()
    try:  # the Text page's checks and messages, said of --model
        clf = text_loader.load(folder).model
    except CandorError as err:
        raise CandorError(str(err).replace(f"text model {folder}:", f"{Path(args.model).name}:", 1)) from None
    print(f"model   {Path(args.model).name}/: {clf.name}, {clf.n_layers} layers x {clf.n_heads} heads, labels "
          f"{', '.join(clf.labels)}, max {clf.max_length} tokens", file=out)
    texts, _ = _texts(args, out)
    row = _text_row(args, texts)
    from workspace import settings

    from .. import services

    # the folder is the Text page's model for this check, in services of its own (as run_tabular's): a model
    # loaded here is not left in the installed services, and one loaded there is not the one checked
    with settings.overridden(text_model=folder), services.overridden(services.ServiceState()):
        view = _view("attention", lambda: text_services.text_view(texts[row]))
        enc = view.attention.encoding
        cut = (f"; truncated from {enc.n_tokens_before_truncation} tokens" if enc.truncated else "")
        print(f"attn    text row {row}: weights {view.attention.attention.weights.shape} (layers x heads x tokens x "
              f"tokens){cut}", file=out)
        ig = view.ig
        if ig is None:  # long texts: the page computes IG in its background job
            _view("Integrated Gradients", lambda: text_services.run_slow_attributions(texts[row]))
            ig = text_services.attribution(texts[row], "ig")
        print(f"ig      text row {row}: {len(ig.values):,} tokens, completeness gap {plain(ig.additivity_gap)} "
              f"({ig.output_space} of {ig.target!r})", file=out)


def run_text(args, out) -> None:
    from workspace.model_files import load_model

    if Path(args.model).is_dir():
        return run_hf_folder(args, out)
    model = load_model(args.model, trust_pickle=args.trust_pickle)
    print(f"model   {Path(args.model).name}: {type(model).__name__}, classes "
          f"{', '.join(map(str, getattr(model, 'classes_', [])))}", file=out)
    texts, df = _texts(args, out)
    if not hasattr(model, "predict_proba"):
        raise CandorError(f"{Path(args.model).name}: text check needs predict_proba")
    import hashlib

    fp = lambda: hashlib.sha256(np.round(model.predict_proba(texts[:20]), 12).tobytes()).hexdigest()  # noqa: E731
    before = fp()
    pred = _view("prediction", lambda: np.asarray(model.predict(texts)))
    truth = df[args.target].astype(str).to_numpy()
    acc = float(np.mean(pred.astype(str) == truth))
    row = _text_row(args, texts)
    from lime.lime_text import LimeTextExplainer

    exp = _view("LIME text", lambda: LimeTextExplainer(class_names=[str(c) for c in model.classes_], random_state=0)
                .explain_instance(texts[row], model.predict_proba, num_features=5, num_samples=500,
                                  labels=(len(model.classes_) - 1,)))
    words = exp.as_list(label=len(model.classes_) - 1)
    print(f"text    accuracy against {args.target!r} on all rows {acc:.3f} (optimistic if trained on them)", file=out)
    print(f"lime    text row {row} (the lime library; no page serves a scikit-learn text model): local R2 "
          f"{exp.score:.3f}; top words: "
          + ", ".join(f"{str(w)!r} {v:+.3f}" for w, v in words[:3]), file=out)
    if fp() != before:
        raise CandorError(f"{Path(args.model).name}: the model's predictions changed while explaining it")
    print(f"ok      model unchanged (prediction fingerprint {before[:12]})", file=out)


def main(argv: list[str]) -> int:
    """Entry point of ``python -m app check``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        (run_text if args.text_column else run_tabular)(args, sys.stdout)
    except CandorError as err:
        print(f"candor: error: {err}", file=sys.stderr)
        return 2
    return 0
