"""Attention vs attribution on transformer text classifiers (issue 5).

Pure compute (torch, transformers, captum, numpy, scipy; lime and shap
imported lazily); no dash, flask or plotly. Public API:

* models: :func:`load_minilm_sentiment` (bundled default, offline),
  :func:`load_text_classifier` (a local Hugging Face folder),
  :class:`TextClassifier`, :func:`head_gates`, :func:`evaluate_accuracy`;
* one text: :func:`integrated_gradients`, :func:`gradient_x_input`,
  :func:`lime_text`, :func:`shap_text` -> :class:`explainers.types.Explanation`;
  the text's attention is read in :mod:`explainers.attention`
  (``extract_attention`` -> :class:`TextAttention`, ``attention_scores``,
  ``compare_attention_attribution`` -> :class:`TextAgreementReport`), one
  home for tabular and text;
* a dataset: :func:`read_conllu`; head roles and importance over a dataset
  (``analyze_heads`` -> :class:`HeadAnalysis`, ``RoleAccumulator``) are in
  :mod:`explainers.attention`, the one home of attention analysis;
* Lopardo et al. (2024): :class:`LopardoClassifier`, :func:`train_lopardo`,
  :func:`closed_form_gradient`, :func:`lopardo_scores`.
"""
from explainers.text._attribution import explained_output, gradient_x_input, integrated_gradients
from explainers.text._data import ConlluSentence, evaluate_accuracy, read_conllu, read_labelled_sentences
from explainers.text._lime_text import lime_text
from explainers.text._lopardo import (
    LopardoClassifier,
    SimpleVocab,
    closed_form_gradient,
    lopardo_scores,
    sinusoidal_positions,
    train_lopardo,
)
from explainers.text._model import (
    DEFAULT_LABEL_DESCRIPTIONS,
    TextClassifier,
    ZeroShotSentimentModel,
    detached_attention,
    head_gates,
    load_minilm_sentiment,
    load_text_classifier,
    minilm_model_dir,
)
from explainers.text._shap_text import shap_text
from explainers.text._tokens import MERGE_RULE, encode_batch, encode_text, merge_attention, merge_token_scores
from explainers.text._types import (
    HeadAnalysis,
    HeadImportance,
    HeadRoles,
    PruningCurve,
    TextAgreementReport,
    TextAttention,
    TextEncoding,
)

__all__ = [
    "ConlluSentence", "DEFAULT_LABEL_DESCRIPTIONS", "HeadAnalysis", "HeadImportance", "HeadRoles",
    "LopardoClassifier", "MERGE_RULE", "PruningCurve", "SimpleVocab", "TextAgreementReport",
    "TextAttention", "TextClassifier", "TextEncoding", "ZeroShotSentimentModel",
    "closed_form_gradient", "detached_attention", "encode_batch", "encode_text", "evaluate_accuracy",
    "explained_output", "gradient_x_input", "head_gates",
    "integrated_gradients", "lime_text", "load_minilm_sentiment", "load_text_classifier",
    "lopardo_scores", "merge_attention", "merge_token_scores", "minilm_model_dir",
    "read_conllu", "read_labelled_sentences", "shap_text",
    "sinusoidal_positions", "train_lopardo",
]
