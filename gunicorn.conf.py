"""gunicorn settings for Candor (``gunicorn -c gunicorn.conf.py``, as the Procfile does).

Threads, not only processes: an explanation of a slow model holds its request thread for seconds,
and with few threads every other user (even ``GET /``) waits behind it. Each worker runs
``CANDOR_THREADS`` (default 16) request threads; NumPy, PyTorch and scikit-learn release the GIL
in their heavy parts. ``WEB_CONCURRENCY`` (default 2) sets the number of worker processes.

Serving beyond this machine needs a login: :func:`on_starting` refuses a non-loopback bind unless
``CANDOR_USERS_FILE``, ``CANDOR_AUTH_HEADER`` or ``CANDOR_RESEARCHER_PASSWORD`` is set (and, for a
wildcard bind such as ``0.0.0.0``, ``CANDOR_ALLOWED_HOSTS``), with one ``candor: error: ...`` line.
"""
import os
import sys

wsgi_app = "app.serve.server:server"
preload_app = True  # workers fork from a master that loaded (and, with CANDOR_WARM=sync, warmed) the app
# a warm-up *thread* started in the master does not survive the fork: the workers would answer
# /_candor/ready with 503 for ever. Warm before forking unless the operator turned warming off.
if os.environ.get("CANDOR_WARM", "") not in ("sync", "0"):
    os.environ["CANDOR_WARM"] = "sync"
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("CANDOR_THREADS", "16"))
timeout = 120
# a proxy's X-Forwarded-Proto is believed only through CANDOR_PROXY_HOPS (app/serve/headers.py, werkzeug's ProxyFix), not
# by gunicorn for any client on loopback (its default: 127.0.0.1 could set https, or fail a request with "http")
secure_scheme_headers = {}


def on_starting(server):
    """Refuse to serve beyond loopback without a login, before any socket is opened; record the bound hosts."""
    from accounts.binding import check_bind
    from accounts.users import AccountsError

    try:
        hosts = check_bind(list(server.cfg.bind))
    except AccountsError as err:
        print(f"candor: error: {err}", file=sys.stderr, flush=True)
        sys.exit(2)
    os.environ["CANDOR_BIND_HOSTS"] = ",".join(hosts)  # the Host names allowed by default; workers inherit it


def when_ready(server):
    """In the master, after the app was preloaded (and warmed) and before the workers fork: collect its garbage and
    freeze what is left (``gc.freeze``, as CPython's documentation advises before forking). A worker's full
    collection then walks only what it made itself, not the 290,000 objects of the libraries, the model and the warm
    caches (144-154 ms a full collection on the sample, under 1 ms frozen), and the pages those objects sit on stay
    shared with the master instead of being copied when the collector touches them."""
    import gc

    gc.collect()
    gc.freeze()
