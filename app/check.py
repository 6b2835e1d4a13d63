"""``python -m app check``: load the user's model and data, compute one explanation per view, never serve.

Prints a short summary and exits 0, or prints one line ``candor: error: ...``
and exits 2. The model's predictions are fingerprinted before and after all
explanations; a change is an error (Candor never re-fits or mutates a model).

Views computed (each only where it applies):

- SHAP for one held-out row (every output: class labels or the regression target), additivity gap;
- LIME for the same row and output, local R²;
- a rule surrogate's held-out agreement with the model's labels (classifiers only);
- for a PyTorch model: Integrated Gradients (Captum) of the same row and output, with its completeness
  gap and rank agreement with SHAP, and a fingerprint of the parameters (byte-identical before and after);
- for ``--text-column``: LIME text over the words of one text (scikit-learn text pipeline), or attention
  and Integrated Gradients (a Hugging Face classifier folder given as ``--model``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from workspace.errors import CandorError, first_line
from workspace.torch_files import TorchOptions, add_torch_arguments, is_torch_model


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
    p.add_argument("--trust-model-code", "--trust-pickle", dest="trust_pickle", action="store_true",
                   help="the model file may RUN CODE: allow .joblib/.pkl, TorchScript and skops types outside "
                        "Candor's reviewed list; only for files you trust")
    add_torch_arguments(p)
    return p


def _top(names, values, labels, k: int = 3) -> str:
    order = np.argsort(-np.abs(values), kind="stable")[:k]
    return ", ".join(f"{names[j]}={labels[j] if labels else ''} {values[j]:+.3g}".replace("= ", " ") for j in order)


def _view(name: str, fn):
    try:
        return fn()
    except CandorError:
        raise
    except Exception as exc:  # one clear line, naming the view, never a traceback
        raise CandorError(f"{name} failed: {first_line(exc)}") from None


def run_tabular(args, out) -> None:
    import explainers as ex
    from explainers._codec import conjunction_text
    from explainers.surrogate import TreeRuleSurrogate

    from workspace.workspace import load_pair

    ws = load_pair(args.model, args.data, args.target, trust_pickle=args.trust_pickle,
                   torch_options=TorchOptions.from_args(args))
    a, X = ws.adapter, ws.X
    is_torch = is_torch_model(a.model)
    row = int(ws.test_idx[0]) if args.row is None else args.row
    if not 0 <= row < len(X):
        raise CandorError(f"--row {row} does not exist; rows are 0 to {len(X) - 1}")
    kinds = {}
    for c in a.codec.columns:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"model   {Path(args.model).name}: {type(a.model).__name__}, {a.task}, outputs: {a.kind} "
          f"({', '.join(a.output_names[:6])}{' ...' if len(a.output_names) > 6 else ''})", file=out)
    print(f"data    {ws.name}: {len(X)} rows x {X.shape[1]} features "
          f"({', '.join(f'{n} {k}' for k, n in kinds.items())}); target {ws.target!r}", file=out)
    for note in ws.notes:
        print(f"note    {note}", file=out)
    if is_torch:
        import torch

        torch.set_num_threads(1)  # ENVIRONMENT-NOTES: 2 threads on 2 shared cores can stall 40-50x
        params = a.model.parameter_fingerprint()
        n_params = sum(p.numel() for p in a.model.module.parameters())
        what = "one regression output" if a.task == "regression" else a.model.output
        print(f"torch   {a.model.source}: {n_params} parameters, {what}; parameters sha256 {params[:16]}", file=out)
    before = a.fingerprint(X.iloc[:20])
    x, bg = X.iloc[[row]], X.iloc[ws.train_idx]
    k = a.default_output()
    t0 = time.perf_counter()
    shap = _view("SHAP", lambda: ex.ShapExplainer(a, background=bg, target_index=k, target_name=a.output_names[k]))
    print(f"cost    SHAP {shap.algorithm}: {shap.cost['model_rows_per_row']} model rows per explained row, "
          f"~{shap.cost['memory_mb']} MiB; background {shap.params['background_size']} of "
          f"{shap.params['background_rows_given']} rows", file=out)
    allout = _view("SHAP", lambda: shap.explain_outputs(x))
    e = shap.from_row(x, allout.values[0, :, shap.target_index], float(allout.base_values[shap.target_index]))
    print(f"shap    row {row}, {e.target!r} ({shap.units}): prediction {e.prediction:.4g}, additivity gap "
          f"{e.additivity_gap:.1e}, values {allout.values.shape} (rows x features x outputs {allout.output_names}); "
          f"top: {_top(e.feature_names, e.values, e.params.get('feature_labels'))}", file=out)
    lime = _view("LIME", lambda: _lime(ex, ws, a, k).explain(x))
    print(f"lime    row {row}: local R2 {lime.fidelity.value:.3f} in-sample, {lime.params['heldout_r2']:.3f} held-out; "
          f"top: {_top(lime.feature_names, lime.values, ())}", file=out)
    if is_torch:
        _integrated_gradients(ex, ws, a, row, k, e, out)
    if a.task != "regression":
        labels = a.predict(X)
        s = _view("surrogate", lambda: TreeRuleSurrogate(max_leaf_nodes=8).fit(X.iloc[ws.train_idx],
                                                                                labels[ws.train_idx]))
        agree = float(np.mean(s.predict(X.iloc[ws.test_idx]) == labels[ws.test_idx]))
        top = max(s.rules_, key=lambda r: r.support)
        rule = conjunction_text(top.predicates, a.codec) or "(always)"
        print(f"rules   8-leaf CART surrogate: held-out agreement with the model {agree:.3f}; largest rule: "
              f"IF {rule} THEN {top.prediction}", file=out)
    else:
        print("rules   not applicable: rule surrogates explain class labels (regression model)", file=out)
    if a.fingerprint(X.iloc[:20]) != before:
        raise CandorError(f"{Path(args.model).name}: the model's predictions changed while explaining it")
    if is_torch and a.model.parameter_fingerprint() != params:
        raise CandorError(f"{Path(args.model).name}: the model's parameters changed while explaining it")
    same = f", parameters sha256 {params[:16]}" if is_torch else ""
    print(f"ok      model unchanged (prediction fingerprint {before[:12]}{same}); {time.perf_counter() - t0:.1f} s",
          file=out)


def _integrated_gradients(ex, ws, a, row: int, k: int, shap_row, out) -> None:
    """Integrated Gradients of output ``k`` from the training median, beside SHAP's values for the same row."""
    from explainers.gradients import integrated_gradients

    baseline = np.nanmedian(ws.X.iloc[ws.train_idx].to_numpy(dtype=float), axis=0)
    ig = _view("Integrated Gradients", lambda: integrated_gradients(
        a.model.scalar_module(k), ws.X.iloc[row].to_numpy(dtype=float), baseline, feature_names=a.feature_names,
        target=a.output_names[k], output_space=a.output_space, n_steps=50))
    rho = ex.spearman(np.abs(ig.values), np.abs(shap_row.values))
    print(f"ig      row {row}, {ig.target!r} ({a.units(k)}): f(x) - f(baseline) = "
          f"{ig.prediction - ig.base_value:+.4g}, completeness gap {ig.params['convergence_delta']:.1e} "
          f"({ig.params['n_steps']} steps, baseline = training median); Spearman |IG| vs |SHAP| {rho:.2f}; "
          f"top: {_top(ig.feature_names, ig.values, ())}", file=out)


def _lime(ex, ws, a, k):
    codec = a.codec
    cats = {j: [codec.columns[j].label(i) for i in range(len(codec.columns[j].levels))] for j in codec.categorical}
    missing = tuple(np.flatnonzero(ws.X.isna().to_numpy().any(axis=0)))
    mode = "classification" if a.kind == "probability" else "regression"
    return ex.LimeExplainer(a.outputs, training_data=ws.X.iloc[ws.train_idx], class_names=a.output_names,
                            target_index=k, num_samples=1000, seed=0, mode=mode, categorical_names=cats,
                            missing_columns=missing, output_space=a.output_space, units=a.units(k))


def _texts(args, out):
    from workspace.tables import read_table

    notes: list[str] = []
    df = read_table(args.data, notes)
    name = Path(args.data).name
    for col in (args.text_column, args.target):
        if col not in df.columns:
            raise CandorError(f"{name}: column {col!r} not found; columns are {', '.join(map(str, df.columns[:12]))}")
    print(f"data    {name}: {len(df)} texts in {args.text_column!r}; target {args.target!r}", file=out)
    for note in notes:
        print(f"note    {note}", file=out)
    return df[args.text_column].astype(str).tolist(), df


def _text_row(args, texts) -> int:
    row = 0 if args.row is None else args.row
    if not 0 <= row < len(texts):
        raise CandorError(f"--row {row} does not exist; rows are 0 to {len(texts) - 1}")
    return row


def run_hf_folder(args, out) -> None:
    """A Hugging Face classifier folder: attention and Integrated Gradients for one text (explainers.text)."""
    import explainers.text as xt
    from explainers.attention.extract import extract_attention

    from .services import text_loader

    folder = Path(args.model).resolve()
    try:  # the Text page's checks and messages, said of --model
        clf = text_loader.load(folder).model
    except CandorError as err:
        raise CandorError(str(err).replace(f"text model {folder}:", f"{Path(args.model).name}:", 1)) from None
    print(f"model   {Path(args.model).name}/: {clf.name}, {clf.n_layers} layers x {clf.n_heads} heads, labels "
          f"{', '.join(clf.labels)}, max {clf.max_length} tokens", file=out)
    texts, _ = _texts(args, out)
    row = _text_row(args, texts)
    attn = _view("attention", lambda: extract_attention(clf, texts[row]))
    enc = attn.encoding
    cut = (f"; truncated from {enc.n_tokens_before_truncation} tokens" if enc.truncated else "")
    print(f"attn    text row {row}: weights {attn.attention.weights.shape} (layers x heads x tokens x tokens){cut}",
          file=out)
    ig = _view("Integrated Gradients", lambda: xt.integrated_gradients(clf, texts[row], n_steps=20))
    print(f"ig      text row {row}: {len(ig.values)} tokens, completeness gap {ig.additivity_gap:.2e} "
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
    print(f"lime    text row {row}: local R2 {exp.score:.3f}; top words: "
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
