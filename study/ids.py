"""Component IDs of the study and researcher pages (STYLE B3 rule 6). No dash import."""

# participant flow (/study/<study_id>)
STUDY_ID = "study-id"
TOKEN = "study-token"
BODY = "study-body"
ERROR = "study-error"
REFRESH = "study-refresh"
TIMING = "study-timing"
RENDER_T = "study-render-t"
URL_SYNC = "study-url-sync"
RECRUIT = "study-recruitment"
REDIRECT_URL = "study-redirect-url"
REDIRECT_TIMER = "study-redirect-timer"
REDIRECT_DONE = "study-redirect-done"
RETRY = "study-retry"  # re-sends an answer while the database cannot be reached

# researcher pages (/study-admin)
LOGIN_PASSWORD = "researcher-password"
LOGIN_BUTTON = "researcher-login"
LOGOUT_BUTTON = "researcher-logout"
LOGIN_MESSAGE = "researcher-login-message"
AUTH_STATE = "researcher-auth-state"
STUDY_SELECT = "researcher-study"
DASHBOARD = "researcher-dashboard"
EXPORT_CSV = "researcher-export-csv"
EXPORT_PARQUET = "researcher-export-parquet"
DOWNLOAD = "researcher-download"


def submit(step: int | str, phase: str | None = None) -> dict:
    """A flow button: ``step`` is a step index or ``"consent"``."""
    return {"type": "study-submit", "step": step, "phase": phase or ""}


def answer(field: str) -> dict:
    """An answer input: ``response``, ``confidence``, ``consent``, ``stratum`` or ``q:<label>``."""
    return {"type": "study-answer", "field": field}


def render_retry(index) -> dict:
    """The timer on the "briefly unavailable" screen that renders the step again (pattern-matching: absent otherwise)."""
    return {"type": "study-render-retry", "index": index}
