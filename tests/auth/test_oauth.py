"""Logging in to a protected remote server (beyond/auth/provider.py), against tests/fakes/oauth_server.py.

BROWSER is tests/conformance_browser.py: it follows the authorization server's redirect to the
client's own callback, as a person's browser would after they approve.
"""
import json
import os
import stat
import sys
import threading
import time

import pytest

import beyond_mcp
from conftest import ROOT, run_in_pty, wait_until
from fakes.oauth_server import OAuthFake
from mcp import McpError

BROWSER = str(ROOT / "tests" / "conformance_browser.py")


@pytest.fixture
def browser(monkeypatch):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.delenv("GEEKAGENT_NO_BROWSER", raising=False)


def store_path() -> str:
    return os.path.join(os.environ["XDG_STATE_HOME"], "geekagent", "oauth.json")


def test_a_server_that_needs_a_login_says_so_and_opens_nothing(capfd):
    """start() without login: the error names the command, and no authorization request is made."""
    with OAuthFake() as server:
        with pytest.raises(McpError, match=r"HTTP 401.*needs login: /mcp login remote"):
            beyond_mcp.McpClient("remote", {"url": server.url}).start()
        assert server.authorizations == [] and server.registrations == []


def test_login_then_expiring_tokens_are_refreshed_once_for_eight_callers(browser, capfd):
    """Tokens that live 2 s: 8 calls at once after expiry cause exactly one refresh; resource= is in
    both requests; the rotated refresh token is never used twice."""
    with OAuthFake(life=2) as server:
        client = beyond_mcp.McpClient("remote", {"url": server.url})
        try:
            client.start(login=True)
            (asked,) = server.authorizations
            assert asked["resource"] == server.url and asked["code_challenge_method"] == "S256"
            code_grant = [f for f in server.token_requests if f["grant_type"] == "authorization_code"]
            assert [f["resource"] for f in code_grant] == [server.url]
            expiry = json.load(open(store_path()))["tokens"][server.url]["expires_at"]
            assert wait_until(lambda: time.time() > expiry - 0.2, 10)  # inside the refresh margin
            results, threads = {}, []
            for i in range(8):
                threads.append(threading.Thread(target=lambda i=i: results.__setitem__(
                    i, client.call_tool("echo", {"text": str(i)}))))
                threads[-1].start()
            for thread in threads:
                thread.join(30)
            assert results == {i: str(i) for i in range(8)}
            assert server.refreshes() == 1
            assert [f["resource"] for f in server.token_requests if f["grant_type"] == "refresh_token"] == [server.url]
        finally:
            client.stop()
        out = capfd.readouterr()
        for token in server.access:  # no token on screen
            assert token not in out.out and token not in out.err


def test_tokens_are_kept_for_the_user_alone_and_a_new_client_uses_them(browser, tmp_path, monkeypatch):
    """oauth.json is 0600 in the user's state, nothing of the token is in the project folder, and a
    second client (another agent, say) logs in with no new authorization."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".geekagent").mkdir()
    with OAuthFake() as server:
        first = beyond_mcp.McpClient("remote", {"url": server.url})
        first.start(login=True)
        first.stop()
        assert stat.S_IMODE(os.stat(store_path()).st_mode) == 0o600
        token = json.load(open(store_path()))["tokens"][server.url]["access_token"]
        for path in tmp_path.rglob("*"):
            assert not path.is_file() or token not in path.read_text(errors="replace")
        second = beyond_mcp.McpClient("remote", {"url": server.url})
        assert second.start() and second.call_tool("echo", {"text": "again"}) == "again"  # no login needed
        second.stop()
        assert len(server.authorizations) == 1


def test_a_token_the_server_no_longer_takes_is_refreshed_on_its_401(browser):
    """The server stops taking the access token (revoked, say): the 401 brings a refresh, not a login."""
    with OAuthFake() as server:
        client = beyond_mcp.McpClient("remote", {"url": server.url})
        try:
            client.start(login=True)
            server.access.clear()
            assert client.call_tool("echo", {"text": "still"}) == "still"
            assert server.refreshes() == 1 and len(server.authorizations) == 1
        finally:
            client.stop()


def test_logout_revokes_then_forgets(browser, tmp_path, servers):
    """/mcp logout: both tokens revoked at the server (RFC 7009), then gone from the file."""
    path = tmp_path / "mcp.json"
    with OAuthFake() as server:
        path.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))
        (status,) = servers.connect_mcp_servers(str(path))
        assert "needs login: /mcp login remote" in status.error and status.needs_login
        assert servers.login("remote").startswith("1 tool; logged in")
        assert servers.logout("remote") == "revoked and forgotten"
        assert {f["token_type_hint"] for f in server.revoked} == {"access_token", "refresh_token"}
        assert json.load(open(store_path()))["tokens"] == {}
        assert "/mcp login remote" in servers.mcp_statuses()[0].error


AGENT_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import beyond_mcp
client = beyond_mcp.McpClient("remote", {"url": sys.argv[2]})
client.start()
print("ready", flush=True)
sys.stdin.readline()
print("answer:", client.call_tool("echo", {"text": "go"}), flush=True)
client.stop()
"""


def test_two_agents_refresh_an_expiring_login_once(browser):
    """Two agent processes share the logins file: when the token nears its end both call at once,
    and the store's lock (read again before refreshing) makes that one refresh."""
    import subprocess
    with OAuthFake(life=2) as server:
        first = beyond_mcp.McpClient("remote", {"url": server.url})
        first.start(login=True)
        first.stop()
        agents = [subprocess.Popen([sys.executable, "-c", AGENT_SCRIPT, str(ROOT / "day15"), server.url],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            assert all(agent.stdout.readline().strip() == "ready" for agent in agents)
            expiry = json.load(open(store_path()))["tokens"][server.url]["expires_at"]
            before = server.refreshes()  # none, unless a start was slow enough to come near the end already
            assert wait_until(lambda: time.time() > expiry - 0.2, 10)  # inside the refresh margin
            for agent in agents:
                agent.stdin.write("go\n")
                agent.stdin.flush()
            assert [agent.communicate(timeout=30)[0].strip() for agent in agents] == ["answer: go"] * 2
        finally:
            for agent in agents:
                agent.kill()
        assert server.refreshes() - before == 1


def test_an_answer_naming_another_issuer_is_never_exchanged(browser):
    """RFC 9207: an iss that is not the authorization server's: the code never reaches the token endpoint."""
    with OAuthFake(iss="http://evil.example") as server:
        with pytest.raises(McpError, match="names another issuer"):
            beyond_mcp.McpClient("remote", {"url": server.url}).start(login=True)
        assert len(server.authorizations) == 1 and server.token_requests == []


def test_no_pkce_means_no_authorization_request(browser):
    """An authorization server that does not advertise S256: refused before anything is asked."""
    with OAuthFake(pkce=False) as server:
        with pytest.raises(McpError, match="does not offer PKCE"):
            beyond_mcp.McpClient("remote", {"url": server.url}).start(login=True)
        assert server.authorizations == [] and server.registrations == []


LOGIN_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import beyond_mcp
client = beyond_mcp.McpClient("remote", {"url": sys.argv[2]})
client.start(login=True)
print("answer:", client.call_tool("echo", {"text": "pasted"}))
client.stop()
"""


def test_without_a_browser_the_redirect_is_pasted_at_the_prompt(tmp_path):
    """No BROWSER, DISPLAY or WAYLAND_DISPLAY: the URL is printed, the address the browser ends on is
    pasted in the terminal, and the login goes on."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    def paste(shown: str) -> str:  # what a person does: open the URL elsewhere, copy where it ends
        url = shown.split("Log in to remote: ", 1)[1].split()[0]
        try:
            urllib.request.build_opener(NoRedirect).open(url, timeout=10)
        except urllib.error.HTTPError as e:
            return e.headers["Location"] + "\n"
        raise AssertionError("the authorization server did not redirect")

    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    with OAuthFake() as server:
        shown = run_in_pty([sys.executable, "-c", LOGIN_SCRIPT, str(ROOT / "day15"), server.url], tmp_path, env,
                           [("paste the address", paste), ("answer: pasted", "")])
        assert len(server.authorizations) == 1 and "answer: pasted" in shown
        for token in server.access:
            assert token not in shown


def test_a_redirect_for_another_login_is_waited_past(tmp_path, monkeypatch):
    """Another local program calls the login's listener first, with a code of its own: that answer
    is not for this login (its state differs) and the real one, after it, logs in."""
    script = tmp_path / "browser.py"
    script.write_text(f"""#!{sys.executable}
import sys, urllib.parse, urllib.request
url = sys.argv[1]
redirect = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["redirect_uri"]
urllib.request.urlopen(redirect + "?code=planted&state=not-yours", timeout=10).read()
sys.argv = ["browser", url]
exec(open({str(ROOT / "tests" / "conformance_browser.py")!r}).read())
""")
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))
    with OAuthFake() as server:
        client = beyond_mcp.McpClient("remote", {"url": server.url})
        try:
            assert client.start(login=True) and client.call_tool("echo", {"text": "mine"}) == "mine"
        finally:
            client.stop()
        assert "planted" not in [f.get("code") for f in server.token_requests]


def test_a_login_another_agent_made_is_used_at_the_next_401():
    """A server's client that found no tokens looks at the file only now and then; a 401 looks at once,
    and the request sent again carries what another agent's login put there."""
    from beyond.auth.provider import OAuth
    from beyond.auth.tokens import TokenStore
    url = "http://127.0.0.1:9/mcp"
    oauth = OAuth("remote", url, {}, lambda text: None)
    assert oauth.header() == {}
    with TokenStore().locked() as data:  # another agent logs in
        data.setdefault("tokens", {})[url] = {"access_token": "from-another-agent", "expires_at": None}
    oauth.unauthorized({}, "Bearer")
    assert oauth.header() == {"Authorization": "Bearer from-another-agent"}


@pytest.mark.parametrize("named, logs_in", [(lambda base: base + "/", True), (lambda base: base + "//", False),
                                            (lambda base: base + "/other", False), (lambda base: base.upper(), False)])
def test_an_issuer_that_differs_only_by_one_trailing_slash_is_the_same(browser, named, logs_in):
    """The official Python SDK's legacy example names http://localhost:PORT/ where it is found at
    http://localhost:PORT: that logs in; any other difference is refused before anything is sent."""
    with OAuthFake() as server:
        server.meta = {"issuer": named(server.base)}
        server.iss_override = server.meta["issuer"]
        client = beyond_mcp.McpClient("remote", {"url": server.url})
        if logs_in:
            client.start(login=True)
            assert client.call_tool("echo", {"text": "in"}) == "in"
            client.stop()
        else:
            with pytest.raises(McpError, match="names the issuer"):
                client.start(login=True)
            assert server.authorizations == [] and server.registrations == []
