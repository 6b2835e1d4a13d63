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


def test_the_server_counts_its_requests_in_and_out_even_when_one_fails(sample_workspace, tmp_path):
    from app.serve.server import create_app
    from workspace.settings import Settings

    app = create_app(warm=False, settings=Settings(cache_dir=tmp_path / "cache", state_dir=tmp_path / "state",
                                                   upload_dir=tmp_path / "uploads"))
    seen = []
    app.server.add_url_rule("/_test/in-flight", "in_flight", lambda: (seen.append(services.yield_to_requests(0.0)), "")[1])
    with app.server.test_client() as client:
        assert client.get("/_test/in-flight").status_code == 200
        assert client.post("/_dash-update-component", data="{not json", content_type="application/json").status_code < 500
    assert seen == [False]  # during the request: one in flight
    assert services.yield_to_requests(0.0) is True  # after both, the failed one included: none
