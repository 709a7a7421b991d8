"""Logins against authorization servers as people run them (beyond/auth/clients.py, provider.py, login.py):
the Python SDK's (client_id read from the form, secrets checked as registered, clients forgotten on
a restart), a 2025-03-26 server that is its own authorization server, the TypeScript example's 500
for a token it no longer knows. tests/fakes/oauth_server.py plays each; BROWSER is the stand-in.
"""
import json
import os
import time

import pytest

import beyond_mcp
from beyond.auth import login
from beyond.auth.provider import FRESH
from conftest import ROOT, written_by_another
from fakes.oauth_server import OAuthFake
from mcp import McpError

BROWSER = str(ROOT / "tests" / "conformance_browser.py")
BOTH = ["client_secret_basic", "client_secret_post"]


@pytest.fixture(autouse=True)
def browser(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("BROWSER_PAGE_FILE", str(tmp_path / "page.html"))
    monkeypatch.delenv("GEEKAGENT_NO_BROWSER", raising=False)
    monkeypatch.setattr(login, "LOGIN_TIMEOUT_S", 8.0)  # a login that waits on a page that never redirects ends


def stored() -> dict:
    return json.load(open(os.path.join(os.environ["XDG_STATE_HOME"], "geekagent", "oauth.json")))


def logged_in(server: OAuthFake, oauth: dict | None = None, login=True) -> beyond_mcp.McpClient:
    client = beyond_mcp.McpClient("remote", {"url": server.url, **({"oauth": oauth} if oauth else {})})
    client.start(login=login)
    return client


def test_a_registration_for_basic_sends_client_id_in_the_form_as_well():
    """The SDK's token endpoint reads client_id from the form: Basic alone is refused there."""
    with OAuthFake(strict=True, methods=BOTH) as server:
        client = logged_in(server)
        try:
            assert client.call_tool("echo", {"text": "in"}) == "in"
        finally:
            client.stop()
        (registered,) = server.registrations
        assert registered["token_endpoint_auth_method"] == "client_secret_basic"
        code = [f for f in server.token_requests if f["grant_type"] == "authorization_code"]
        assert [f["client_id"] for f in code] == ["client-1"] and "client_secret" not in code[0]
        assert server.token_auth[-1].startswith("Basic ")


def test_an_entry_chooses_client_secret_post():
    """"tokenEndpointAuthMethod": "client_secret_post": the secret in the form, no Basic header,
    though the server offers Basic first."""
    clients = {"mine": {"secret": "s3cret", "method": "client_secret_post"}}
    with OAuthFake(strict=True, methods=BOTH, clients=clients) as server:
        client = logged_in(server, {"clientId": "mine", "clientSecret": "s3cret",
                                    "tokenEndpointAuthMethod": "client_secret_post"})
        client.stop()
        assert server.token_auth == [None] and server.token_requests[0]["client_secret"] == "s3cret"


def test_a_client_refused_as_basic_tries_post_once_and_keeps_what_worked():
    """An entry's client with a secret, registered at the server for post: Basic gets 401
    invalid_client, post works, and the refresh goes straight to post."""
    clients = {"mine": {"secret": "s3cret", "method": "client_secret_post"}}
    with OAuthFake(strict=True, methods=BOTH, clients=clients, life=3) as server:
        client = logged_in(server, {"clientId": "mine", "clientSecret": "s3cret"})
        try:
            assert stored()["tokens"][server.url]["client"] == {"client_id": "mine", "method": "client_secret_post"}
            assert "s3cret" not in json.dumps(stored())  # the entry's secret stays in the config
            server.access.clear()  # the token is refused: a refresh
            assert client.call_tool("echo", {"text": "again"}) == "again"
        finally:
            client.stop()
        assert [auth is not None for auth in server.token_auth] == [True, False, False]
        assert server.refreshes() == 1


def test_the_page_says_what_the_terminal_says(tmp_path):
    """A login whose code exchange fails: the browser's page says it failed, and why; one that works says so."""
    with OAuthFake(refuse_code=True) as server:
        with pytest.raises(McpError, match="the code was refused"):
            logged_in(server)
        page = written_by_another(tmp_path / "page.html")
        assert "The login failed" in page and "the code was refused" in page and "Logged in" not in page
    (tmp_path / "page.html").unlink()
    with OAuthFake() as server:
        logged_in(server).stop()
        assert "Logged in" in written_by_another(tmp_path / "page.html")


def test_a_registration_the_server_forgot_is_replaced_before_the_browser_opens():
    """The authorization server restarted: the kept client is checked at the token endpoint first
    (invalid_client), registered anew, and the login goes through; no page waits for a redirect."""
    with OAuthFake(strict=True, methods=BOTH) as server:
        logged_in(server).stop()
        server.restart()
        began = time.monotonic()
        client = logged_in(server, login=FRESH)
        try:
            assert client.call_tool("echo", {"text": "back"}) == "back"
        finally:
            client.stop()
        assert time.monotonic() - began < login.LOGIN_TIMEOUT_S
        assert len(server.registrations) == 2 and len(server.authorizations) == 2
        checks = [f for f in server.token_requests if f.get("refresh_token", "").startswith("registration-check")]
        assert [f["client_id"] for f in checks] == ["client-1"]


def test_a_registration_the_server_still_knows_is_kept():
    """The check finds the client known (invalid_grant for its made-up code): no new registration."""
    with OAuthFake(strict=True, methods=BOTH) as server:
        logged_in(server).stop()
        logged_in(server, login=FRESH).stop()
        assert len(server.registrations) == 1 and len(server.authorizations) == 2


def test_logout_forgets_the_registration_too(servers, tmp_path):
    """/mcp logout: tokens and the client registered for them go; the next login registers anew."""
    path = tmp_path / "mcp.json"
    with OAuthFake() as server:
        path.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))
        servers.connect_mcp_servers(str(path))
        assert servers.login("remote").startswith("1 tool; logged in")
        assert server.base in stored()["clients"]
        servers.logout("remote")
        assert server.base not in stored().get("clients", {})
        servers.login("remote")
        assert len(server.registrations) == 2


def test_login_never_tries_a_token_the_server_may_choke_on():
    """/mcp login (FRESH) after the server restarted and answers 500 to a token it does not know
    (the TypeScript example): no request carries the stored token; the login goes through."""
    with OAuthFake(stale_token_status=500) as server:
        logged_in(server).stop()
        old = stored()["tokens"][server.url]["access_token"]
        server.restart()
        first = len(server.mcp_headers)
        client = logged_in(server, login=FRESH)
        client.stop()
        assert all(old not in h.get("Authorization", "") for h in server.mcp_headers[first:])
        assert len(server.authorizations) == 2


def test_a_refresh_refused_as_invalid_client_registers_anew():
    """The server forgot the client while its tokens were stored: the refresh's invalid_client drops
    the registration, and the login that follows registers again."""
    with OAuthFake(strict=True, methods=BOTH) as server:
        client = logged_in(server)
        try:
            server.restart()
            assert client.call_tool("echo", {"text": "anew"}) == "anew"
        finally:
            client.stop()
        assert len(server.registrations) == 2
        assert stored()["clients"][server.base]["client_id"] == "client-2"


@pytest.mark.parametrize("no_metadata", [False, True], ids=["metadata at the origin", "default endpoints"])
def test_a_2025_03_26_server_is_its_own_authorization_server(no_metadata):
    """No protected resource metadata: the origin's metadata, else /authorize, /token, /register there."""
    iss = "http://not-compared.example" if no_metadata else None
    with OAuthFake(no_prm=True, no_metadata=no_metadata, iss=iss) as server:
        client = logged_in(server)
        try:
            assert client.call_tool("echo", {"text": "old"}) == "old"
        finally:
            client.stop()
        assert len(server.registrations) == 1 and len(server.authorizations) == 1


def test_the_delete_that_ends_a_session_carries_the_token_and_version():
    with OAuthFake(sessions=True) as server:
        client = logged_in(server)
        client.stop()
        (deleted,) = server.deletes
        token = stored()["tokens"][server.url]["access_token"]
        assert deleted["Authorization"] == f"Bearer {token}" and deleted["Mcp-Session-Id"] == "session-1"
        assert deleted["MCP-Protocol-Version"] == client.revision


def test_mcp_shows_who_which_scopes_and_until_when_only_for_a_login():
    with OAuthFake(token={"username": "alice"}) as server:
        client = logged_in(server)
        try:
            said = client.login_status()
        finally:
            client.stop()
        expires = time.localtime(stored()["tokens"][server.url]["expires_at"])
        assert said == f"logged in as alice (scopes: tools; until {time.strftime('%Y-%m-%d %H:%M %Z', expires)})"


def test_after_logout_calling_the_servers_tool_says_how_to_log_in(servers, tmp_path, capsys):
    import types
    from beyond.repl.commands import cmd_call
    path = tmp_path / "mcp.json"
    with OAuthFake() as server:
        path.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))
        servers.connect_mcp_servers(str(path))
        servers.login("remote")
        servers.logout("remote")
        capsys.readouterr()
        cmd_call(types.SimpleNamespace(servers=servers), "mcp_remote_echo {}")
        assert capsys.readouterr().out == "mcp_remote_echo: remote needs a login first: /mcp login remote\n"
