"""The warm-up's long steps pause between rows while a request is served (issue 23: a store's 500 rows drawn on a
thread for about 5 s after the start shared the interpreter with the first clicks)."""
import threading

from app import services


def test_a_warm_up_loop_waits_for_the_request_in_flight_and_goes_on_when_it_ends():
    services.request_began()
    out = {}
    waiting = threading.Thread(target=lambda: out.setdefault("idle", services.yield_to_requests(30.0)))
    try:
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive()  # held while the request is served
        services.request_ended()
        waiting.join(10)
        assert not waiting.is_alive() and out["idle"] is True
    finally:
        services.request_ended()  # balanced even if an assertion failed above (the count never goes below 0)


def test_under_a_constant_stream_of_requests_the_warm_up_still_moves_on():
    services.request_began()
    try:
        assert services.yield_to_requests(0.01) is False  # gave up waiting: the step goes on
    finally:
        services.request_ended()
    assert services.yield_to_requests(0.01) is True


def test_the_request_hooks_count_in_and_out_even_when_a_request_fails():
    """The pair the server registers (``app/serve/server.py``: Flask's ``before_request`` and ``teardown_request``),
    on a plain Flask app: one in flight during a request, none after, a request that raised included."""
    import flask

    app = flask.Flask("probe")
    app.before_request(services.request_began)
    app.teardown_request(services.request_ended)
    seen = []

    @app.route("/ok")
    def ok():
        seen.append(services.yield_to_requests(0.0))
        return ""

    @app.route("/fails")
    def fails():
        raise RuntimeError("boom")

    with app.test_client() as client:
        assert client.get("/ok").status_code == 200
        assert client.get("/fails").status_code == 500
    assert seen == [False]  # during the request: one in flight
    assert services.yield_to_requests(0.0) is True  # after both, the failed one included: none
