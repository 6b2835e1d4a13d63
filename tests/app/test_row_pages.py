"""Which pages explain the navbar's row is written once, in ``app/shell/pages.py`` (issue 24), and its three
readers (the URL's ``row`` parameter, the navbar's row picker and URL writer, the landing page's links) read it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW_PATHS = {"/descriptive", "/persuasive", "/attention"}


def test_the_readers_read_the_one_list():
    from app.callbacks import shell
    from app.shell import pages, url_params, url_state
    from app.views import overview

    assert url_params.ROW_PAGES is pages.ROW_PAGES and shell.ROW_PAGES is pages.ROW_PAGES
    assert overview.ROW_PAGE_TABLE is pages.ROW_PAGE_TABLE
    assert pages.ROW_PAGES == ("/", "/descriptive", "/persuasive", "/attention")
    assert [(p.link, p.path) for p in pages.ROW_PAGE_TABLE if p.link] == [("Descriptive", "/descriptive"),
                                                                          ("Persuasive", "/persuasive")]
    assert shell.show_row_picker_on_row_pages("/attention") == "d-flex align-items-center"
    assert url_state.params("/attention")[-2].name == "row" and "row" not in {p.name for p in url_state.params("/text")}


def test_no_other_module_lists_the_row_pages():
    """No tuple, list or set literal outside ``app/shell/pages.py`` names two or more of the row pages."""
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path == ROOT / "app" / "shell" / "pages.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                named = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in ROW_PATHS}
                if len(named) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
