"""Beyond the tutorial: a remote server that answers 401 is logged in to with OAuth 2.1, as MCP has it.

Tutorial section 3.1 names "OAuth / Bearer Token" and section 6 leaves it out. The HTTP transport
(wire/http.py) holds one OAuth per server and asks it for the Authorization header of every
request. On a 401 the server's metadata names its authorization server (auth/metadata.py, which
checks both documents). The client is the entry's own ("oauth": {"clientId"}), a client ID metadata
document ("clientMetadataUrl") where the server takes one, or registered (RFC 7591) once per
issuer. The login itself (auth/login.py) asks for the challenge's scopes, else the entry's, else
scopes_supported (plus offline_access where offered), with `resource` (RFC 8707) in both requests.
Tokens (auth/tokens.py) are refreshed before they expire and on a 401, one refresh at a time for
all callers and agents; a 403 insufficient_scope logs in again with the union of scopes, a few
times at most; a server that moved to another authorization server is registered there anew. No
token is ever put in a URL, a log line or an error.
"""
import os
import re
import threading
import time
import urllib.parse

from beyond.auth.errors import AuthError, LoginNeeded
from beyond.auth.metadata import canonical, discover, post_form, post_json, server_metadata
from beyond.auth.outbound import Outbound
from beyond.auth.screen import Screen
from beyond.auth.tokens import TokenStore
from beyond.dirs import UnsetVariable, expand

# A token is refreshed this long before it expires: the smaller of 60 s and a tenth of its life.
REFRESH_MARGIN_S = 60.0
# A server with no tokens of ours looks at the logins file at most this often (a 401 looks at once):
# most remote servers need no login, and each of their requests would stat the file otherwise.
NO_TOKENS_LOOK_S = 1.0
# A 403 insufficient_scope is answered with a new login at most this many times per server.
MAX_STEP_UPS = 2
# Bearer challenge parameters: name=value or name="quoted value".
CHALLENGE_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')
CLIENT_NAME = "GeekAgent Day 15 (Python)"
# A token answer is kept only within these bounds (real tokens are a few KB, lifetimes hours or
# days), so one authorization server's answer cannot grow the logins file past what is read back.
MAX_TOKEN_CHARS = 16 * 1024
MAX_LIFE_S = 10 * 365 * 24 * 3600.0


def lifetime(value: object) -> float | None:
    """A token's expires_in as seconds when it is a plausible one (above 0, at most MAX_LIFE_S), else None: unknown."""
    plausible = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_LIFE_S
    return float(value) if plausible else None


def usable(tokens: object) -> bool:
    """Tokens as read back from the logins file (written by any agent, or by hand) that every use of them can take."""
    if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
        return False
    scopes, expires = tokens.get("scopes", []), tokens.get("expires_at")
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        return False
    return expires is None or (isinstance(expires, (int, float)) and not isinstance(expires, bool)
                               and 0 < expires < time.time() + 2 * MAX_LIFE_S)


def challenge(header: str | None) -> dict[str, str]:
    """The parameters of a WWW-Authenticate Bearer challenge (resource_metadata, scope, error), keys lowercased."""
    if not header or not header.strip().lower().startswith("bearer"):
        return {}
    return {m.group(1).lower(): (m.group(2).replace('\\"', '"') if m.group(2) is not None else m.group(3))
            for m in CHALLENGE_PARAM.finditer(header.strip()[6:])}


class OAuth:
    """The login of one remote server: its tokens, refreshed and replaced as needed."""

    def __init__(self, name: str, url: str, settings: dict, log, store: TokenStore | None = None,
                 allow_insecure: bool = False, screen: Screen | None = None) -> None:
        self.name, self.url, self.settings, self.log = name, url, settings, log
        self.screen = screen or Screen()  # where a login meets the user (login.py)
        self.outbound = Outbound(url, allow_insecure)  # where its login may go (auth/outbound.py)
        self.store = store or TokenStore()
        self.login_allowed = False  # set by the client that may open a login (start(login=True), /mcp login)
        self.scopes: set[str] = set()  # what the last login asked for; step-ups add to it
        self._step_ups = 0
        # One refresh or login at a time for this server; callers that find one under way wait for it.
        self._renewing = threading.Lock()
        self._cached: dict | None = None  # the tokens as last read, and the file's mtime then
        self._seen: int | None = -1
        self._look_after = 0.0  # with none cached, when to look at the file again

    # --- what the transport asks -------------------------------------------------------------

    def header(self) -> dict[str, str]:
        """{"Authorization": "Bearer ..."} with a token that is not about to expire, or {} before a login."""
        tokens = self._tokens()
        if tokens and tokens.get("expires_at") and time.time() > tokens["expires_at"] - self._margin(tokens):
            tokens = self._renew(tokens.get("access_token"), challenge(None)) or tokens
        return {"Authorization": f"Bearer {tokens['access_token']}"} if tokens else {}

    def unauthorized(self, sent: dict[str, str], www_authenticate: str | None) -> None:
        """A 401 for a request that carried `sent` headers: refresh, or log in; LoginNeeded if not allowed."""
        token = sent.get("Authorization", "")[7:] or None
        self._look_after = 0.0  # the retry reads the file, whoever put tokens there
        self._renew(token, challenge(www_authenticate), login=True)

    def forbidden(self, www_authenticate: str | None) -> bool:
        """A 403: True once a login with more scopes was made (the request is then sent again)."""
        found = challenge(www_authenticate)
        if found.get("error") != "insufficient_scope":
            return False
        if self._step_ups >= MAX_STEP_UPS:
            raise AuthError(f"the server still refuses with insufficient_scope after {MAX_STEP_UPS} logins "
                                 f"with more scopes ({found.get('scope', 'none named')})")
        self._step_ups += 1
        self._login(found, step_up=True)
        return True

    # --- renewing ----------------------------------------------------------------------------

    def _renew(self, stale: str | None, found: dict, login: bool = False) -> dict | None:
        """A new token: another caller's (if it already replaced `stale`), a refreshed one, or a login."""
        with self._renewing:
            with self.store.locked() as data:  # read again, and refreshed, under the lock other agents take
                tokens = (data.get("tokens") or {}).get(self.url)
                tokens = tokens if usable(tokens) else None
                if tokens and tokens.get("access_token") != stale:
                    return tokens  # renewed meanwhile, by another thread or another agent
                if tokens and isinstance(tokens.get("refresh_token"), str) and isinstance(tokens.get("issuer"), str) \
                        and isinstance(tokens.get("resource"), str):
                    refreshed = self._refresh(tokens, found if login else {})
                    if refreshed:
                        return refreshed
            if not login:
                return None
            return self._login(found)

    def _refresh(self, tokens: dict, found: dict) -> dict | None:
        """refresh_token at the issuer that gave it; None if that does not work (a login is then needed)."""
        try:
            if found:  # a 401: the server may have moved to another authorization server
                issuer = discover(self.outbound, self.url, found)[1]["issuer"]
                if issuer != tokens.get("issuer"):
                    return None
            meta = server_metadata(self.outbound, tokens["issuer"])
            client = self.client_for(meta, None)
            answer = self.token_request(meta, client, {"grant_type": "refresh_token",
                                                        "refresh_token": tokens["refresh_token"],
                                                        "resource": tokens["resource"]})
        except AuthError as e:
            self.log(f"could not refresh the login: {e}")
            return None
        return self._keep(answer, tokens["issuer"], tokens["resource"], tokens.get("scopes", []),
                          tokens.get("refresh_token"))

    def _login(self, found: dict, step_up: bool = False) -> dict:
        if not self.login_allowed:
            raise LoginNeeded(f"needs login: /mcp login {self.name}", self.name)
        prm, meta = discover(self.outbound, self.url, found)
        resource = prm.get("resource") or canonical(self.url)
        scopes = set(found["scope"].split()) if found.get("scope") else set()
        if not scopes:
            scopes = set(self.settings.get("scopes") or prm.get("scopes_supported") or [])
        if step_up:
            scopes |= self.scopes
        if "offline_access" in (meta.get("scopes_supported") or []):
            scopes.add("offline_access")
        self.scopes = scopes
        from beyond.auth.login import authorize  # its listener and browser: imported when a login begins
        grant = authorize(self, meta, resource, sorted(scopes))
        return self._keep(grant, meta["issuer"], resource, sorted(scopes))

    def _keep(self, answer: dict, issuer: str, resource: str, scopes: list[str], old_refresh: str | None = None) -> dict:
        """Store a token answer once it is checked: bounded tokens and scope, a plausible lifetime
        (else unknown); an answer over the bounds fails this login only, and nothing of it is kept."""
        if not isinstance(answer.get("access_token"), str) or str(answer.get("token_type", "bearer")).lower() != "bearer":
            raise AuthError("the authorization server answered without a bearer access token")
        refresh = answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None
        scope = answer.get("scope") if isinstance(answer.get("scope"), str) else None
        for what, value in (("access_token", answer["access_token"]), ("refresh_token", refresh), ("scope", scope)):
            if value is not None and len(value) > MAX_TOKEN_CHARS:
                raise AuthError(f"the authorization server's {what} is over {MAX_TOKEN_CHARS:,} characters; "
                                     "it is not kept and the login fails")
        life = lifetime(answer.get("expires_in"))
        tokens = {"access_token": answer["access_token"], "issuer": issuer, "resource": resource,
                  "refresh_token": refresh or old_refresh, "scopes": scope.split() if scope is not None else scopes,
                  "expires_at": time.time() + life if life else None, "life": life}
        with self.store.locked() as data:
            data.setdefault("tokens", {})[self.url] = tokens
        self._look_after = 0.0  # the next request reads them
        return tokens

    def _tokens(self) -> dict | None:
        """This server's tokens, read again only when the file changed (a refresh, another agent's login)."""
        now = time.monotonic()
        if self._cached is None and now < self._look_after:
            return None
        try:
            seen = os.stat(self.store.path).st_mtime_ns
        except OSError:
            seen = None
        if seen != self._seen:
            with self.store.locked() as data:
                tokens = (data.get("tokens") or {}).get(self.url)
            self._cached = tokens if usable(tokens) else None
            self._seen = seen
        if self._cached is None:
            self._look_after = now + NO_TOKENS_LOOK_S
        return self._cached

    @staticmethod
    def _margin(tokens: dict) -> float:
        life = lifetime(tokens.get("life"))
        return min(REFRESH_MARGIN_S, life / 10) if life else REFRESH_MARGIN_S

    def logout(self) -> str:
        """Revoke the tokens where the server offers revocation (RFC 7009), then forget them."""
        tokens = self._tokens()
        if not tokens:
            return "not logged in"
        said = "forgotten"
        try:
            meta = server_metadata(self.outbound, tokens["issuer"])
            if meta.get("revocation_endpoint"):
                client = self.client_for(meta, None)
                for kind in ("refresh_token", "access_token"):
                    if tokens.get(kind):
                        post_form(self.outbound, "revocation_endpoint", meta["revocation_endpoint"], client,
                                  {"token": tokens[kind], "token_type_hint": kind}, expect_json=False)
                said = "revoked and forgotten"
        except AuthError as e:
            said = f"forgotten (revoking failed: {e})"
        with self.store.locked() as data:
            (data.get("tokens") or {}).pop(self.url, None)
        return said

    def status(self) -> str:
        tokens = self._tokens()
        if not tokens:
            return "not logged in"
        until = time.strftime("%H:%M", time.localtime(tokens["expires_at"])) if tokens.get("expires_at") else "no expiry"
        return f"logged in (until {until}; scopes: {' '.join(tokens.get('scopes') or []) or 'none'})"

    # --- discovery and registration ---------------------------------------------------------

    def client_for(self, meta: dict, redirect_uri: str | None) -> dict:
        """Who we are to this issuer: the entry's client, a metadata document, or one registered here (kept)."""
        methods = meta.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if self.settings.get("clientId"):
            try:
                secret = expand(self.settings["clientSecret"], "oauth.clientSecret") if self.settings.get("clientSecret") else None
            except UnsetVariable as e:
                raise AuthError(str(e)) from None
            method = "none" if not secret else next((m for m in ("client_secret_basic", "client_secret_post")
                                                      if m in methods), "client_secret_basic")
            return {"client_id": self.settings["clientId"], "client_secret": secret, "method": method}
        if self.settings.get("clientMetadataUrl") and meta.get("client_id_metadata_document_supported"):
            return {"client_id": self.settings["clientMetadataUrl"], "method": "none"}
        with self.store.locked() as data:
            kept = (data.get("clients") or {}).get(meta["issuer"])
        if isinstance(kept, dict) and (redirect_uri is None or redirect_uri in kept.get("redirect_uris", [])):
            return kept
        if redirect_uri is None:
            raise AuthError(f"no client is registered at {meta['issuer']}")
        if not meta.get("registration_endpoint"):
            raise AuthError(f"the authorization server {meta['issuer']} takes no registrations; add "
                                 f"\"oauth\": {{\"clientId\": ...}} to the entry of {self.name}")
        method = next((m for m in ("client_secret_basic", "client_secret_post", "none") if m in methods), "none")
        answer = post_json(self.outbound, "registration_endpoint", meta["registration_endpoint"], {
            "client_name": CLIENT_NAME, "redirect_uris": [redirect_uri], "token_endpoint_auth_method": method,
            "application_type": "native",  # a program on the user's machine, redirected to 127.0.0.1
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
        if not isinstance(answer.get("client_id"), str):
            raise AuthError("the registration answer has no client_id")
        secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
        if len(answer["client_id"]) > MAX_TOKEN_CHARS or len(secret or "") > MAX_TOKEN_CHARS:
            raise AuthError(f"the registration answer's client_id or client_secret is over {MAX_TOKEN_CHARS:,} "
                                 "characters; it is not kept")
        named = answer.get("token_endpoint_auth_method")
        client = {"client_id": answer["client_id"], "client_secret": secret,
                  "method": named if named in ("client_secret_basic", "client_secret_post", "none") else method,
                  "redirect_uris": [redirect_uri]}
        with self.store.locked() as data:
            data.setdefault("clients", {})[meta["issuer"]] = client
        return client

    def kept_port(self, issuer: str) -> int:
        """The callback port of the client registered at `issuer` before, or 0 (any)."""
        with self.store.locked() as data:
            kept = (data.get("clients") or {}).get(issuer)
        uris = kept.get("redirect_uris") if isinstance(kept, dict) else None
        port = urllib.parse.urlsplit(uris[0]).port if isinstance(uris, list) and uris and isinstance(uris[0], str) else None
        return port or 0

    # --- requests to the authorization server -------------------------------------------------

    def token_request(self, meta: dict, client: dict, form: dict) -> dict:
        return post_form(self.outbound, "token_endpoint", meta["token_endpoint"], client, form)
