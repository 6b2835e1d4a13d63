"""Print a report's HTML to PDF with Debian's headless Chromium (``chromium --headless --print-to-pdf``)."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from workspace.errors import CandorError

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw")
"""ENVIRONMENT-NOTES' flags for Chromium as root on this machine, plus no header/footer in the PDF."""
VIRTUAL_TIME_MS = 20000
"""Virtual time Chromium gives the page before printing (plotly draws every figure within it)."""
TIMEOUT_S = 180


def chromium() -> str:
    """Path of the Chromium binary; raises :class:`CandorError` naming the package when it is missing."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise CandorError("--pdf needs Chromium: apt-get install chromium")
    return path


def print_pdf(html_path: Path, pdf_path: Path) -> None:
    """Print the HTML file at ``html_path`` to ``pdf_path`` (A4-sized by Chromium's default, backgrounds kept).

    Chromium runs with a fresh profile, every request other than the ``file://`` page refused
    (``--host-resolver-rules`` maps every host to nothing, a proxy that does not exist catches the rest).

    Raises
    ------
    CandorError
        If Chromium is missing, fails, times out or writes no PDF.
    """
    html_path, pdf_path = Path(html_path).resolve(), Path(pdf_path).resolve()
    with tempfile.TemporaryDirectory(prefix="candor-pdf-") as profile:
        cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={VIRTUAL_TIME_MS}",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
               f"--print-to-pdf={pdf_path}", html_path.as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CandorError(f"Chromium did not print {html_path.name} within {TIMEOUT_S} s") from None
    if done.returncode != 0 or not pdf_path.is_file() or pdf_path.stat().st_size == 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise CandorError(f"Chromium could not print {html_path.name} to PDF: {last}")
