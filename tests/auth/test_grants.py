"""Logins without a person (beyond/auth/grants.py): client credentials, workload identity (JWT bearer) and
enterprise-managed authorization, against tests/fakes/oauth_server.py (its /idp/token is the identity provider).
No browser is there to open: BROWSER is a program that fails the test if it is ever run."""
import json
import os
import time

import pytest

import beyond_mcp
from beyond.client.config import parse_server_config
from beyond.folder.question import what_runs
from conftest import wait_until
from fakes.oauth_server import OAuthFake
from mcp import McpError

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SECRET, ASSERTION, ID_TOKEN = "ci-s3cret-value", "eyJ.workload.jwt-1", "eyJ.user.id-token"


@pytest.fixture(autouse=True)
def no_browser(monkeypatch, tmp_path):
    opened = tmp_path / "browser-opened"
    monkeypatch.setenv("BROWSER", f"touch {opened}")
    yield
    assert not opened.exists(), "a login without a person opened a browser"


def stored() -> str:
    return open(os.path.join(os.environ["XDG_STATE_HOME"], "geekagent", "oauth.json")).read()


def started(server: OAuthFake, oauth: dict) -> beyond_mcp.McpClient:
    client = beyond_mcp.McpClient("ci", {"url": server.url, "oauth": oauth})
    client.start()  # no login=True: nobody is there to ask, and none is needed
    return client


def test_client_credentials_at_start_up_without_a_login(monkeypatch, capfd):
    """grant_type=client_credentials with resource, the secret by Basic (offered first), client_id in the
    form; no authorization request; the secret nowhere but the token request."""
    monkeypatch.setenv("CI_SECRET", SECRET)
    clients = {"ci-client": {"secret": SECRET, "method": "client_secret_basic"}}
    with OAuthFake(strict=True, methods=["client_secret_basic", "client_secret_post"], clients=clients) as server:
        client = started(server, {"grant": "client_credentials", "clientId": "ci-client",
                                  "clientSecret": "${CI_SECRET}"})
        try:
            assert client.call_tool("echo", {"text": "ran"}) == "ran"
        finally:
            client.stop()
        (form,) = server.token_requests
        assert form["grant_type"] == "client_credentials" and form["resource"] == server.url
        assert form["client_id"] == "ci-client" and "client_secret" not in form
        assert server.token_auth[0].startswith("Basic ") and server.authorizations == []
    out = capfd.readouterr()
    assert SECRET not in stored() + out.out + out.err


def test_jwt_bearer_repeats_the_grant_reading_the_file_again(tmp_path):
    """A token that lives 2 s: near its end the grant is made again, with what the file holds then."""
    path = tmp_path / "token.jwt"
    path.write_text(ASSERTION + "\n")
    with OAuthFake(life=2, assertions={ASSERTION, "eyJ.workload.jwt-2"}) as server:
        client = started(server, {"grant": "jwt_bearer", "clientId": "runner", "assertionFile": str(path)})
        try:
            path.write_text("eyJ.workload.jwt-2")  # the CI runner's next token
            expiry = json.loads(stored())["tokens"][server.url]["expires_at"]
            assert wait_until(lambda: time.time() > expiry - 0.2, 10)
            assert client.call_tool("echo", {"text": "later"}) == "later"
        finally:
            client.stop()
        assert [(f["grant_type"], f["assertion"]) for f in server.token_requests] == \
            [(JWT_BEARER, ASSERTION), (JWT_BEARER, "eyJ.workload.jwt-2")]
        assert server.refreshes() == 0
    assert ASSERTION not in stored()


def test_a_refused_assertion_is_the_servers_error_with_no_other_try(monkeypatch):
    monkeypatch.setenv("RUNNER_JWT", "eyJ.not-accepted")
    with OAuthFake(assertions={ASSERTION}) as server:
        with pytest.raises(McpError, match="assertion refused"):
            started(server, {"grant": "jwt_bearer", "clientId": "runner", "assertion": "${RUNNER_JWT}"})
        assert len(server.token_requests) == 1 and server.authorizations == []


def test_enterprise_exchanges_the_id_token_then_presents_the_assertion(monkeypatch, capfd):
    """RFC 8693 at the identity provider (audience the issuer, resource the server), then the JWT bearer
    grant at the authorization server as the entry's client."""
    monkeypatch.setenv("ID_TOKEN", ID_TOKEN)
    clients = {"mcp-client": {"secret": SECRET, "method": "client_secret_basic"}}
    with OAuthFake(strict=True, methods=["client_secret_basic"], clients=clients, id_token=ID_TOKEN) as server:
        client = started(server, {"grant": "enterprise", "clientId": "mcp-client", "clientSecret": SECRET,
                                  "idpTokenEndpoint": f"{server.base}/idp/token", "idpClientId": "idp-client",
                                  "idToken": "${ID_TOKEN}"})
        try:
            assert client.call_tool("echo", {"text": "corp"}) == "corp"
        finally:
            client.stop()
        ((exchange, idp_auth),) = server.idp_requests
        assert exchange == {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": ID_TOKEN,
                            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                            "audience": server.base, "resource": server.url, "scope": "tools",
                            "client_id": "idp-client"} and idp_auth is None
        (form,) = server.token_requests
        assert form["grant_type"] == JWT_BEARER and form["assertion"] == "jag-1"
        assert server.token_auth[0].startswith("Basic ")
    out = capfd.readouterr()
    assert all(secret not in stored() + out.out + out.err for secret in (SECRET, ID_TOKEN, "jag-1"))


def test_the_trust_question_names_what_a_grant_reads_and_where_its_secrets_go():
    config = parse_server_config("mcp.json: mcpServers.ci", {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "jwt_bearer", "clientId": "runner", "assertionFile": "${RUNNER_TEMP}/oidc.jwt"}})
    said = what_runs(config)
    assert "logs in without you (jwt_bearer)" in said and "reads ${RUNNER_TEMP}/oidc.jwt" in said
    assert "oauth.assertionFile <- ${RUNNER_TEMP}" in said
    corp = parse_server_config("mcp.json: mcpServers.corp", {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "enterprise", "clientId": "c", "clientSecret": "${CORP_SECRET}", "idpClientId": "i",
        "idpTokenEndpoint": "https://idp.example.com/token", "idToken": "${CORP_ID_TOKEN}"}})
    said = what_runs(corp)
    assert "sends your ID token to https://idp.example.com/token" in said
    assert "oauth.idToken <- ${CORP_ID_TOKEN}" in said and "oauth.clientSecret <- ${CORP_SECRET}" in said


def test_under_p_a_ci_job_logs_in_with_its_workload_token(tmp_path):
    """beyond_agent.py -p with workload identity: no terminal, no browser; the allowed tool runs on the token,
    read from the job folder's own file."""
    import subprocess
    import sys
    from conftest import AGENT, agent_env, assert_no_process_left, workdir
    from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls
    with OAuthFake(assertions={ASSERTION}) as server:
        cwd = workdir(tmp_path / "job", {"ci": {"url": server.url, "oauth": {
            "grant": "jwt_bearer", "clientId": "runner", "assertionFile": "ci/oidc.jwt"}}},
            {"mcp_ci_echo": "allow"})
        (cwd / "ci").mkdir()
        (cwd / "ci" / "oidc.jwt").write_text(ASSERTION)
        with FakeOpenAI([tool_calls(("mcp_ci_echo", {"text": "deployed"})), answer_from_tools]) as model:
            done = subprocess.run([sys.executable, AGENT, "-p", "deploy"], cwd=cwd, capture_output=True, text=True,
                                  env=agent_env(model.base_url), timeout=60)
        assert_no_process_left(cwd)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Results: deployed\n" and len(server.token_requests) == 1
        audit = (cwd / ".geekagent" / "audit.jsonl").read_text()
        assert "mcp_ci_echo" in audit and ASSERTION not in done.stdout + done.stderr + audit + stored()
