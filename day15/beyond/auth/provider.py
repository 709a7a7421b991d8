"""Beyond the tutorial: a remote server that answers 401 is logged in to with OAuth 2.1, as MCP has it.

Tutorial section 3.1 names "OAuth / Bearer Token" and section 6 leaves it out. The HTTP transport
(wire/http.py) holds one OAuth per server and asks it for the Authorization header of every
request. On a 401 the server's metadata names its authorization server (auth/metadata.py, which
checks both documents; a 2025-03-26 server is its own authorization server). Who the agent is
there is auth/clients.py's. The login itself (auth/login.py) asks for the challenge's scopes, else the entry's, else
scopes_supported (plus offline_access where offered), with `resource` (RFC 8707) in both requests.
Tokens (auth/tokens.py) are refreshed before they expire and on a 401, one refresh at a time for
all callers and agents; a 403 insufficient_scope logs in again with the union of scopes, a few
times at most. A login with the entry's own secrets (a client secret, a grant's assertion or ID token)
is bound to the authorization server (issuer and token endpoint) of the first one: a server that later
names another gets none of them until the user asks (/mcp login). A login without them registers at a
new authorization server anew (SEP-2352). Where the authorization server offers it, tokens are bound to
a key of this login (DPoP, auth/dpop.py). No token is ever put in a URL, a log line or an error.
"""
import os
import threading
import time

from beyond.auth import dpop as proofs
from beyond.auth.clients import Clients
from beyond.auth.errors import AuthError, LoginNeeded
from beyond.auth.metadata import Answered, canonical, challenge, discover, metadata_for
from beyond.auth.outbound import Outbound
from beyond.auth.screen import Screen
from beyond.auth.tokens import TokenStore, lifetime, usable
from beyond.text import clean, shorten

# A token is refreshed this long before it expires: the smaller of 60 s and a tenth of its life.
REFRESH_MARGIN_S = 60.0
# A server with no tokens of ours looks at the logins file at most this often (a 401 looks at once):
# most remote servers need no login, and each of their requests would stat the file otherwise.
NO_TOKENS_LOOK_S = 1.0
# A 403 insufficient_scope is answered with a new login at most this many times per server.
MAX_STEP_UPS = 2
# start(login=FRESH): a login that never tries the stored tokens first (/mcp login), where True
# uses them while they work (start(login=True) for scripts).
FRESH = "fresh"
# The fields of a token answer that may name whom it is for (none is standard; some servers add one).
WHO_FIELDS = ("username", "user", "email", "name", "sub", "user_id")
# A token answer is kept only within this bound (real tokens are a few KB; tokens.py bounds lifetimes),
# so one authorization server's answer cannot grow the logins file past what is read back.
MAX_TOKEN_CHARS = 16 * 1024


class OAuth:
    """The login of one remote server: its tokens, refreshed and replaced as needed."""

    def __init__(self, name: str, url: str, settings: dict, log, store: TokenStore | None = None,
                 allow_insecure: bool = False, screen: Screen | None = None, folder: str | None = None) -> None:
        self.name, self.url, self.settings, self.log = name, url, settings, log
        self.folder = folder  # the project folder of a folder's entry: the files its login reads are in it
        self.screen = screen or Screen()  # where a login meets the user (login.py)
        self.outbound = Outbound(url, allow_insecure)  # where its login may go (auth/outbound.py)
        self.store = store or TokenStore()
        self.clients = Clients(name, settings, self.store, self.outbound, folder, log)  # who we are at its issuer
        self.dpop: proofs.Dpop | None = None  # this login's DPoP key (auth/dpop.py), where the server binds tokens
        # Set by the client that may open a login: True (start(login=True)), FRESH (/mcp login: the
        # stored tokens are not tried until this login is made), False: LoginNeeded.
        self.login_allowed: bool | str = False
        self._fresh = True  # with FRESH: no login made yet
        self.scopes: set[str] = set()  # what the last login asked for; step-ups add to it
        self._step_ups = 0
        # One refresh or login at a time for this server; callers that find one under way wait for it.
        self._renewing = threading.Lock()
        self._cached: dict | None = None  # the tokens as last read, and the file's mtime then
        self._seen: int | None = -1
        self._look_after = 0.0  # with none cached, when to look at the file again

    # --- what the transport asks -------------------------------------------------------------

    def header(self, renew: bool = True, method: str = "POST") -> dict[str, str]:
        """The Authorization header (and a DPoP proof, for a `method` request) with a token that is not
        about to expire (`renew`: refreshed first if it is), or {} before a login."""
        tokens = None if self._fresh_pending() else self._tokens()
        if renew and tokens and tokens.get("expires_at") and time.time() > tokens["expires_at"] - self._margin(tokens):
            tokens = self._renew(tokens.get("access_token"), challenge(None)) or tokens
        return proofs.authorization(tokens, self.dpop, method, self.url) if tokens else {}

    def unauthorized(self, sent: dict[str, str], www_authenticate: str | None) -> None:
        """A 401 for a request that carried `sent` headers: refresh, or log in; LoginNeeded if not allowed."""
        token = sent.get("Authorization", "").partition(" ")[2] or None
        self._look_after = 0.0  # the retry reads the file, whoever put tokens there
        self._renew(token, challenge(www_authenticate), login=True)

    def nonce_retry(self, www_authenticate: str | None, nonce: str | None) -> bool:
        """A 401 use_dpop_nonce with a nonce not seen yet: True, and the request goes once more with it."""
        wanted = challenge(www_authenticate).get("error") == "use_dpop_nonce"
        return bool(wanted and self.dpop and self.dpop.nonce_given(self.url, nonce))

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
            if self._fresh_pending():
                return self._login(found) if login else None
            with self.store.locked() as data:  # read again, and refreshed, under the lock other agents take
                tokens = (data.get("tokens") or {}).get(self.url)
                tokens = tokens if usable(tokens) else None
                if tokens and tokens.get("access_token") != stale and not proofs.held_elsewhere(tokens, self.dpop):
                    return tokens  # renewed meanwhile, by another thread or another agent
                if tokens and isinstance(tokens.get("refresh_token"), str) and isinstance(tokens.get("issuer"), str) \
                        and isinstance(tokens.get("resource"), str) and not self.settings.get("grant"):
                    refreshed = self._refresh(tokens, found if login else {})
                    if refreshed:
                        return refreshed
            if not login and not self.settings.get("grant"):
                return None
            return self._login(found)  # a grant is repeated, its secrets read again

    def _refresh(self, tokens: dict, found: dict) -> dict | None:
        """refresh_token at the issuer that gave it; None if that does not work (a login is then needed)."""
        try:
            if found:  # a 401: the server may have moved to another authorization server
                issuer = discover(self.outbound, self.url, found)[1]["issuer"]
                if issuer != tokens.get("issuer"):
                    return None
            meta = metadata_for(self.outbound, tokens["issuer"], tokens.get("defaults") is True)
            self._bound(meta)
            client = self.clients.of_tokens(tokens, meta)
            answer = self.token_request(meta, client, {"grant_type": "refresh_token",
                                                       "refresh_token": tokens["refresh_token"],
                                                       "resource": tokens["resource"]})
        except AuthError as e:
            self.log(f"could not refresh the login: {e}")
            if isinstance(e, Answered) and e.code == "invalid_client":  # the server forgot the registration
                had = tokens.get("client") if isinstance(tokens.get("client"), dict) else {}
                self.clients.forget(tokens["issuer"], str(had.get("client_id", "")))
            return None
        return self._keep(answer, meta, client, tokens["resource"], tokens.get("scopes", []),
                          tokens.get("refresh_token"))

    def _login(self, found: dict, step_up: bool = False) -> dict:
        """A login: the entry's grant (auth/grants.py), which needs nobody; else, when allowed, the browser's."""
        grant = self.settings.get("grant")
        if not self.login_allowed and not grant:
            raise LoginNeeded(f"needs login: /mcp login {self.name}")
        prm, meta = discover(self.outbound, self.url, found)
        self._bound(meta)
        resource = prm.get("resource") or canonical(self.url)
        scopes = set(found["scope"].split()) if found.get("scope") else set()
        if not scopes:
            scopes = set(self.settings.get("scopes") or prm.get("scopes_supported") or [])
        if step_up:
            scopes |= self.scopes
        if "offline_access" in (meta.get("scopes_supported") or []) and not grant:
            scopes.add("offline_access")  # a grant is repeated, not refreshed
        self.scopes = scopes
        self.dpop = None  # each login binds its tokens to a key of its own
        def keep(answer: dict, client: dict) -> dict:
            return self._keep(answer, meta, client, resource, sorted(scopes))
        if grant:
            from beyond.auth.grants import granted
            tokens = keep(*granted(self, meta, resource, sorted(scopes)))
        else:
            from beyond.auth.login import authorize  # its listener and browser: imported when a login begins
            tokens = authorize(self, meta, resource, sorted(scopes), keep)
        self._fresh = False  # made: from now on the tokens are used
        return tokens

    def _bound(self, meta: dict) -> None:
        """The first login with the entry's secrets binds the server to `meta`'s authorization server;
        another is AuthError unless the user asked for this login (/mcp login), which binds anew."""
        if not (self.settings.get("clientSecret") or self.settings.get("grant")):
            return  # nothing of the entry's to send: a registration is made where the server says (SEP-2352)
        where = {"issuer": meta["issuer"], "token_endpoint": meta.get("token_endpoint")}
        with self.store.locked() as data:
            data["bound"] = data["bound"] if isinstance(data.get("bound"), dict) else {}
            bound = data["bound"].get(self.url)
            new, was = (clean(str(w.get("issuer")), one_line=True) for w in (where, bound or {}))
            if isinstance(bound, dict) and bound != where:
                if self.login_allowed != FRESH:
                    raise AuthError(f"the server now sends its login to {new}, not to {was} where it was first made; "
                                    f"nothing is sent there unless you log in on purpose: /mcp login {self.name}")
                self.log(f"logging in at {new} from now on (was {was})")
            data["bound"][self.url] = where

    def _fresh_pending(self) -> bool:
        return self.login_allowed == FRESH and self._fresh

    def _keep(self, answer: dict, meta: dict, client: dict, resource: str, scopes: list[str],
              old_refresh: str | None = None) -> dict:
        """Store a token answer once it is checked: bounded tokens and scope, a plausible lifetime
        (else unknown); an answer over the bounds fails this login only, and nothing of it is kept."""
        kind = str(answer.get("token_type", "bearer")).lower()
        if not isinstance(answer.get("access_token"), str) or kind not in ("bearer", "dpop" if self.dpop else "bearer"):
            raise AuthError("the authorization server answered without a bearer (or DPoP) access token")
        refresh = answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None
        scope = answer.get("scope") if isinstance(answer.get("scope"), str) else None
        for what, value in (("access_token", answer["access_token"]), ("refresh_token", refresh), ("scope", scope)):
            if value is not None and len(value) > MAX_TOKEN_CHARS:
                raise AuthError(f"the authorization server's {what} is over {MAX_TOKEN_CHARS:,} characters; "
                                     "it is not kept and the login fails")
        life = lifetime(answer.get("expires_in"))
        who = next((answer[k] for k in WHO_FIELDS if isinstance(answer.get(k), str) and answer[k].strip()), None)
        tokens = {"access_token": answer["access_token"], "issuer": meta["issuer"], "resource": resource,
                  "refresh_token": refresh or old_refresh, "scopes": scope.split() if scope is not None else scopes,
                  "expires_at": time.time() + life if life else None, "life": life,
                  "client": self.clients.remembered(client), "defaults": meta.get("defaults") is True,
                  "who": shorten(who, 100) if who else None, "jkt": self.dpop.jkt if kind == "dpop" else None}
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
        said, client = "forgotten", {}
        try:
            meta = metadata_for(self.outbound, tokens["issuer"], tokens.get("defaults") is True)
            client = self.clients.of_tokens(tokens, meta)
            if meta.get("revocation_endpoint"):
                said = self._revoke(meta, client, tokens)
        except AuthError as e:
            said = f"forgotten (revoking failed: {e})"
        with self.store.locked() as data:
            (data.get("tokens") or {}).pop(self.url, None)
        # A registration of ours goes too (the next login registers anew); the entry's own client stays.
        had = tokens.get("client") if isinstance(tokens.get("client"), dict) else client
        if isinstance(had.get("client_id"), str) and had["client_id"] != self.settings.get("clientId"):
            self.clients.forget(tokens["issuer"], had["client_id"])
        return said

    def _revoke(self, meta: dict, client: dict, tokens: dict) -> str:
        """Each token revoked as the client proves itself; what was revoked and what could not be, said."""
        revoked, failed = [], []
        for kind in ("refresh_token", "access_token"):
            if tokens.get(kind):
                try:
                    self.clients.revoke(meta, client, tokens[kind], kind)
                    revoked.append(kind.replace("_", " "))
                except AuthError as e:
                    failed.append(f"the {kind.replace('_', ' ')} could not be ({e})")
        if not failed:
            return "revoked and forgotten"
        done = f"revoked the {' and the '.join(revoked)}; " if revoked else "revoked nothing: "
        return f"{done}{'; '.join(failed)}; forgotten"

    def status(self) -> str | None:
        """Who is logged in, with which scopes, until when (date, time, zone); None without a login."""
        tokens = self._tokens()
        if not tokens:
            return None
        who = f" as {clean(tokens['who'], one_line=True)}" if isinstance(tokens.get("who"), str) else ""
        until = time.strftime("until %Y-%m-%d %H:%M %Z", time.localtime(tokens["expires_at"])) \
            if tokens.get("expires_at") else "with no expiry"
        return f"logged in{who} (scopes: {' '.join(tokens.get('scopes') or []) or 'none'}; {until})"

    def issuer(self) -> str | None:
        """The authorization server of the login held (its issuer), or None without one: part of who the
        server is (an approval kept for a skill of it holds only with this issuer, skills/loading.py)."""
        tokens = self._tokens()
        return tokens.get("issuer") if tokens and isinstance(tokens.get("issuer"), str) else None

    # --- what the login (login.py) asks ---------------------------------------------------------

    def client_for(self, meta: dict, redirect_uri: str) -> dict:
        return self.clients.for_login(meta, redirect_uri)

    def kept_port(self, issuer: str) -> int:
        return self.clients.kept_port(issuer)

    def token_request(self, meta: dict, client: dict, form: dict) -> dict:
        """A token request as `client`, with a DPoP proof where the authorization server binds tokens."""
        bind = proofs.offered(meta, self.settings)
        self.dpop = (self.dpop or proofs.Dpop()) if bind else self.dpop
        return self.clients.token_request(meta, client, form, self.dpop if bind else None)
