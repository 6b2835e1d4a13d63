"""The one error type the app shows to people instead of a traceback."""


class CandorError(Exception):
    """A problem with the user's input, stated in one line that names what is wrong.

    The CLI prints it and exits with status 2; pages show it in an alert.
    """
