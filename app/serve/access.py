"""Who is asking, and may they: Flask hooks for the Host header, cross-site POSTs, login and roles.

Every request passes, in order:

1. **Host**: the ``Host`` header must name an allowed host (``CANDOR_ALLOWED_HOSTS``, comma-separated;
   default ``localhost``, ``127.0.0.1``, ``::1`` and the host the server was started on), else 400.
   This stops DNS rebinding: a web page cannot make the browser talk to a Candor under its own name.
2. **Cross-site POST**: a POST whose ``Origin`` (or, without one, ``Referer``) is not this server is
   refused (403); one with neither header must carry a JSON body, which a cross-site page cannot send
   without a CORS preflight this server never grants.
3. **Who**: the user of the ``CANDOR_AUTH_HEADER`` header (when configured), else of the session
   cookie, else, when no users file or proxy header is configured and the request comes from this
   machine (and not through a proxy), the *local user*, who has every role (every role but
   ``researcher`` while ``CANDOR_RESEARCHER_PASSWORD`` asks researchers to log in).
4. **May they**: Dash callbacks need the role :mod:`app.serve.callback_roles` gives them (403 otherwise);
   anonymous users reach only the study participant's pages and callbacks and are sent to ``/login``.
"""
from __future__ import annotations

import ipaddress
import urllib.parse

import flask
from dash.exceptions import DependencyException
from markupsafe import escape

from accounts import login_limits, sessions
from accounts.binding import LOOPBACK_NAMES, host_of
from accounts.roles import has_role as _role_allows
from accounts.users import AccountsError, User, Users

from workspace import settings
from workspace.errors import CandorError
from workspace.settings import current
from .request_user import current_user, has_role, require_role  # noqa: F401  (read here and by pages)

COOKIE = "candor_session"
LOCAL_USER = "local"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
_PUBLIC_PREFIXES = ("/assets/", "/_dash-component-suites/", "/_favicon.ico", "/_dash-layout", "/_dash-dependencies",
                    "/_reload-hash", "/_candor/ready", LOGIN_PATH, LOGOUT_PATH)
_users = Users()


# ---- hosts and origins ---------------------------------------------------------------------------

def allowed_hosts() -> frozenset[str]:
    """Host names this server answers: loopback names always, and ``CANDOR_ALLOWED_HOSTS`` or the bound host.

    Loopback names stay allowed when ``CANDOR_ALLOWED_HOSTS`` is set (health checks and the operator's own
    ``curl`` on the server): DNS rebinding cannot forge them, since the browser sends the attacker's
    host name, never ``localhost`` or ``127.0.0.1``.
    """
    given = settings.current()
    names = [*LOOPBACK_NAMES, *(given.allowed_hosts or given.bind_hosts)]
    return frozenset(host_of(n) for n in names if n.strip() and host_of(n) not in ("0.0.0.0", "::"))


def host_allowed(host: str | None) -> bool:
    """Whether a ``Host`` header (``name`` or ``name:port``) names an allowed host."""
    if not host:
        return False
    hosts = allowed_hosts()
    return "*" in hosts or host_of(host) in hosts


def same_origin(url: str) -> bool:
    """Whether ``url`` (an ``Origin`` or ``Referer``) is this server: the request's own, allowed, ``Host``."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == flask.request.host.lower() \
        and host_allowed(parts.netloc)


# ---- users and roles -----------------------------------------------------------------------------

def local_role() -> str:
    """The local user's role: every role, but ``analyst`` while researchers log in with their own password."""
    return "analyst" if current().researcher_password else "researcher"


def _from_this_machine() -> bool:
    req = flask.request
    if req.headers.get("X-Forwarded-For") or req.headers.get("Forwarded"):
        return False  # through a proxy: the client is somewhere else
    try:
        return ipaddress.ip_address(req.remote_addr or "").is_loopback
    except ValueError:
        return False


def _identify() -> User | None:
    header = Users.auth_header()
    if header:
        user = _users.from_header(flask.request.headers.get(header))
        if user:
            return user
    session = sessions.lookup(flask.request.cookies.get(COOKIE))
    if session:
        user = _users.get(session.user_name)
        if user:
            return user
    if not Users.full_login() and _from_this_machine():
        return User(LOCAL_USER, local_role())
    return None


# ---- login ---------------------------------------------------------------------------------------

TooManyAttempts = login_limits.LoginRefused
"""A login refused before its password was checked (``str(exc)`` says why, ``exc.retry_after`` when to retry)."""


def attempt_login(name: str, password: str | None) -> User | None:
    """Check a login under the failed-login limits of :mod:`accounts.login_limits` (SECURITY.md).

    Returns the user, or None for a wrong name or password (counted as a failure of this name from this
    address).

    Raises
    ------
    TooManyAttempts
        The name must still wait from this address, or the account is locked; the password was not checked.
    """
    address = flask.request.remote_addr or ""
    token = login_limits.reserve(name, address)  # counted before the check: no race
    user = _users.check(name, password)
    if user is not None:
        login_limits.succeeded(name, address, token)
    return user


def cookie_options(samesite: str = "Lax") -> dict:
    """The session cookie's attributes: HttpOnly, SameSite, Secure on HTTPS or with ``CANDOR_SECURE_COOKIES=1``."""
    secure = current().secure_cookies == "1" or flask.request.is_secure
    return {"httponly": True, "samesite": samesite, "secure": secure, "path": "/",
            "max_age": int(sessions.session_seconds())}


def start_session(response, user: User, samesite: str = "Lax") -> None:
    """Create a server-side session for ``user`` and set its cookie on ``response`` (Flask or Dash's).

    The request's previous session, if any, ends: a fresh id at every login (no session fixation).
    """
    sessions.delete(flask.request.cookies.get(COOKIE))
    response.set_cookie(COOKIE, sessions.create(user.name), **cookie_options(samesite))


def end_session(response) -> None:
    """Delete this request's server-side session and clear its cookie on ``response``."""
    sessions.delete(flask.request.cookies.get(COOKIE))
    response.set_cookie(COOKIE, "", expires=0, max_age=0, httponly=True, samesite="Lax", path="/")


def _safe_next(target: str | None) -> str:
    """Only a path on this server (``/x``): not ``//evil.example``, ``https://...``, a backslash, or any
    white space or control character (browsers drop a tab, so ``/\t/evil.example`` became ``//evil.example``)."""
    if (not target or not target.startswith("/") or "\\" in target
            or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in target)):
        return "/"
    parts = urllib.parse.urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith("//"):
        return "/"
    return target


_FORM = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Candor · Log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}}
label{{display:block;margin-top:1rem}}input{{width:100%;padding:.4rem;font-size:1rem}}
button{{margin-top:1.2rem;padding:.5rem 1.2rem;font-size:1rem}}.msg{{color:#a00;margin-top:1rem}}</style></head>
<body><main><h1>Candor</h1><p>{intro}</p>
<form method="post" action="{action}">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" required value="{name}" {focus_name}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required {focus_pw}>
<input type="hidden" name="next" value="{next}">
<button type="submit">Log in</button></form>
<p class="msg" role="alert">{message}</p></main></body></html>"""


def _login_page(message: str = "", name: str = "", status: int = 200):
    target = _safe_next(flask.request.values.get("next"))
    user = current_user()
    intro = (f"Logged in as {escape(user.name)} ({escape(user.role)}). Log in as someone else:" if user
             else "Log in to see the explanations.")
    html = _FORM.format(intro=intro, action=LOGIN_PATH, name=escape(name), next=escape(target),
                        message=escape(message), focus_name="" if name else "autofocus",
                        focus_pw="autofocus" if name else "")
    return flask.Response(html, status=status, mimetype="text/html")


def _login():
    if flask.request.method == "GET":
        return _login_page(name=flask.request.args.get("user", "")[:64])
    name = flask.request.form.get("username", "")[:64]
    try:
        user = attempt_login(name, flask.request.form.get("password"))
    except TooManyAttempts as refused:
        response = _login_page(f"{str(refused)[:1].upper()}{str(refused)[1:]}.", name, 429)
        response.headers["Retry-After"] = str(max(1, round(refused.retry_after)))
        return response
    if user is None:
        return _login_page("Wrong user name or password.", name, 401)
    response = flask.redirect(_safe_next(flask.request.form.get("next")), code=303)
    start_session(response, user)
    return response


def _logout():
    response = flask.redirect(LOGIN_PATH, code=303)
    end_session(response)
    return response


# ---- the hook ------------------------------------------------------------------------------------

def _refuse(status: int, message: str):
    return flask.Response(f"candor: {message}\n", status=status, mimetype="text/plain")


def _check_request(dash_app, background_keys: frozenset[str]):
    from .callback_inputs import malformed_body, miscounted
    from .callback_roles import PARTICIPANT, required_role

    req = flask.request
    if not host_allowed(req.host):
        return _refuse(400, f"this server does not answer for host {req.host!r} (CANDOR_ALLOWED_HOSTS)")
    if req.method not in ("GET", "HEAD", "OPTIONS"):
        origin = req.headers.get("Origin")
        referer = req.headers.get("Referer")
        if origin is not None:
            ok = same_origin(origin)
        elif referer:
            ok = same_origin(referer)
        else:
            ok = req.mimetype == "application/json"
        if not ok:
            return _refuse(403, "cross-site request refused (Origin/Referer is not this server)")
    flask.g.candor_user = user = _identify()
    path = req.path
    if path == "/_dash-update-component":
        if user is None or not _role_allows(user.role, "analyst"):
            # only an analyst's callbacks carry files; anyone else's body is refused unread past a small
            # limit (a 60 MB body of JSON used to cost 18 s of CPU and 1.5 GB before the login check)
            cap = settings.current().max_callback_kb * 1024
            if req.content_length is None or req.content_length > cap:
                return _refuse(413, f"a request of this kind is limited to {cap // 1024:,} KiB "
                                    "(CANDOR_MAX_CALLBACK_KB); uploads need the analyst role")
        try:
            body = req.get_json(silent=True)
        except RecursionError:  # nesting past the JSON decoder's depth (100,000 "[" fit in 1 MiB)
            return _refuse(400, "the request's JSON is nested too deeply")
        if why := malformed_body(body, dash_app.callback_map):
            return _refuse(400, why)
        key = body["output"]
        needed = required_role(key, body, background=key in background_keys)
        if needed != PARTICIPANT and user is None:
            return _refuse(403, "you are not logged in (your session may have ended): reload the page to log in")
        if needed != PARTICIPANT and not _role_allows(user.role, needed):
            return _refuse(403, f"this needs the {needed} role; you are logged in as {user.name} ({user.role})")
        if why := miscounted(body, dash_app.callback_map):  # after the role: a forged call is refused for that
            return _refuse(400, why)
        return None
    if path.startswith(_PUBLIC_PREFIXES) or (path.startswith("/study/") and path.count("/") == 2):
        return None
    if user is None:
        if req.method in ("GET", "HEAD"):
            return flask.redirect(f"{LOGIN_PATH}?next={urllib.parse.quote(req.full_path.rstrip('?'))}", code=302)
        return _refuse(403, "log in first")
    return None


def install(dash_app) -> None:
    """Add the hooks and the ``/login`` and ``/logout`` routes to ``dash_app`` (after its callbacks are set up).

    Raises
    ------
    CandorError
        A bad users file or login setting (``CANDOR_USERS_FILE``, ``CANDOR_AUTH_ROLES``, ``CANDOR_LOGIN_*``, ...).
    """
    try:
        _users.validate()
        sessions.session_seconds()
        login_limits.LoginLimits.from_settings()
    except (AccountsError, ValueError) as err:
        raise CandorError(str(err)) from None
    background = frozenset(k for k, cb in dash_app.callback_map.items() if cb.get("background"))
    server = dash_app.server
    server.before_request_funcs.setdefault(None, []).insert(0, lambda: _check_request(dash_app, background))
    # a component-suites path Dash does not serve raised DependencyException: a 500 and 3 KB of log a request
    server.register_error_handler(DependencyException, lambda _err: _refuse(404, "no such file"))
    server.add_url_rule(LOGIN_PATH, "candor_login", _login, methods=["GET", "POST"])
    server.add_url_rule(LOGOUT_PATH, "candor_logout", _logout, methods=["POST"])
