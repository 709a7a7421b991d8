"""Tokens bound to a key (DPoP, beyond/auth/dpop.py) and clients that prove themselves with one
(private_key_jwt, beyond/auth/clients.py), against tests/fakes/dpop_server.py, which verifies every
proof and assertion. Logins without a person (client credentials): no browser is involved."""
import os
import stat

import pytest

import beyond_mcp
from beyond.auth import es256
from conftest import said_on_stderr
from fakes.dpop_server import AS_NONCE, RS_NONCE, DpopFake
from mcp import McpError

SECRET = "dpop-test-s3cret"
CLIENTS = {"ci": {"secret": SECRET, "method": "client_secret_post"}}
GRANT = {"grant": "client_credentials", "clientId": "ci", "clientSecret": SECRET}


def stored() -> str:
    return open(os.path.join(os.environ["XDG_STATE_HOME"], "geekagent", "oauth.json")).read()


def calls(server, oauth: dict, texts=("one", "two")) -> list[str]:
    client = beyond_mcp.McpClient("bound", {"url": server.url, "oauth": oauth})
    try:
        client.start()
        return [client.call_tool("echo", {"text": text}) for text in texts]
    finally:
        client.stop()


def test_tokens_are_bound_and_every_request_carries_a_fresh_proof():
    """The token request carries a proof for the token endpoint; the token comes bound (DPoP) and goes
    as `Authorization: DPoP` with a new proof on every request (htu the server's URL, ath its hash)."""
    with DpopFake(clients=CLIENTS) as server:
        assert calls(server, GRANT) == ["one", "two"]
        assert server.refused == []
        (token_proof,) = server.proofs["token"]
        assert token_proof["htu"] == f"{server.base}/token" and "ath" not in token_proof
        assert len(server.proofs["mcp"]) >= 4  # tools/list, two calls, and the handshake's
        assert {p["jkt"] for p in server.proofs["mcp"]} == {token_proof["jkt"]}
        assert server.schemes and set(server.schemes) == {"DPoP"}
    assert '"jkt"' in stored()


def test_a_nonce_is_answered_with_one_retry_each_at_the_token_endpoint_and_the_server():
    with DpopFake(nonce=True, clients=CLIENTS) as server:
        assert calls(server, GRANT) == ["one", "two"]
        assert [p.get("nonce") for p in server.proofs["token"]] == [None, AS_NONCE]
        assert server.proofs["mcp"][0].get("nonce") is None
        assert all(p.get("nonce") == RS_NONCE for p in server.proofs["mcp"][1:])  # kept for the next proofs
        assert server.nonces_given == 2


def test_a_server_with_a_new_nonce_every_time_gets_no_loop():
    """A hostile authorization server that wants a new nonce every time: two token requests, then the login fails."""
    with DpopFake(nonce=True, new_nonces=True, clients=CLIENTS) as server:
        with pytest.raises(McpError, match="use_dpop_nonce"):
            calls(server, GRANT)
        assert len(server.proofs["token"]) == 2


def test_dpop_false_keeps_bearer_tokens():
    with DpopFake(clients=CLIENTS) as server:
        assert calls(server, {**GRANT, "dpop": False}) == ["one", "two"]
        assert server.proofs == {"token": [], "mcp": []} and server.bound == {}
        assert server.schemes and set(server.schemes) == {"Bearer"}


def test_a_token_bound_to_a_key_no_longer_held_is_never_sent():
    """After a restart the key is gone (never written): the stored token is not sent, a new one is got."""
    with DpopFake(clients=CLIENTS) as server:
        calls(server, GRANT, ("first run",))
        old = next(iter(server.bound))
        seen = len(server.mcp_headers)
        assert calls(server, GRANT, ("second run",)) == ["second run"]
        assert not any(old in h.get("Authorization", "") for h in server.mcp_headers[seen:])
        assert len(server.proofs["token"]) == 2 and server.refused == []
        assert len({p["jkt"] for p in server.proofs["token"]}) == 2  # a key per login


def write_key(path, mode: int = 0o600) -> es256.Key:
    key = es256.Key.generate()
    der = bytes.fromhex("30770201010420") + key._d.to_bytes(32, "big") + bytes.fromhex("a00a06082a8648ce3d030107")
    der += b"\xa1\x44\x03\x42\x00\x04" + key.x.to_bytes(32, "big") + key.y.to_bytes(32, "big")
    import base64
    path.write_text("-----BEGIN EC PRIVATE KEY-----\n" + base64.b64encode(der).decode()
                    + "\n-----END EC PRIVATE KEY-----\n")
    os.chmod(path, mode)
    return key


def test_a_client_that_proves_itself_with_a_key(tmp_path, capfd):
    """private_key_jwt: a signed assertion (iss = sub = the client, aud = the issuer) instead of a secret;
    a key file others may read works, with a warning."""
    key = write_key(tmp_path / "key.pem", 0o644)
    clients = {"kj": {"secret": None, "method": "private_key_jwt"}}
    with DpopFake(keys={"kj": key.jwk()}, clients=clients) as server:
        oauth = {"grant": "client_credentials", "clientId": "kj", "privateKeyFile": str(tmp_path / "key.pem")}
        assert calls(server, oauth, ("keyed",)) == ["keyed"]
        (form,) = server.token_requests
        assert form["client_assertion_type"].endswith("jwt-bearer") and "client_secret" not in form
        assert server.token_auth == [None] and server.refused == []
    assert said_on_stderr(capfd, "can be read by others than you")
    assert stat.S_IMODE(os.stat(tmp_path / "key.pem").st_mode) == 0o644  # the agent changes nothing of the user's


def test_a_folder_entry_reads_no_key_outside_its_folder(tmp_path):
    from beyond.auth.provider import OAuth
    write_key(tmp_path / "outside.pem")
    (tmp_path / "p").mkdir()
    oauth = OAuth("x", "https://mcp.example.com/mcp", {"clientId": "c", "privateKeyFile": "../outside.pem"}, print,
                  folder=str(tmp_path / "p"))
    with pytest.raises(Exception, match="outside the folder"):
        oauth.clients.configured({"issuer": "https://as.example.com"})


def test_the_trust_question_names_the_key_file():
    from beyond.client.config import parse_server_config
    from beyond.folder.question import what_runs
    config = parse_server_config("mcp.json: mcpServers.k", {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant": "client_credentials", "clientId": "k", "privateKeyFile": "ci/key.pem"}})
    assert "reads ci/key.pem" in what_runs(config)
    with pytest.raises(McpError, match='"oauth.clientSecret" and "oauth.privateKeyFile" cannot go together'):
        parse_server_config("k", {"url": "https://mcp.example.com/mcp", "oauth": {
            "clientId": "k", "clientSecret": "s", "privateKeyFile": "key.pem"}})
    with pytest.raises(McpError, match='"oauth.dpop" must be true or false'):
        parse_server_config("k", {"url": "https://mcp.example.com/mcp", "oauth": {"dpop": "no"}})


def test_logout_of_a_key_client_revokes_with_its_own_assertion(tmp_path):
    """/mcp logout of a private_key_jwt client: the revocation request proves the client with a new assertion,
    and the authorization server takes it; with a key it does not know, each token that could not be revoked
    is named (and the tokens are forgotten all the same)."""
    from beyond.auth.provider import OAuth
    key = write_key(tmp_path / "key.pem")
    write_key(tmp_path / "other.pem")
    with DpopFake(keys={"kj": key.jwk()}, clients={"kj": {"secret": None, "method": "private_key_jwt"}}) as server:
        oauth = {"grant": "client_credentials", "clientId": "kj", "privateKeyFile": str(tmp_path / "key.pem")}
        assert calls(server, oauth, ("keyed",)) == ["keyed"]
        assert OAuth("bound", server.url, oauth, print, allow_insecure=True).logout() == "revoked and forgotten"
        assert server.revoked and all(form["client_assertion_type"].endswith("jwt-bearer") for form in server.revoked)
        assert calls(server, oauth, ("again",)) == ["again"]
        wrong = {**oauth, "privateKeyFile": str(tmp_path / "other.pem")}
        said = OAuth("bound", server.url, wrong, print, allow_insecure=True).logout()
        assert said.startswith("revoked nothing: the refresh token could not be (") and said.endswith("; forgotten")
        assert "; the access token could not be (" in said and "HTTP 401" in said and '"access_token"' not in stored()
