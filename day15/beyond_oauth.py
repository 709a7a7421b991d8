"""Beyond the tutorial: a remote server that answers 401 is logged in to with OAuth 2.1, as MCP has it.

Tutorial section 3.1 names "OAuth / Bearer Token" and section 6 leaves it out. The HTTP transport
(beyond_http.py) holds one OAuth per server and asks it for the Authorization header of every
request. On a 401 the server's protected resource metadata (RFC 9728: the challenge's
resource_metadata, else the path-based, else the root well-known URL) names its authorization
server, whose metadata (RFC 8414, then OpenID discovery, in the specification's order) must name
the same issuer and offer PKCE S256. The client is the entry's own ("oauth": {"clientId"}), a
client ID metadata document ("clientMetadataUrl") where the server takes one, or registered
(RFC 7591) once per issuer. The login itself (beyond_login.py) asks for the challenge's scopes, else
the entry's, else scopes_supported (plus offline_access where offered), with `resource` (RFC 8707)
in both requests. Tokens are refreshed before they expire and on a 401, one refresh at a time for
all callers; a 403 insufficient_scope logs in again with the union of scopes, a few times at most.
No token is ever put in a URL, a log line or an error.
"""
import base64
import json
import os
import re
import threading
import time
import urllib.parse

from beyond_base import TransportError, expand
from beyond_login import authorize
from beyond_tokens import TokenStore
from net import Cutoff, connection_for, read_limited, reason_of

# Every exchange with an authorization server or a metadata URL ends by this.
FETCH_TIMEOUT_S = 15.0
MAX_DOCUMENT_BYTES = 1 << 20
# A token is refreshed this long before it expires: the smaller of 60 s and a tenth of its life.
REFRESH_MARGIN_S = 60.0
# A 403 insufficient_scope is answered with a new login at most this many times per server.
MAX_STEP_UPS = 2
# Bearer challenge parameters: name=value or name="quoted value".
CHALLENGE_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')
CLIENT_NAME = "GeekAgent Day 15 (Python)"


class LoginNeeded(TransportError):
    """The server wants a login that may not be started now (nobody asked for one)."""


def challenge(header: str | None) -> dict[str, str]:
    """The parameters of a WWW-Authenticate Bearer challenge (resource_metadata, scope, error), keys lowercased."""
    if not header or not header.strip().lower().startswith("bearer"):
        return {}
    return {m.group(1).lower(): (m.group(2).replace('\\"', '"') if m.group(2) is not None else m.group(3))
            for m in CHALLENGE_PARAM.finditer(header.strip()[6:])}


def canonical(url: str) -> str:
    """A URL as RFC 8707 compares resources: scheme and host lowercased, no default port, fragment or trailing slash."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port and parts.port != {"http": 80, "https": 443}.get(parts.scheme.lower()) else ""
    return urllib.parse.urlunsplit((parts.scheme.lower(), host + port, parts.path.rstrip("/"), parts.query, ""))


class OAuth:
    """The login of one remote server: its tokens, refreshed and replaced as needed."""

    def __init__(self, name: str, url: str, settings: dict, log, store: TokenStore | None = None) -> None:
        self.name, self.url, self.settings, self.log = name, url, settings, log
        self.store = store or TokenStore()
        self.login_allowed = False  # set by the client that may open a login (start(login=True), /mcp login)
        self.scopes: set[str] = set()  # what the last login asked for; step-ups add to it
        self._step_ups = 0
        # One refresh or login at a time for this server; callers that find one under way wait for it.
        self._renewing = threading.Lock()
        self._cached: dict | None = None  # the tokens as last read, and the file's mtime then
        self._seen: int | None = -1

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
        self._renew(token, challenge(www_authenticate), login=True)

    def forbidden(self, www_authenticate: str | None) -> bool:
        """A 403: True once a login with more scopes was made (the request is then sent again)."""
        found = challenge(www_authenticate)
        if found.get("error") != "insufficient_scope":
            return False
        if self._step_ups >= MAX_STEP_UPS:
            raise TransportError(f"the server still refuses with insufficient_scope after {MAX_STEP_UPS} logins "
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
                if isinstance(tokens, dict) and tokens.get("access_token") != stale:
                    return tokens  # renewed meanwhile, by another thread or another agent
                if isinstance(tokens, dict) and tokens.get("refresh_token"):
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
                issuer = self._discover(found)[1]["issuer"]
                if issuer != tokens.get("issuer"):
                    return None
            meta = self._server_metadata(tokens["issuer"])
            client = self._client(meta, None)
            answer = self._token_request(meta, client, {"grant_type": "refresh_token",
                                                        "refresh_token": tokens["refresh_token"],
                                                        "resource": tokens["resource"]})
        except TransportError as e:
            self.log(f"could not refresh the login: {e}")
            return None
        return self._keep(answer, tokens["issuer"], tokens["resource"], tokens.get("scopes", []),
                          tokens.get("refresh_token"))

    def _login(self, found: dict, step_up: bool = False) -> dict:
        if not self.login_allowed:
            raise LoginNeeded(f"needs login: /mcp login {self.name}")
        prm, meta = self._discover(found)
        resource = prm.get("resource") or canonical(self.url)
        scopes = set(found["scope"].split()) if found.get("scope") else set()
        if not scopes:
            scopes = set(self.settings.get("scopes") or prm.get("scopes_supported") or [])
        if step_up:
            scopes |= self.scopes
        if "offline_access" in (meta.get("scopes_supported") or []):
            scopes.add("offline_access")
        self.scopes = scopes
        grant = authorize(self, meta, resource, sorted(scopes))
        return self._keep(grant, meta["issuer"], resource, sorted(scopes))

    def _keep(self, answer: dict, issuer: str, resource: str, scopes: list[str], old_refresh: str | None = None) -> dict:
        if not isinstance(answer.get("access_token"), str) or str(answer.get("token_type", "bearer")).lower() != "bearer":
            raise TransportError("the authorization server answered without a bearer access token")
        life = answer.get("expires_in")
        tokens = {"access_token": answer["access_token"], "issuer": issuer, "resource": resource,
                  "refresh_token": answer.get("refresh_token") or old_refresh,
                  "scopes": answer["scope"].split() if isinstance(answer.get("scope"), str) else scopes,
                  "expires_at": time.time() + life if isinstance(life, (int, float)) and life > 0 else None,
                  "life": life if isinstance(life, (int, float)) else None}
        with self.store.locked() as data:
            data.setdefault("tokens", {})[self.url] = tokens
        return tokens

    def _tokens(self) -> dict | None:
        """This server's tokens, read again only when the file changed (a refresh, another agent's login)."""
        try:
            seen = os.stat(self.store.path).st_mtime_ns
        except OSError:
            seen = None
        if seen != self._seen:
            with self.store.locked() as data:
                tokens = (data.get("tokens") or {}).get(self.url)
            self._cached = tokens if isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str) else None
            self._seen = seen
        return self._cached

    @staticmethod
    def _margin(tokens: dict) -> float:
        life = tokens.get("life")
        return min(REFRESH_MARGIN_S, life / 10) if isinstance(life, (int, float)) and life > 0 else REFRESH_MARGIN_S

    def logout(self) -> str:
        """Revoke the tokens where the server offers revocation (RFC 7009), then forget them."""
        tokens = self._tokens()
        if not tokens:
            return "not logged in"
        said = "forgotten"
        try:
            meta = self._server_metadata(tokens["issuer"])
            if meta.get("revocation_endpoint"):
                client = self._client(meta, None)
                for kind in ("refresh_token", "access_token"):
                    if tokens.get(kind):
                        self._post_form(meta["revocation_endpoint"], client,
                                        {"token": tokens[kind], "token_type_hint": kind}, expect_json=False)
                said = "revoked and forgotten"
        except TransportError as e:
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

    def _discover(self, found: dict) -> tuple[dict, dict]:
        """(protected resource metadata, authorization server metadata), both checked."""
        parts = urllib.parse.urlsplit(self.url)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        urls = [found["resource_metadata"]] if found.get("resource_metadata") else []
        urls += ([f"{origin}/.well-known/oauth-protected-resource{path}"] if path else []) + \
            [f"{origin}/.well-known/oauth-protected-resource"]
        prm = self._first_document(urls, "protected resource metadata")
        resource = prm.get("resource")
        if isinstance(resource, str) and not self._names_us(resource):
            raise TransportError(f"the protected resource metadata names another resource ({resource}), "
                                 f"not {self.url}; no login is tried")
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise TransportError("the protected resource metadata names no authorization server")
        return prm, self._server_metadata(servers[0])

    def _names_us(self, resource: str) -> bool:
        """The metadata's resource is this server's URL, or the origin or a path above it."""
        ours, theirs = canonical(self.url), canonical(resource)
        return ours == theirs or ours.startswith(theirs + "/")

    def _server_metadata(self, issuer: str) -> dict:
        parts = urllib.parse.urlsplit(issuer)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        if path:
            urls = [f"{origin}/.well-known/oauth-authorization-server{path}",
                    f"{origin}/.well-known/openid-configuration{path}", f"{origin}{path}/.well-known/openid-configuration"]
        else:
            urls = [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
        meta = self._first_document(urls, "authorization server metadata")
        if meta.get("issuer") != issuer:
            raise TransportError(f"the authorization server metadata names the issuer {meta.get('issuer')!r}, "
                                 f"not {issuer!r}, where it was found; no login is tried")
        if "S256" not in (meta.get("code_challenge_methods_supported") or []):
            raise TransportError(f"the authorization server {issuer} does not offer PKCE with S256; no login is tried")
        for key in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(meta.get(key), str):
                raise TransportError(f"the authorization server metadata has no {key}")
        return meta

    def _client(self, meta: dict, redirect_uri: str | None) -> dict:
        """Who we are to this issuer: the entry's client, a metadata document, or one registered here (kept)."""
        methods = meta.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if self.settings.get("clientId"):
            secret = expand(self.settings["clientSecret"], "oauth.clientSecret") if self.settings.get("clientSecret") else None
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
            raise TransportError(f"no client is registered at {meta['issuer']}")
        if not meta.get("registration_endpoint"):
            raise TransportError(f"the authorization server {meta['issuer']} takes no registrations; add "
                                 f"\"oauth\": {{\"clientId\": ...}} to the entry of {self.name}")
        method = next((m for m in ("client_secret_basic", "client_secret_post", "none") if m in methods), "none")
        answer = self._post_json(meta["registration_endpoint"], {
            "client_name": CLIENT_NAME, "redirect_uris": [redirect_uri], "token_endpoint_auth_method": method,
            "application_type": "native",  # a program on the user's machine, redirected to 127.0.0.1
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
        if not isinstance(answer.get("client_id"), str):
            raise TransportError("the registration answer has no client_id")
        client = {"client_id": answer["client_id"], "client_secret": answer.get("client_secret"),
                  "method": answer.get("token_endpoint_auth_method") or method, "redirect_uris": [redirect_uri]}
        with self.store.locked() as data:
            data.setdefault("clients", {})[meta["issuer"]] = client
        return client

    # --- requests to the authorization server -------------------------------------------------

    def _token_request(self, meta: dict, client: dict, form: dict) -> dict:
        return self._post_form(meta["token_endpoint"], client, form)

    def _post_form(self, url: str, client: dict, form: dict, expect_json: bool = True) -> dict:
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        form = dict(form)
        if client["method"] == "client_secret_basic" and client.get("client_secret"):
            pair = f"{urllib.parse.quote(client['client_id'], safe='')}:{urllib.parse.quote(client['client_secret'], safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form["client_id"] = client["client_id"]
            if client["method"] == "client_secret_post" and client.get("client_secret"):
                form["client_secret"] = client["client_secret"]
        return self._exchange("POST", url, urllib.parse.urlencode(form).encode(), headers, expect_json)

    def _post_json(self, url: str, body: dict) -> dict:
        return self._exchange("POST", url, json.dumps(body).encode(),
                              {"Content-Type": "application/json", "Accept": "application/json"}, True)

    def _first_document(self, urls: list[str], what: str) -> dict:
        tried = []
        for url in urls:
            try:
                return self._exchange("GET", url, None, {"Accept": "application/json"}, True)
            except TransportError as e:
                tried.append(str(e))
        raise TransportError(f"no {what} found ({'; '.join(tried)})")

    def _exchange(self, method: str, url: str, body: bytes | None, headers: dict, expect_json: bool) -> dict:
        """One request by FETCH_TIMEOUT_S; the JSON object it answered (TransportError otherwise), never following a redirect."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "https" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
            raise TransportError(f"{url} is not https; an authorization server is only spoken to over https")
        try:
            connection, path = connection_for(url, FETCH_TIMEOUT_S)
            with Cutoff(connection, time.monotonic() + FETCH_TIMEOUT_S):
                connection.request(method, path, body, headers)
                response = connection.getresponse()
                raw = read_limited(response, MAX_DOCUMENT_BYTES, f"the answer of {url}")
        except (OSError, ValueError) as e:
            raise TransportError(f"{url}: {reason_of(e)}") from None
        finally:
            connection.close() if "connection" in locals() else None
        try:
            data = json.loads(raw) if raw.strip() else {}
        except ValueError:
            data = None
        if response.status >= 400:
            detail = data.get("error_description") or data.get("error") if isinstance(data, dict) else None
            raise TransportError(f"{url}: HTTP {response.status}" + (f" ({str(detail)[:200]})" if detail else ""))
        if expect_json and not isinstance(data, dict):
            raise TransportError(f"{url}: the answer is not a JSON object")
        return data if isinstance(data, dict) else {}
