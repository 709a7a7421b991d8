"""The client's own logic, without a process (beyond/client/requests.py, revisions.py, from_server.py):
request ids, replies matched by id, cancellation, the revision agreed, progress, rounds of input.
The server is a handler behind tests/fakes/transport.py."""
import threading
import time

import pytest

from beyond.client.capabilities import AskRefused
from beyond.client.revisions import CLIENT_INFO, MAX_INPUT_ROUNDS, META, PROTOCOL_VERSION, UNSUPPORTED_VERSION
from beyond.wire.base import Rejected
from beyond_mcp import McpClient, McpError
from conftest import unhung
from fakes.transport import FakeServer, error, legacy, result

MODERN = "2026-07-28"


class Answering:
    """Ask handlers that answer every request of the server's with `answer(method, params)`."""

    def __init__(self, answer) -> None:
        self.answer_with, self.asked = answer, []

    def capabilities(self) -> dict:
        return {"elicitation": {"form": {}}}

    def answer(self, server: str, config, method: str, params: object) -> dict:
        self.asked.append((method, params))
        return self.answer_with(method, params)


@pytest.fixture
def client():
    """A started client on a FakeServer(handler), stopped at the end."""
    made = []

    def make(handler, entry: dict | None = None, **parts) -> tuple[McpClient, FakeServer]:
        server = FakeServer(handler)
        made.append(McpClient("s", {"command": "unused", **(entry or {})}, transport=server, **parts))
        made[-1].start()
        return made[-1], server
    yield make
    for c in made:
        c.stop()


def modern(on_call=None, supported=(MODERN,)):
    """A handler for a 2026-07-28 server: server/discover, one tool, each call answered by on_call."""
    def handle(message: dict):
        method = message.get("method")
        if method == "server/discover":
            return result(message, {"supportedVersions": list(supported), "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "fake", "version": "1"}})
        if method == "tools/list":
            return result(message, {"tools": [{"name": "echo", "inputSchema": {}}]})
        if method == "tools/call":
            return on_call(message)
        return None
    return handle


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


def test_every_request_has_a_new_integer_id(client):
    c, server = client(legacy())
    for word in ("a", "b", "c"):
        assert c.call_tool("echo", {"text": word}) == word
    ids = [m["id"] for m, _ in server.sent if "id" in m]
    assert all(type(i) is int for i in ids) and len(set(ids)) == len(ids) == 5  # initialize, tools/list, 3 calls
    assert ids == sorted(ids)


def test_replies_are_matched_by_id_not_by_order(client):
    """Two calls in flight: the second one's reply comes first, then the first one's, on the second's turn."""
    first_sent, held = threading.Event(), []

    def on_call(message):
        if message["params"]["arguments"]["text"] == "first":
            held.append(message)
            first_sent.set()
            return None
        return [result(message, text("second")), result(held[0], text("first"))]
    c, _ = client(legacy(on_call=on_call))
    outcome = {}
    caller = threading.Thread(target=lambda: outcome.update(first=c.call_tool("echo", {"text": "first"})))
    caller.start()
    assert first_sent.wait(10)
    assert c.call_tool("echo", {"text": "second"}) == "second"
    caller.join(10)
    assert outcome == {"first": "first"}


def test_a_reply_whose_id_is_not_our_integer_is_nobodys(client, capfd):
    """"1", true or 1.0 is no reply to request 1: dropped and said; the real reply still counts."""
    def on_call(message):
        i = message["id"]
        return [{"jsonrpc": "2.0", "id": wrong, "result": text("forged")} for wrong in (str(i), float(i), True)] + \
               [result(message, text("real"))]
    c, _ = client(legacy(on_call=on_call))
    assert c.call_tool("echo", {}) == "real"
    assert capfd.readouterr().err.count("dropped a reply to unknown or expired request id") == 3


def test_a_call_without_reply_fails_at_its_timeout_and_is_cancelled_by_id(client):
    c, server = client(legacy(on_call=lambda message: None), {"timeout": 0.3})
    with pytest.raises(McpError, match=r"no reply to tools/call within 0\.3 s"):
        unhung(c.call_tool, "echo", {})
    (call,) = server.requests("tools/call")
    (cancel,) = server.notifications("notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"] and "no reply within 0.3 s" in cancel["params"]["reason"]


def test_the_handshake_offers_the_newest_revision_and_speaks_what_the_server_answers(client):
    asks = Answering(lambda method, params: {})
    c, server = client(legacy(version="2025-03-26"), asks=asks)
    (init,) = server.requests("initialize")
    offered = {**asks.capabilities(), "extensions": {"io.modelcontextprotocol/skills": {}}}  # skills: every revision
    assert init["params"] == {"protocolVersion": PROTOCOL_VERSION, "capabilities": offered, "clientInfo": CLIENT_INFO}
    assert c.revision == "2025-03-26"
    methods = [m.get("method") for m, _ in server.sent]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]


def test_a_revision_this_client_does_not_speak_stops_that_server(client):
    server = FakeServer(legacy(version="1999-01-01"))
    c = McpClient("s", {"command": "unused"}, transport=server)
    with pytest.raises(McpError, match=r"unsupported protocol version '1999-01-01'"):
        c.start()
    assert server.transports[0].stopped and not server.requests("tools/list")


def test_a_modern_server_is_discovered_and_every_request_carries_the_envelope(client):
    c, server = client(modern(lambda m: result(m, text("hi"))), {"protocol": MODERN})
    assert c.call_tool("echo", {}) == "hi"
    assert c.revision == MODERN and not server.requests("initialize")
    assert [m["method"] for m, _ in server.sent] == ["server/discover", "tools/list", "tools/call"]
    for message, about in server.sent:
        meta = message["params"]["_meta"]
        assert meta[f"{META}protocolVersion"] == MODERN and f"{META}clientCapabilities" in meta
        assert about.revision == MODERN and about.routed and about.method == message["method"]


def test_a_refused_version_is_retried_once_in_one_both_speak_with_a_new_id(client):
    refusals = []

    def on_call(message):
        if not refusals:
            refusals.append(message)
            return error(message, UNSUPPORTED_VERSION, "unsupported", {"supported": [MODERN], "requested": "x"})
        return result(message, text("second try"))
    c, server = client(modern(on_call), {"protocol": MODERN})
    assert c.call_tool("echo", {}) == "second try"
    first, second = server.requests("tools/call")
    assert first["id"] != second["id"]


def test_a_server_that_speaks_no_version_of_ours_is_named_with_both_lists(client):
    def on_call(message):
        return error(message, UNSUPPORTED_VERSION, "unsupported", {"supported": ["2031-01-01"]})
    c, server = client(modern(on_call), {"protocol": MODERN})
    with pytest.raises(McpError,
                       match=r"tools/call failed: the server speaks 2031-01-01; this client speaks 2026-07-28"):
        c.call_tool("echo", {})
    assert len(server.requests("tools/call")) == 1


def test_auto_falls_back_to_the_handshake_when_discovery_is_unknown(client):
    def handle(message):
        if message.get("method") == "server/discover":
            return error(message, -32601, "Method not found")
        return legacy()(message)
    c, server = client(handle, {"protocol": "auto"})
    assert c.revision == PROTOCOL_VERSION and len(server.requests("initialize")) == 1
    assert "server/discover found no 2026-07-28 server" in c.from_server.tail[-1]


def test_progress_of_a_call_reaches_its_callback_and_no_other(client):
    def on_call(message):
        token = message["params"]["_meta"]["progressToken"]
        note = {"jsonrpc": "2.0", "method": "notifications/progress"}
        return [{**note, "params": {"progressToken": token, "progress": 1, "total": 2, "message": "half"}},
                {**note, "params": {"progressToken": token + 1000, "progress": 9}},  # another call's: not ours
                {**note, "params": {"progressToken": float(token), "progress": 9}},  # 1.0 is not token 1
                {**note, "params": {"progressToken": token, "progress": 2, "total": 2}},
                result(message, text("done"))]
    c, _ = client(legacy(on_call=on_call))
    seen = []
    assert c.call_tool("echo", {}, on_progress=seen.append) == "done"
    assert seen == ["1/2 half", "2/2"]


def input_required(message: dict, state: str | None, requests: dict) -> dict:
    value = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        value["requestState"] = state
    return result(message, value)


def test_input_rounds_answer_each_request_and_echo_the_state_with_new_ids(client):
    form = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object"}}}

    def on_call(message):
        params = message["params"]
        if "requestState" not in params:
            return input_required(message, "round-1", {"who": form, "refused": {"method": "sampling/createMessage"}})
        return result(message, text(f"{params['requestState']}: {params['inputResponses']}"))

    def answer(method, params):
        if method == "sampling/createMessage":
            raise AskRefused(-32601, "no")
        return {"action": "accept", "content": {"name": "ada"}}
    asks = Answering(answer)
    c, server = client(modern(on_call), {"protocol": MODERN}, asks=asks)
    assert c.call_tool("echo", {}) == "round-1: {'who': {'action': 'accept', 'content': {'name': 'ada'}}}"
    first, second = server.requests("tools/call")
    assert first["id"] != second["id"] and second["params"]["name"] == "echo"
    assert asks.asked[0] == ("elicitation/create", form["params"])


def test_a_server_that_always_wants_input_is_given_up_on_after_the_last_round(client):
    c, server = client(modern(lambda m: input_required(m, "again", {})), {"protocol": MODERN})
    with pytest.raises(McpError, match=f"asked for input more than {MAX_INPUT_ROUNDS} times"):
        c.call_tool("echo", {})
    assert len(server.requests("tools/call")) == 1 + MAX_INPUT_ROUNDS


def test_a_handshake_refused_with_a_bare_400_suggests_the_revision_and_other_refusals_do_not():
    """A server that says 400 to initialize (no JSON-RPC reply) may speak only 2026-07-28: the error
    says what to set; a 500 is no question of revisions. The status decides, not the words (the
    same here for both)."""
    for status, hinted in ((400, True), (500, False)):
        def handle(message, status=status):
            if message.get("method") == "initialize":
                raise Rejected("initialize to the server failed: HTTP 400 Bad Request", status)
            return legacy()(message)
        with pytest.raises(McpError, match="initialize to the server failed") as refused:
            McpClient("s", {"command": "unused"}, transport=FakeServer(handle)).start()
        assert ('set "protocol": "auto"' in str(refused.value)) == hinted, str(refused.value)


def test_stray_replies_print_a_bounded_number_of_lines(started, capfd):
    """A server process that sends 20,000 replies to ids never asked: each is kept for /logs (the last 200),
    but printed within the server's print budget (20 lines a second), with a line saying the rest are held
    back; the real reply still counts."""
    from beyond.client.from_server import PRINTED_PER_S, TAIL_LINES
    from conftest import fake
    client = started(fake("normal"))
    began = time.monotonic()
    assert client.call_tool("stray_replies", {}) == "real"
    took = time.monotonic() - began
    err = capfd.readouterr().err
    printed = err.count("dropped a reply to unknown or expired request id")
    assert printed <= PRINTED_PER_S * (took + 1) + 1 and "held back" in err, printed
    assert len(client.from_server.tail) == TAIL_LINES and "dropped a reply" in client.from_server.tail[-1]
