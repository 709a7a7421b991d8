"""make bench's clients and figures still run (tests/bench/bench.py is not collected, so a part that
moved would break it unseen): each client once, the cheapest figures once, nothing timed."""
import importlib.util

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "tests" / "bench" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_client_of_the_bench_calls_the_echo_server(bench):
    for make in (bench.ours, bench.twin, bench.Floor, bench.ReaderFloor, bench.AskingProgress):
        client = bench.started(make)
        try:
            assert client.call_tool("echo", {"text": "x"})
        finally:
            client.stop()


def test_the_figures_of_the_full_client_alone_run(bench):
    assert bench.parallel_start_ms(1) > 0
    assert bench.import_ms("beyond_mcp") > 0
    assert bench.listing_mb() >= 0
    assert 0 < bench.es256_ms() < 1000
    assert bench.mask_us() > 0


@pytest.mark.parametrize("sse", [False, True], ids=["JSON answers", "SSE answers"])
def test_calls_over_http_keep_their_connection_whatever_the_answer(bench, sse):
    """100 sequential calls open no new connection, an event stream answer (ended after its reply) as a JSON one."""
    server = bench.HttpServer(sse)
    try:
        floor = bench.started(lambda: bench.HttpFloor(server.url))
        assert floor.call_tool("echo", {"text": "x"}) == "x"
        floor.stop()
        assert bench.http_connections_per_100(server) <= 1
    finally:
        server.stop()


def test_the_report_says_which_goals_are_met(bench):
    assert [bench.met("≤ 1.5× floor, or ≤ 1.05× twin", 14, 10), bench.met("≤ 1.5× floor, or ≤ 1.05× twin", 16, 10)] \
        == ["yes", "no (or the other row)"]
    assert [bench.met("≥ 0.7× floor", 6, 10), bench.met("≤ 150 ms", 151, None), bench.met("≤ 5", 0, None)] == \
        ["no", "no", "yes"]
    assert [bench.met("within 10 ms of floor", 35, 27), bench.met("about 4,600", 1, None)] == ["yes", ""]
