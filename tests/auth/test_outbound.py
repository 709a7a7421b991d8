"""What a login opens and fetches (beyond/auth/outbound.py), against remote servers simulated as remote hosts.

Names such as mcp.evil.test resolve to public-looking addresses (tests/fakes/remote_hosts.py) and
are served from this machine over TLS with a throw-away CA (SSL_CERT_FILE), so the client sees real
remote https servers; the browser (tests/conformance_browser.py, a child process) sees the same hosts.
"""
import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import beyond_mcp
from conftest import ROOT
from fakes import remote_hosts
from fakes.oauth_server import OAuthFake
from mcp import McpError

BROWSER = str(ROOT / "tests" / "conformance_browser.py")
PUBLIC = "198.51.100.7"  # a documentation address: public by its kind, never a real host


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    return remote_hosts.certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def remote(tls, monkeypatch):
    """remote(host, address=PUBLIC, **knobs): an OAuthFake served as https://host; stopped after the test."""
    ca, context = tls
    hosts: dict = {}
    getaddrinfo, create_connection = remote_hosts.hooks(hosts)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.delenv("GEEKAGENT_NO_BROWSER", raising=False)
    fakes = []

    def start(host: str, address: str | list[str] = PUBLIC, **knobs) -> OAuthFake:
        fake = OAuthFake(host=host, tls=context, **knobs)
        fakes.append(fake)
        hosts[host] = ([address] if isinstance(address, str) else address, fake.port)
        for key, value in remote_hosts.environment(hosts).items():  # the browser's process sees them too
            monkeypatch.setenv(key, value)
        return fake
    yield start
    for fake in fakes:
        fake.__exit__(None, None, None)


class Canary:
    """A local HTTP service (a Docker API, say) that counts what reaches it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                canary.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
            do_POST = do_GET

            def log_message(self, *args):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canary():
    service = Canary()
    yield service
    service.close()


def login(url: str, **entry):
    client = beyond_mcp.McpClient("remote", {"url": url, **entry})
    try:
        client.start(login=True)
        return client.call_tool("echo", {"text": "through"})
    finally:
        client.stop()


def test_a_remote_server_logs_in_over_https_and_its_certificate_is_checked(remote):
    """The simulated remote host is a real https server: the login and a call work through it."""
    server = remote("mcp.good.test")
    assert login(server.url) == "through"
    assert server.url == "https://mcp.good.test/mcp" and len(server.authorizations) == 1


@pytest.mark.parametrize("page", ["file:///etc/passwd", "javascript:alert(document.domain)",
                                  "--renderer-cmd-prefix=touch x", "http://as.evil.test/authorize",
                                  "https:///authorize", " https://mcp.evil.test/authorize",
                                  "https://mcp.evil.test/author\nize", "https://user@mcp.evil.test/authorize"])
def test_a_login_page_that_is_no_https_url_is_neither_shown_nor_opened(remote, tmp_path, monkeypatch, capfd, page):
    """The authorization server names the page the browser opens: anything but an https URL with a host
    fails the login, naming the field, before a word is printed, a client registered or a browser started."""
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$@\" > {opened}\n")
    browser.chmod(0o755)
    server = remote("mcp.evil.test", meta={"authorization_endpoint": page})
    monkeypatch.setenv("BROWSER", str(browser))
    with pytest.raises(McpError, match="authorization_endpoint"):
        login(server.url)
    assert not opened.exists() and server.registrations == [] and server.authorizations == []
    assert "Log in to" not in capfd.readouterr().out


@pytest.mark.parametrize("page, kind", [("http://127.0.0.1:{port}/admin/reset?all=1", "this machine"),
                                        ("https://192.168.1.1/cgi-bin/reset", "private network"),
                                        ("https://as.lan.test/authorize", "private network")])
def test_a_remote_servers_login_page_on_this_machine_or_a_private_network_is_never_opened(
        remote, canary, tmp_path, monkeypatch, page, kind):
    """A public server whose authorization_endpoint is a page of this machine (a local admin page) or of
    a private network, by address or by a name resolving there: the login fails naming the kind, and
    no browser is started (nothing reaches the local service)."""
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$@\" > {opened}\n")
    browser.chmod(0o755)
    remote("as.lan.test", address="192.168.7.7")
    server = remote("mcp.evil.test", meta={"authorization_endpoint": page.format(port=canary.server.server_port)})
    monkeypatch.setenv("BROWSER", str(browser))
    with pytest.raises(McpError, match=f"authorization_endpoint .*{kind}"):
        login(server.url)
    assert not opened.exists() and canary.requests == [] and server.authorizations == []


def test_a_local_servers_login_page_on_this_machine_still_opens(browser):
    """A server on this machine keeps its local login page (the usual development setup)."""
    with OAuthFake() as server:
        assert login(server.url) == "through" and len(server.authorizations) == 1


@pytest.mark.parametrize("where", ["registration_endpoint", "token_endpoint", "resource_metadata",
                                   "authorization_servers"])
def test_no_login_request_of_a_remote_server_reaches_this_machine(remote, canary, where):
    """Metadata naming a service on this machine (a local Docker API) for registration, the token, the
    protected resource metadata or the authorization server: the login fails naming the URL, and
    nothing reaches the service, neither the code nor the verifier."""
    target = f"{canary.url}/v1.43/images/create?fromImage=evil"
    knobs = {"registration_endpoint": {"meta": {"registration_endpoint": target}},
             "token_endpoint": {"meta": {"token_endpoint": target}},
             "resource_metadata": {"resource_metadata": target},
             "authorization_servers": {"prm": {"authorization_servers": [canary.url]}}}[where]
    server = remote("mcp.evil.test", **knobs)
    with pytest.raises(McpError) as caught:
        login(server.url)
    assert canary.requests == []
    assert canary.url in str(caught.value) and "this machine" in str(caught.value)


@pytest.mark.parametrize("address, kind", [("169.254.169.254", "link-local"), ("10.0.0.7", "private network"),
                                           (["198.51.100.9", "127.0.0.1"], "this machine")])
def test_an_authorization_server_nearer_than_its_server_is_never_asked(remote, address, kind):
    """A public server's authorization server on the cloud's metadata address, on a private network,
    or named by a host that resolves to a public address and to this machine: every address is
    checked before anything is sent."""
    auth = remote("as.evil.test", address=address)
    server = remote("mcp.evil.test", prm={"authorization_servers": [auth.base]})
    with pytest.raises(McpError, match=kind):
        login(server.url)
    assert auth.token_requests == auth.registrations == auth.authorizations == []


def test_servers_on_a_private_network_keep_their_private_authorization_server(remote):
    """An intranet server (its host resolves to a private address) logs in at an authorization server
    on the same network."""
    auth = remote("as.lan.test", address="10.1.2.4")
    server = remote("mcp.lan.test", address="10.1.2.3", prm={"authorization_servers": [auth.base]})
    auth.url = server.url  # the tokens the authorization server gives are the ones its server takes
    server.access = auth.access
    assert login(server.url) == "through"
    assert len(auth.authorizations) == 1 and server.authorizations == []


def test_the_address_checked_is_the_address_connected_to(remote, monkeypatch):
    """A name that resolves to a public address when checked and to this machine just after (DNS
    rebinding): the request goes to the address that was checked."""
    from beyond.auth.outbound import Outbound
    auth = remote("as.good.test")
    connection, path = Outbound("https://mcp.good.test/mcp").connection(
        f"{auth.base}/.well-known/oauth-authorization-server", "metadata", 10)
    hooked = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *args, **kwargs: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 443))] if host == "as.good.test"
        else hooked(host, *args, **kwargs))
    try:
        connection.request("GET", path)
        assert json.loads(connection.getresponse().read())["issuer"] == auth.base
    finally:
        connection.close()


# --- what is kept of a token answer ----------------------------------------------------------------

def store() -> dict:
    return json.load(open(os.path.join(os.environ["XDG_STATE_HOME"], "geekagent", "oauth.json")))


@pytest.fixture
def browser(monkeypatch):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.delenv("GEEKAGENT_NO_BROWSER", raising=False)


def test_an_oversized_token_answer_fails_that_login_and_keeps_every_other(browser):
    """A 400 KB access token or a 100,000-word scope: that login fails saying so; the logins of other
    servers stay in oauth.json, and their servers still work."""
    with OAuthFake() as good:
        assert login(good.url) == "through"
        for answer in ({"access_token": "t" * 400_000}, {"scope": " ".join(["word"] * 100_000)}):
            with OAuthFake(token=answer) as greedy:
                with pytest.raises(McpError, match="over 16,384 characters"):
                    login(greedy.url)
                assert greedy.url not in store()["tokens"]
        assert good.url in store()["tokens"]
        client = beyond_mcp.McpClient("again", {"url": good.url})
        try:
            assert client.start() and client.call_tool("echo", {"text": "still"}) == "still"
        finally:
            client.stop()


def test_an_absurd_lifetime_is_an_unknown_one(browser):
    """expires_in 1e300, -5 or "soon": the login works, its expiry is unknown, and /mcp can say so."""
    for life in (1e300, -5, "soon"):
        with OAuthFake(token={"expires_in": life}) as server:
            client = beyond_mcp.McpClient("remote", {"url": server.url})
            try:
                client.start(login=True)
                assert "no expiry" in client.login_status()
                assert store()["tokens"][server.url]["expires_at"] is None
            finally:
                client.stop()


LOGIN_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import beyond_mcp
client = beyond_mcp.McpClient("remote", {"url": sys.argv[2]})
try:
    client.start(login=True)
    print("logged in")
except beyond_mcp.McpError as e:
    print("refused:", e)
client.stop()
"""


def test_a_pasted_address_needs_this_logins_state_whatever_else_it_says(tmp_path):
    """The address pasted carries another state (and a parameter that once turned the check off):
    its code is not used. A bare code may be pasted (where the authorization server sends no iss to
    check): it is this login's by the person's word."""
    from conftest import run_in_pty
    import urllib.error
    import urllib.parse
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    def paste(shown: str, forged: bool) -> str:
        url = shown.split("Log in to remote: ", 1)[1].split()[0]
        try:
            urllib.request.build_opener(NoRedirect).open(url, timeout=10)
        except urllib.error.HTTPError as e:
            back = e.headers["Location"]
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(back).query))
        if not forged:
            return query["code"] + "\n"
        planted = {**query, "state": "other", "pasted": "1", "outcome": "planted"}
        return back.split("?")[0] + "?" + urllib.parse.urlencode(planted) + "\n"

    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    for forged, said in ((True, "refused: "), (False, "logged in")):
        with OAuthFake(meta={"authorization_response_iss_parameter_supported": forged}) as server:
            shown = run_in_pty([sys.executable, "-c", LOGIN_SCRIPT, str(ROOT / "day15"), server.url], tmp_path, env,
                               [("paste the address", lambda shown: paste(shown, forged)), (said, "")])
            assert (server.token_requests == []) is forged
            assert ("not for this login" in shown) is forged
