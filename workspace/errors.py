"""The one error type the app shows to people instead of a traceback."""


class CandorError(Exception):
    """A problem with the user's input, stated in one line that names what is wrong.

    The CLI prints it and exits with status 2; pages show it in an alert.
    """


def first_line(exc: BaseException) -> str:
    """``"TypeName: first line of the message"`` (just the type name if the message is empty), for one-line errors."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def raised_at(exc: BaseException) -> str:
    """``"file.py:LINE"`` of the innermost frame ``exc`` was raised in (``"?"`` without a traceback), for one-line
    reports of errors nobody foresaw."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}" if tb is not None else "?"


def command_line(exc: BaseException) -> tuple[str, int]:
    """What a command prints for ``exc`` after ``candor: error:``, and its exit status.

    A :class:`CandorError`: the first line of its message (``"(no message)"`` if empty), status 2. Anything else is
    an error Candor did not foresee: :func:`first_line` and :func:`raised_at`, asking for a report, status 1.
    """
    if isinstance(exc, CandorError):
        return (str(exc).strip().splitlines() or ["(no message)"])[0], 2
    return f"{first_line(exc)} (not an error Candor checks for at {raised_at(exc)}; please report it)", 1
