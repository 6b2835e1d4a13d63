"""Head masking, Michel importance (T15b), pruning curve, progress/cancel, CoNLL-U."""
import numpy as np
import pytest
import torch

from explainers.attention import AnalysisCancelled, analyze_heads, pruning_order
from explainers.text import head_gates, read_conllu

CONLLU = """# sent_id = s1
# text = Dogs bark loudly .
1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_
3\tloudly\tloudly\tADV\tRB\t_\t2\tadvmod\t_\t_
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = s2
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tgone\t_\t_\t_\t_\t_\t_\t_\t_
"""


def test_read_conllu(tmp_path):
    p = tmp_path / "x.conllu"
    p.write_text(CONLLU)
    s1, s2 = read_conllu(p)
    assert s1.sent_id == "s1" and s1.words == ("Dogs", "bark", "loudly", ".")
    assert s1.heads == (1, -1, 1, 1) and s1.deprels == ("nsubj", "root", "advmod", "punct")
    assert s2.words == ("do", "n't", "go") and s2.heads == (2, 2, -1)


def test_read_real_ewt_dev(shared_data):
    trees = read_conllu(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu", max_sentences=3)
    assert trees[0].words[:3] == ("From", "the", "AP") and trees[0].heads[0] == 2


def test_masking_all_heads_of_a_layer_changes_output(minilm):
    b = minilm.tokenizer(["a great movie"], return_tensors="pt")
    base = minilm(b["input_ids"], b["attention_mask"])[0]
    ones = torch.ones(6, 12)
    with head_gates(minilm, ones):
        same = minilm(b["input_ids"], b["attention_mask"])[0]
    assert torch.allclose(base, same)
    gates = ones.clone()
    gates[0] = 0
    with head_gates(minilm, gates):
        masked = minilm(b["input_ids"], b["attention_mask"])[0]
    assert not torch.allclose(base, masked)
    assert torch.allclose(minilm(b["input_ids"], b["attention_mask"])[0], base)  # hooks removed
    with pytest.raises(ValueError, match="gates must have shape"):
        with head_gates(minilm, torch.ones(5, 12)):
            pass


def test_t15b_head_with_zero_output_columns_has_zero_importance(tiny_bert):
    dense = tiny_bert.attention_outputs[1]
    saved = dense.weight.detach().clone()
    d = dense.weight.shape[1] // tiny_bert.n_heads
    with torch.no_grad():
        dense.weight[:, 2 * d:3 * d] = 0.0  # layer 1, head 2
    try:
        texts = ["a fine day", "the worst meal ever eaten", "ok", "nice and calm here"] * 2
        res = analyze_heads(tiny_bert, texts, batch_size=3, pruning_fractions=(0.0, 0.125, 0.5),
                            pruning_orders=("importance", "iterative"))
    finally:
        with torch.no_grad():
            dense.weight.copy_(saved)
    imp = res.importance
    assert imp.raw[1, 2] == 0.0 and (np.delete(imp.raw.ravel(), 6) > 0).all()
    assert pruning_order(imp.normalized)[0] == (1, 2)
    assert np.allclose(np.linalg.norm(imp.normalized, axis=1), 1.0)
    one_shot, iterative = res.pruning
    assert one_shot.order == "importance (one-shot)" and iterative.order == "importance (iterative)"
    for curve in res.pruning:
        assert curve.pruned_heads[0] == "1.2" and curve.n_pruned.tolist() == [0, 1, 4]
        assert curve.agreement[0] == 1.0 and curve.agreement[1] == 1.0  # a dead head changes nothing
        assert len(set(curve.pruned_heads)) == 4


def test_progress_and_cancel(tiny_bert):
    seen = []
    texts = ["one two", "three four five", "six"] * 3
    res = analyze_heads(tiny_bert, texts, batch_size=4, pruning_fractions=(0.0, 0.5),
                        random_seeds=(0,), progress=lambda d, t: seen.append((d, t)))
    # 3 batches x (attention/importance pass + one 50% evaluation per order); 0% is not recomputed
    assert seen[-1][0] == seen[-1][1] == 3 * (1 + 2)
    assert [c.order for c in res.pruning] == ["importance (one-shot)", "random(seed=0)"]
    calls = []
    with pytest.raises(AnalysisCancelled):
        analyze_heads(tiny_bert, texts, batch_size=4, cancel=lambda: len(calls) > 0,
                      progress=lambda d, t: calls.append(d))
    assert calls == [1]


def test_roles_on_real_trees(minilm, shared_data):
    trees = read_conllu(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu", max_sentences=40)
    res = analyze_heads(minilm, trees=trees, importance=False)
    r, w = res.roles, res.word_roles
    assert r.level == "token" and w.level == "word"
    assert r.confidence.shape == (6, 12) and ((r.confidence > 0) & (r.confidence <= 1)).all()
    assert w.n_queries == sum(len(t.words) for t in trees)
    assert w.eligible_prev == w.eligible_next == w.n_queries - len(trees)
    assert np.all(r.share_prev + r.share_next <= 1 + 1e-9)
    assert res.importance is None and res.pruning == ()
    # independent recomputation from the raw attentions, one sentence at a time (no batch, no padding):
    # content tokens 1..T-2; a query counts for -1 (+1) only if a content token is there
    hits, eligible, n_tokens = np.zeros((2, 6, 12)), np.zeros(2), 0
    for t in trees:
        enc = minilm.tokenizer(list(t.words), is_split_into_words=True, return_tensors="pt")
        with torch.no_grad():
            _, atts = minilm(enc["input_ids"], enc["attention_mask"], output_attentions=True)
        a = torch.stack(atts, 0)[:, 0].double().numpy()  # (6, 12, T, T)
        T = a.shape[-1]
        n_tokens += T - 2
        for q in range(1, T - 1):
            target = 1 + a[:, :, q, 1:T - 1].argmax(-1)  # argmax over content keys
            for side, nb in ((0, q - 1), (1, q + 1)):
                if 1 <= nb <= T - 2:
                    eligible[side] += 1
                    hits[side] += target == nb
    assert r.n_queries == n_tokens and (r.eligible_prev, r.eligible_next) == tuple(eligible)
    np.testing.assert_allclose(r.share_prev, hits[0] / eligible[0], atol=1e-12)
    np.testing.assert_allclose(r.share_next, hits[1] / eligible[1], atol=1e-12)
    assert "positional(-1)" in r.labels[0][2] and "positional(+1)" in r.labels[1][8]


def test_analyze_rejects_bad_input(tiny_bert):
    with pytest.raises(ValueError, match="exactly one"):
        analyze_heads(tiny_bert)
    with pytest.raises(ValueError, match="pruning_orders"):
        analyze_heads(tiny_bert, ["a b"], pruning_orders=("greedy",))
