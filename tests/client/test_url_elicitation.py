"""-32042 (2025-11-25: URL elicitation required): the pages a request waits on are asked as URL questions,
and the request is sent again once the user is done there, or the server says so (beyond/client/capabilities.py)."""

import pytest

from beyond_mcp import McpClient, McpError
from fakes.transport import FakeServer, error, legacy, result

PAGE = {"mode": "url", "elicitationId": "e-1", "url": "https://bank.example/connect?e=1",
        "message": "Connect your bank account first."}


class Pages:
    """Ask handlers that answer each URL question with `action` and say done with `done(completed)`."""

    def __init__(self, action: str = "accept", done=lambda completed: True) -> None:
        self.action, self.done, self.asked, self.finished_asked = action, done, [], 0

    def capabilities(self) -> dict:
        return {"elicitation": {"url": {}}}

    def answer(self, server: str, config, method: str, params: object) -> dict:
        self.asked.append((method, params))
        return {"action": self.action}

    def finished(self, server: str, config, completed) -> bool:
        self.finished_asked += 1
        return self.done(completed)


def needing_pages(pages: list[dict], times: int = 1):
    """A server whose first `times` calls answer -32042 with these pages; then the echo."""
    calls = []

    def on_call(message: dict):
        calls.append(message)
        if len(calls) <= times:
            return error(message, -32042, "This request requires more information.", {"elicitations": pages})
        return result(message, {"content": [{"type": "text", "text": "connected"}]})
    return legacy(on_call=on_call), calls


@pytest.fixture
def started():
    made = []

    def make(handler, asks) -> tuple[McpClient, FakeServer]:
        server = FakeServer(handler)
        made.append(McpClient("bank", {"command": "unused"}, transport=server, asks=asks))
        made[-1].start()
        return made[-1], server
    yield make
    for client in made:
        client.stop()


def test_each_page_is_asked_then_the_call_is_sent_again_once(started):
    asks = Pages()
    handler, calls = needing_pages([PAGE])
    client, _ = started(handler, asks)
    assert client.call_tool("echo", {}) == "connected"
    ((method, asked),) = asks.asked
    assert method == "elicitation/create" and asked["url"] == PAGE["url"] and asked["message"] == PAGE["message"]
    assert asks.finished_asked == 1 and len(calls) == 2 and calls[0]["id"] != calls[1]["id"]


def test_a_declined_page_fails_the_call_with_the_servers_message(started):
    asks = Pages(action="decline")
    handler, calls = needing_pages([PAGE])
    client, _ = started(handler, asks)
    with pytest.raises(McpError, match="This request requires more information"):
        client.call_tool("echo", {})
    assert len(calls) == 1 and asks.finished_asked == 0


def test_a_server_that_asks_again_after_the_pages_is_not_sent_a_third_time(started):
    handler, calls = needing_pages([PAGE], times=5)
    client, _ = started(handler, Pages())
    with pytest.raises(McpError, match="-32042"):
        client.call_tool("echo", {})
    assert len(calls) == 2


def test_the_servers_completion_notification_ends_the_wait(started):
    """finished() is told completed(): true once notifications/elicitation/complete for the page came."""
    seen = []

    def done(completed) -> bool:
        seen.append(completed())
        server.push({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                     "params": {"elicitationId": "e-1"}})
        seen.append(completed())
        return completed()

    handler, calls = needing_pages([PAGE])
    client, server = started(handler, Pages(done=done))
    assert client.call_tool("echo", {}) == "connected"
    assert seen == [False, True]


@pytest.mark.parametrize("pages", [[], [{"mode": "form"}], [PAGE] * 4], ids=["none", "not a url", "too many"])
def test_an_error_without_usable_pages_is_the_calls_error(started, pages):
    asks = Pages()
    handler, calls = needing_pages(pages)
    client, _ = started(handler, asks)
    with pytest.raises(McpError, match="-32042"):
        client.call_tool("echo", {})
    assert asks.asked == [] and len(calls) == 1
