"""Session fixtures: the real MiniLM sentiment classifier (loaded once) and a tiny random BERT."""
from __future__ import annotations

import pytest
import torch




@pytest.fixture(scope="session")
def minilm():
    from explainers.text import load_minilm_sentiment

    torch.set_num_threads(1)
    return load_minilm_sentiment()


@pytest.fixture(scope="session")
def tiny_bert(minilm):
    """A 2-layer, 4-head random BERT with MiniLM's tokenizer and a zero-shot head."""
    from transformers import BertConfig, BertModel

    from explainers.text import TextClassifier, ZeroShotSentimentModel
    from explainers.text._model import _find_attention_outputs, _freeze

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=minilm.tokenizer.vocab_size, hidden_size=16, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=32, max_position_embeddings=64,
                     attn_implementation="eager")
    enc = BertModel(cfg, add_pooling_layer=False)
    enc.config._attn_implementation = "eager"
    module = _freeze(ZeroShotSentimentModel(enc, torch.randn(2, 16), scale=5.0))
    return TextClassifier(module=module, tokenizer=minilm.tokenizer, labels=("negative", "positive"),
                          word_embeddings=enc.get_input_embeddings(),
                          attention_outputs=_find_attention_outputs(enc), n_layers=2, n_heads=4,
                          max_length=64, name="tiny random BERT")


