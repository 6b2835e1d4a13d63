"""The Text page's roles view: a compact label per head, every relation in the hover, the level said."""
import numpy as np

from app.views import figures_text as ft
from explainers.attention import RoleAccumulator


def _two_relation_roles(level: str):
    # one head looks from every word at its governor: nsubj d2h (offsets +2, +1, +3; baseline 1/3)
    # and obj d2h (offsets -2, -2, -1; baseline 2/3) both clear the +0.10 margin
    acc = RoleAccumulator(1, 2, relations=("nsubj", "obj"), min_arcs=1, level=level)
    for n, arcs, root in [(6, [(0, 2, "nsubj"), (4, 2, "obj")], 2), (5, [(0, 1, "nsubj"), (3, 1, "obj")], 1),
                          (6, [(1, 4, "nsubj"), (5, 4, "obj")], 4)]:
        heads, deprels = [root] * n, ["dep"] * n
        heads[root], deprels[root] = -1, "root"
        for dep, gov, rel in arcs:
            heads[dep], deprels[dep] = gov, rel
        gov_head, prev_head = np.zeros((n, n)), np.zeros((n, n))
        for q in range(n):
            gov_head[q, heads[q] if heads[q] >= 0 else q] = 1.0
            prev_head[q, max(q - 1, 0)] = 1.0
        acc.add(np.stack([gov_head, prev_head])[None], heads=heads, deprels=deprels)
    return acc.finalize()


def test_roles_view_lists_every_relation_and_says_the_level():
    token, word = _two_relation_roles("token"), _two_relation_roles("word")
    fig = ft.roles_view(token, word)
    assert len(fig.data) == 2  # token level and word level side by side
    cells = np.asarray(fig.data[0].text)
    assert cells[0, 0] == "syn×2" and cells[0, 1] == "−1"  # compact, no overlapping relation strings
    hover = fig.data[0].customdata[0][0]
    assert "nsubj:d2h: accuracy 1.00 vs baseline 0.33 (3 arcs)" in hover
    assert "obj:d2h: accuracy 1.00 vs baseline 0.67 (3 arcs)" in hover
    # -1 denominators by hand: sentences of 6, 5, 6 words have 5 + 4 + 5 = 14 queries with a neighbour
    assert "offset −1: 100.0 % ± 0.0 (n = 14)" in fig.data[0].customdata[0][1]
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0].startswith("token level") and titles[1].startswith("word level")
    assert "n = 14 of 17" in titles[0]
