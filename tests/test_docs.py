"""The methods are documented inside the repository (issue 12).

Nothing may send a reader to the methods specification that lives outside the repository, and
every ``docs/methods.md, "<section>"`` reference names a heading that docs/methods.md has.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHODS_DOC = ROOT / "docs" / "methods.md"
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", "instance"}
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".ini", ".cfg", ".json", ".html", ".js",
                 ".css", ".sh", ""}
# Built from pieces so that this file does not match itself.
FORBIDDEN = ("METHODS" + ".md", "METHODS" + " §")
# docs/methods.md, "Heading" (or 'Heading'), possibly followed by: and "Other heading"
REFERENCE = re.compile(r"docs/methods\.md,\s*(?:#\s*)?([\"'])([^\"'\n]+)\1((?:\s+and\s+[\"'][^\"'\n]+[\"'])*)")


def _files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        if path.suffix not in TEXT_SUFFIXES or path.stat().st_size > 2_000_000:
            continue
        try:
            yield rel, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def _headings() -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", METHODS_DOC.read_text("utf-8"), re.M)}


def test_methods_doc_exists_with_sections():
    headings = _headings()
    for needed in ("SHAP", "LIME", "Agreement", "Integrated Gradients", "Attention", "Attention vs attribution",
                   "Rule surrogates: MUSE and CART", "Persuasive layer", "Persuasive measures", "Gilpin labels",
                   "Study mode", "Tests with exact oracles", "References"):
        assert needed in headings


def test_nothing_cites_the_outside_specification():
    hits = [f"{rel}:{text.count(word)}x {word}" for rel, text in _files() for word in FORBIDDEN if word in text]
    assert not hits, "cite docs/methods.md or the paper instead: " + ", ".join(hits)


def test_every_methods_reference_names_an_existing_heading():
    headings = _headings()
    seen, missing = 0, []
    for rel, text in _files():
        if rel == Path(__file__).resolve().relative_to(ROOT):
            continue
        for m in REFERENCE.finditer(text):
            names = [m.group(2)] + re.findall(r"[\"']([^\"'\n]+)[\"']", m.group(3) or "")
            for name in names:
                if name.startswith("<"):  # a placeholder such as "<heading>"
                    continue
                seen += 1
                if name.strip() not in headings:
                    missing.append(f"{rel}: {name!r}")
    assert seen > 50, f"only {seen} references found: is the pattern still right?"
    assert not missing, "no such heading in docs/methods.md: " + ", ".join(missing)


def test_every_named_oracle_is_in_the_list():
    doc = METHODS_DOC.read_text("utf-8")
    section = doc.split("## Tests with exact oracles", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"\*\*(T\d+)\b", section))
    named = set()
    for rel, text in _files():
        if rel.parts[0] == "tests" or rel.parts[0] == "explainers" or rel.parts[0] == "study":
            for m in re.finditer(r"Tests with exact oracles[\"']?,?\s*((?:T\d+[^\n]*))", text):
                named.update(re.findall(r"\bT(\d+)\b", m.group(1)))
    assert named, "no test names an oracle"
    assert {f"T{n}" for n in named} <= listed
