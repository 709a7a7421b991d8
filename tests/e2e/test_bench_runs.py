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
    for make in (bench.ours, bench.twin, bench.Floor, bench.AskingProgress):
        client = bench.started(make)
        try:
            assert client.call_tool("echo", {"text": "x"})
        finally:
            client.stop()


def test_the_figures_of_the_full_client_alone_run(bench):
    assert bench.parallel_start_ms(1) > 0
    assert bench.import_ms("beyond_mcp") > 0
    assert bench.listing_mb() >= 0
