"""``python -m app report``: write a review report (one self-contained HTML file, optionally a PDF) without serving.

Without ``--model`` the report explains the bundled sample. Every problem prints one line,
``candor: error: ...``, and exits with status 2.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from app.cli.model_flags import add_model_arguments
from workspace.errors import CandorError


class _OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, ``candor: error: ...``, exit 2."""

    def error(self, message: str):
        self.exit(2, f"candor: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _OneLineParser(prog="python -m app report",
                       description="Write one self-contained HTML review report (plotly.js inlined, no network) "
                                   "and, with --pdf, print it with headless Chromium. Without --model: the "
                                   "bundled sample.")
    add_model_arguments(p)  # the same loading flags as python -m app and python -m app build
    p.add_argument("--store", help="read the explanations from a store written by python -m app build for this "
                                   "model and data (checked: hashes and sizes)")
    p.add_argument("--rows", help="rows to explain, e.g. 3,17,42 (default: the held-out rows with the highest, "
                                  "lowest and median explained output)")
    p.add_argument("--k", type=int, default=3, help="items the persuasive story shows (default 3)")
    p.add_argument("--out", required=True, help="the HTML file to write")
    p.add_argument("--pdf", help="also print the report to this PDF file (needs Chromium)")
    return p


def _workspace(args):
    """The settings the flags name (over the environment, as ``python -m app``), the loaded workspace, its
    files (for their SHA-256) and the checked store (or None)."""
    from app.services.selection import Selection
    from store.read import open_for
    from workspace.settings import Settings
    from workspace.workspace import SAMPLE_MODEL

    args.text_model = None
    settings = Settings.from_args(args)
    ws = Selection.from_settings(settings).load()
    files = {"model": settings.model, "data": settings.data} if settings.model else {"model": SAMPLE_MODEL}
    return ws, files, (open_for(settings, ws) if settings.store else None)


def _writable(path: str, flag: str) -> Path:
    p = Path(path)
    if not p.parent.is_dir():
        raise CandorError(f"{flag} {path}: folder {p.parent} does not exist")
    if p.is_dir():
        raise CandorError(f"{flag} {path} is a folder; give a file name")
    return p


def outputs(out: str, pdf: str | None, k: int) -> tuple[Path, Path | None]:
    """The report's HTML file and PDF file (or None), checked before anything is computed, and ``k``.

    Raises
    ------
    CandorError
        For a folder that does not exist, a path that is a folder, or a negative ``k`` (one line each).
    """
    html_path = _writable(out, "--out")
    pdf_path = _writable(pdf, "--pdf") if pdf else None
    if k < 0:
        raise CandorError(f"--k must be 0 or more, got {k}")
    return html_path, pdf_path


def write(rows, *, k: int, html_path: Path, pdf_path: Path | None = None, files: dict | None = None,
          started: float | None = None) -> str:
    """Compute the report through the installed services, write the HTML (and the PDF); the one summary line.

    ``python -m app report`` and the notebook's :meth:`app.notebook.Candor.report` both write through here, each with
    its own workspace installed (:func:`app.services.overridden`). ``started``: when the work began (default now),
    for the time the line reports.
    """
    from .content import report_content
    from .render import render_html

    t0 = time.perf_counter() if started is None else started
    content = report_content(rows, k=k, files=files)
    html_path.write_text(render_html(content), encoding="utf-8")
    summary = (f"wrote {html_path} ({html_path.stat().st_size / 1e6:.1f} MB; rows "
               f"{', '.join(str(s.row) for s in content.rows)}) in {time.perf_counter() - t0:.1f} s")
    if pdf_path is not None:
        from .pdf import print_pdf

        t1 = time.perf_counter()
        print_pdf(html_path, pdf_path)
        summary += f"; {pdf_path} ({pdf_path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t1:.1f} s"
    return summary


def run(args, out) -> None:
    """Load, compute through the services, write the HTML (and the PDF); print one summary line to ``out``."""
    from app import services
    from workspace import settings as _settings

    from .content import parse_rows

    rows = parse_rows(args.rows)
    html_path, pdf_path = outputs(args.out, args.pdf, args.k)
    t0 = time.perf_counter()
    ws, files, store = _workspace(args)
    # a store's results are read, never recomputed (without one, computed here); surrogates fitted afresh in a
    # cache of their own, never read from another model's cache
    with tempfile.TemporaryDirectory(prefix="candor-report-") as cache, _settings.overridden(cache_dir=Path(cache)), \
            services.overridden(services.ServiceState(ws, opened_store=store)):
        summary = write(rows, k=args.k, html_path=html_path, pdf_path=pdf_path, files=files, started=t0)
    print(summary, file=out)


def main(argv: list[str]) -> int:
    """Entry point of ``python -m app report``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        run(args, sys.stdout)
    except CandorError as err:
        print(f"candor: error: {err}", file=sys.stderr)
        return 2
    return 0
