"""A protected MCP server and its authorization server on 127.0.0.1, stdlib only, for tests/test_oauth.py.

/mcp answers JSON-RPC (initialize, tools/list, tools/call echo) only with a valid bearer token, and
401 with a Bearer challenge otherwise. The authorization server serves RFC 8414 metadata, takes
registrations, approves every authorization request at once (302 to the redirect URI with code,
state and iss) and issues access tokens that expire in `life` seconds with refresh tokens that
rotate: each works once. It records what it was asked, for the tests to check.
Knobs: pkce=False (no code_challenge_methods_supported), iss="..." (the iss it sends back); as the
Python SDK's authorization server: methods (token_endpoint_auth_methods_supported), strict=True
(client_id read from the form, the secret as the client registered, an unknown client refused with
401 invalid_client, and at /authorize with a page of its own, never redirected back), clients
(pre-registered: id -> {"secret", "method"}), restart() (every client and token forgotten);
refuse_code=True (every code exchange fails); stale_token_status (what a token it does not know gets:
401, or the TypeScript example's 500); sessions=True (a session id, and every DELETE recorded); a
2025-03-26 server: no_prm=True (no protected resource metadata), no_metadata=True (none at all); the
grants without a person: client_credentials (for a client in `clients`), the JWT bearer grant for an
assertion in `assertions`, and an identity provider at /idp/token exchanging `id_token` for an ID-JAG
(each form it got in idp_requests), which the JWT bearer grant then takes; for a
server simulated as a remote host (tests/fakes/remote_hosts.py), host="mcp.evil.test" and tls (a
server context): it is then https://host; and what a hostile server says: meta (its metadata's keys),
prm (its protected resource metadata's), token (its token answer's), resource_metadata (the challenge's).
"""
import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OAuthFake:
    def __init__(self, life: float = 3600, pkce: bool = True, iss: str | None = None, host: str | None = None,
                 tls=None, meta: dict | None = None, prm: dict | None = None, token: dict | None = None,
                 resource_metadata: str | None = None, methods: list[str] | None = None, strict: bool = False,
                 clients: dict | None = None, refuse_code: bool = False, stale_token_status: int = 401,
                 sessions: bool = False, no_prm: bool = False, no_metadata: bool = False,
                 assertions: set | None = None, id_token: str | None = None) -> None:
        self.life, self.pkce, self.iss_override = life, pkce, iss
        self.methods, self.strict, self.clients = methods or ["none"], strict, dict(clients or {})
        self.refuse_code, self.stale_token_status, self.sessions = refuse_code, stale_token_status, sessions
        self.no_prm, self.no_metadata = no_prm, no_metadata
        self.assertions, self.id_token = set(assertions or ()), id_token
        self.idp_requests: list[tuple[dict, str | None]] = []  # (form, Authorization header) of every /idp/token
        self.token_auth: list[str | None] = []  # the Authorization header of every /token
        self.deletes: list[dict] = []           # the headers of every DELETE /mcp
        self.meta, self.prm, self.token_extra = meta or {}, prm or {}, token or {}
        self.resource_metadata = resource_metadata
        self.lock = threading.Lock()
        self.authorizations: list[dict] = []   # the query of every /authorize
        self.token_requests: list[dict] = []   # the form of every /token
        self.registrations: list[dict] = []
        self.revoked: list[dict] = []          # the form of every /revoke
        self.mcp_headers: list[dict] = []      # the headers of every POST /mcp
        self.codes: dict[str, dict] = {}
        self.access: dict[str, float] = {}     # access token -> when it expires
        self.refresh: set[str] = set()         # refresh tokens still good
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                fake.get(self)

            def do_POST(self) -> None:
                fake.post(self)

            def do_DELETE(self) -> None:
                with fake.lock:
                    fake.deletes.append(dict(self.headers))
                fake.send(self, 200, {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_port
        self.base = f"https://{host}" if host else f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def __enter__(self) -> "OAuthFake":
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def restart(self) -> None:
        """As a server that keeps nothing across a restart: every registration, code and token is gone."""
        with self.lock:
            self.clients.clear()
            self.codes.clear()
            self.access.clear()
            self.refresh.clear()

    def refreshes(self) -> int:
        return sum(1 for form in self.token_requests if form.get("grant_type") == "refresh_token")

    # --- requests -----------------------------------------------------------------------------

    def get(self, handler) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        if parts.path == "/.well-known/oauth-protected-resource/mcp" and not self.no_prm:
            return self.send(handler, 200, {"resource": self.url, "authorization_servers": [self.base], **self.prm})
        if parts.path == "/.well-known/oauth-authorization-server" and not self.no_metadata:
            meta = {"issuer": self.base, "authorization_endpoint": f"{self.base}/authorize",
                    "token_endpoint": f"{self.base}/token", "registration_endpoint": f"{self.base}/register",
                    "revocation_endpoint": f"{self.base}/revoke",
                    "token_endpoint_auth_methods_supported": self.methods,
                    "authorization_response_iss_parameter_supported": True, "scopes_supported": ["tools"]}
            if self.pkce:
                meta["code_challenge_methods_supported"] = ["S256"]
            return self.send(handler, 200, {**meta, **self.meta})
        if parts.path == "/authorize":
            query = dict(urllib.parse.parse_qsl(parts.query))
            if self.strict and query.get("client_id") not in self.clients:  # the SDK's own error page
                return self.send(handler, 400, {"error": "invalid_client", "error_description": "Client ID not found"})
            with self.lock:
                self.authorizations.append(query)
                code = secrets.token_urlsafe(16)
                self.codes[code] = query
            back = {"code": code, "state": query.get("state", ""), "iss": self.iss_override or self.base}
            handler.send_response(302)
            handler.send_header("Location", f"{query['redirect_uri']}?{urllib.parse.urlencode(back)}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return None
        if parts.path == "/mcp":  # no stream of server messages here
            return self.send(handler, 405, {"error": "method_not_allowed"})
        return self.send(handler, 404, {"error": "not_found"})

    def post(self, handler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        path = urllib.parse.urlsplit(handler.path).path
        if path == "/register":
            asked = json.loads(body)
            method = asked.get("token_endpoint_auth_method", "client_secret_basic")
            with self.lock:
                self.registrations.append(asked)
                client_id, secret = f"client-{len(self.registrations)}", secrets.token_urlsafe(16)
                self.clients[client_id] = {"secret": secret if method != "none" else None, "method": method}
            answer = {"client_id": client_id, "token_endpoint_auth_method": method}
            return self.send(handler, 201, {**answer, "client_secret": secret} if method != "none" else answer)
        if path == "/revoke":  # RFC 7009: the token is invalid from now on, for the client that proves itself
            form = dict(urllib.parse.parse_qsl(body.decode()))
            why = self.unauthenticated(handler, form)
            if why:
                return self.send(handler, 401, {"error": "invalid_client", "error_description": why})
            with self.lock:
                self.revoked.append(form)
                self.access.pop(form.get("token", ""), None)
                self.refresh.discard(form.get("token", ""))
            return self.send(handler, 200, {})
        if path == "/idp/token":  # the identity provider: RFC 8693 token exchange, ID token -> ID-JAG
            form = dict(urllib.parse.parse_qsl(body.decode()))
            with self.lock:
                self.idp_requests.append((form, handler.headers.get("Authorization")))
                jag = f"jag-{len(self.idp_requests)}"
                if form.get("subject_token") != self.id_token:
                    return self.send(handler, 400, {"error": "invalid_grant", "error_description": "unknown ID token"})
                self.assertions.add(jag)
            return self.send(handler, 200, {"access_token": jag, "token_type": "N_A",
                                            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"})
        if path == "/token":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            with self.lock:
                self.token_auth.append(handler.headers.get("Authorization"))
            why = self.unauthenticated(handler, form)
            if why:
                with self.lock:
                    self.token_requests.append(form)
                return self.send(handler, 401, {"error": "invalid_client", "error_description": why})
            return self.token(handler, form)
        if path == "/mcp":
            return self.mcp(handler, body)
        return self.send(handler, 404, {"error": "not_found"})

    def unauthenticated(self, handler, form: dict) -> str | None:
        """As the Python SDK's token endpoint: why the client is refused (client_id from the form only), or None."""
        if not self.strict:
            return None
        client = self.clients.get(form.get("client_id", ""))
        if "client_id" not in form:
            return "Missing client_id"
        if client is None:
            return "Invalid client_id"
        if client["method"] == "client_secret_post":
            given = form.get("client_secret")
        elif client["method"] == "client_secret_basic":
            basic = handler.headers.get("Authorization") or ""
            given = base64.b64decode(basic[6:]).decode().partition(":")[2] if basic.startswith("Basic ") else None
            given = urllib.parse.unquote(given) if given else None
        else:
            return None
        return None if given == client["secret"] else "Invalid client_secret"

    def token(self, handler, form: dict) -> None:
        with self.lock:
            self.token_requests.append(form)
            if form.get("grant_type") == "authorization_code" and self.refuse_code:
                return self.send(handler, 400, {"error": "invalid_grant", "error_description": "the code was refused"})
            if form.get("grant_type") == "authorization_code":
                asked = self.codes.pop(form.get("code", ""), None)
                challenge = base64.urlsafe_b64encode(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
                if not asked or challenge.rstrip(b"=").decode() != asked.get("code_challenge"):
                    return self.send(handler, 400, {"error": "invalid_grant"})
            elif form.get("grant_type") == "client_credentials" and form.get("client_id") in self.clients:
                pass
            elif form.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                if form.get("assertion") not in self.assertions:
                    return self.send(handler, 400, {"error": "invalid_grant", "error_description": "assertion refused"})
            elif form.get("grant_type") == "refresh_token":
                if form.get("refresh_token") not in self.refresh:
                    return self.send(handler, 400, {"error": "invalid_grant", "error_description": "used or unknown"})
                self.refresh.discard(form["refresh_token"])  # rotated: each works once
            else:
                return self.send(handler, 400, {"error": "unsupported_grant_type"})
            access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
            self.access[access] = time.time() + self.life
            self.refresh.add(refresh)
        self.send(handler, 200, {"access_token": access, "token_type": "Bearer", "expires_in": self.life,
                                 "refresh_token": refresh, "scope": "tools", **self.token_extra})

    def mcp(self, handler, body: bytes) -> None:
        with self.lock:
            self.mcp_headers.append(dict(handler.headers))
        token = (handler.headers.get("Authorization") or "")[7:]
        if token and token not in self.access and self.stale_token_status != 401:
            return self.send(handler, self.stale_token_status, {"error": "server_error"})
        if self.access.get(token, 0) < time.time():
            where = self.resource_metadata or f"{self.base}/.well-known/oauth-protected-resource/mcp"
            challenge = f'Bearer resource_metadata="{where}", scope="tools"'
            return self.send(handler, 401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
        message = json.loads(body)
        if "id" not in message:
            handler.send_response(202)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return None
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "protected", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        else:
            result = {"content": [{"type": "text", "text": str(message["params"]["arguments"].get("text"))}]}
        session = {"Mcp-Session-Id": "session-1"} if self.sessions and method == "initialize" else {}
        self.send(handler, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result}, session)

    @staticmethod
    def send(handler, status: int, data: dict, headers: dict | None = None) -> None:
        raw = json.dumps(data).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(raw)
