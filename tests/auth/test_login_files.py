"""What a login without a person reads and where its secrets go (beyond/auth/grants.py, auth/provider.py):
the files an entry's "oauth" names are read as the trust question showed them, and a secret stays with
the authorization server it was first used with."""
import os
import subprocess
import sys

import pytest

import beyond_mcp
from beyond.auth.errors import AuthError
from beyond.auth.grants import _assertion
from beyond.auth.provider import FRESH
from conftest import AGENT, ROOT, agent_env, assert_no_process_left, workdir
from fakes.oauth_server import OAuthFake
from fakes.openai_server import FakeOpenAI, answer
from mcp import McpError

BROWSER = str(ROOT / "tests" / "conformance_browser.py")

ASSERTION = "eyJ.workload.jwt-1"


def cloned(tmp_path, url: str, assertion_file: str):
    """A cloned folder whose entry logs in by itself with the JWT bearer grant, reading `assertion_file`."""
    return workdir(tmp_path / "clone", {"ci": {"url": url, "oauth": {
        "grant": "jwt_bearer", "clientId": "runner", "assertionFile": assertion_file}}})


def test_a_folders_assertion_file_linked_to_the_agents_environment_is_never_sent(tmp_path):
    """ci/oidc.jwt committed as a link to /proc/self/environ: refused with the entry and the key named;
    the authorization server gets no token request, and the agent keeps working without that server."""
    with OAuthFake(assertions={ASSERTION}) as server:
        cwd = cloned(tmp_path, server.url, "ci/oidc.jwt")
        (cwd / "ci").mkdir()
        os.symlink("/proc/self/environ", cwd / "ci" / "oidc.jwt")
        env = {**agent_env(), "MARKER_SECRET": "sk-marker-0123456789"}
        with FakeOpenAI([answer("done")]) as model:
            env["OPENAI_BASE_URL"] = model.base_url
            done = subprocess.run([sys.executable, AGENT, "-p", "hi", "--trust"], cwd=cwd, capture_output=True,
                                  text=True, env=env, timeout=60)
        assert_no_process_left(cwd)
        assert done.returncode == 0 and done.stdout == "done\n", done.stderr
        assert server.token_requests == []
        assert "x ci: " in done.stderr and "oauth.assertionFile: ci/oidc.jwt is a link to /proc/" in done.stderr
        assert "sk-marker" not in done.stderr


@pytest.mark.parametrize("make, says", [
    (lambda d: os.symlink(d.parent / "outside.jwt", d / "token.jwt"), "outside the folder"),
    (lambda d: os.mkfifo(d / "token.jwt"), "not a regular file"),
    (lambda d: (d / "token.jwt").mkdir(), "not a regular file"),
    (lambda d: ((d / "token.jwt").touch(), os.truncate(d / "token.jwt", 100 << 20)), "is over"),
])
def test_a_folders_assertion_file_is_a_regular_file_of_the_folder_and_bounded(tmp_path, make, says):
    """A link out of the folder, a FIFO (whose read would never end), a directory, a 100 MB file:
    each refused at once with a line naming the key, nothing read from it."""
    folder = tmp_path / "clone"
    folder.mkdir()
    (tmp_path / "outside.jwt").write_text(ASSERTION)
    make(folder)
    with pytest.raises(AuthError, match=f"oauth.assertionFile: token.jwt .*{says}"):
        _assertion({"assertionFile": "token.jwt"}, str(folder))


def test_a_folders_entry_cannot_name_a_file_outside_it_but_the_users_own_entry_can(tmp_path):
    """An absolute path from a folder's entry is refused; the user's own config may name their files,
    never the kernel's."""
    (tmp_path / "mine.jwt").write_text(ASSERTION + "\n")
    folder = tmp_path / "clone"
    folder.mkdir()
    with pytest.raises(AuthError, match="outside the folder"):
        _assertion({"assertionFile": str(tmp_path / "mine.jwt")}, str(folder))
    assert _assertion({"assertionFile": str(tmp_path / "mine.jwt")}, None) == ASSERTION
    os.symlink("/proc/self/environ", tmp_path / "env.jwt")
    with pytest.raises(AuthError, match="a file of the system's"):
        _assertion({"assertionFile": str(tmp_path / "env.jwt")}, None)


def test_a_client_secret_never_follows_the_server_to_another_authorization_server(monkeypatch, capfd):
    """Logged in with client_credentials at A; the server then names B: no token request (with the secret)
    reaches B, the error names B and /mcp login; a login asked for on purpose goes to B, said in a line."""
    monkeypatch.setenv("CI_SECRET", "ci-s3cret-value")
    clients = {"ci-client": {"secret": "ci-s3cret-value", "method": "client_secret_post"}}
    entry = {"grant": "client_credentials", "clientId": "ci-client", "clientSecret": "${CI_SECRET}"}
    with OAuthFake(methods=["client_secret_post"], clients=clients) as a, \
            OAuthFake(methods=["client_secret_post"], clients=clients) as b:
        client = beyond_mcp.McpClient("ci", {"url": a.url, "oauth": entry})
        client.start()
        client.stop()
        a.prm = {"authorization_servers": [b.base]}
        a.restart()  # its tokens are gone: the next start must log in again
        with pytest.raises(McpError, match=f"sends its login to {b.base}.*/mcp login ci"):
            beyond_mcp.McpClient("ci", {"url": a.url, "oauth": entry}).start()
        assert b.token_requests == [] and len(a.token_requests) == 1
        again = beyond_mcp.McpClient("ci", {"url": a.url, "oauth": entry})
        with pytest.raises(McpError):  # b's token is not one a takes: logged in at b all the same
            again.start(login=FRESH)
        again.stop()
        assert b.token_requests[0]["client_secret"] == "ci-s3cret-value"
    assert f"logging in at {b.base} from now on" in capfd.readouterr().err


def test_a_login_without_the_entrys_secrets_registers_at_the_new_authorization_server(monkeypatch):
    """A browser login registered at A; the server then names B: the next login registers at B (SEP-2352),
    since nothing of the entry's goes there."""
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.delenv("GEEKAGENT_NO_BROWSER", raising=False)
    with OAuthFake() as a, OAuthFake() as b:
        client = beyond_mcp.McpClient("remote", {"url": a.url})
        client.start(login=True)
        client.stop()
        a.prm = {"authorization_servers": [b.base]}
        a.restart()
        with pytest.raises(McpError):  # b's token is not one a takes: registered and logged in at b all the same
            beyond_mcp.McpClient("remote", {"url": a.url}).start(login=True)
        assert len(b.registrations) == 1 and len(b.authorizations) >= 1 and len(a.registrations) == 1
