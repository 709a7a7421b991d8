"""Beyond the tutorial: who the agent is to an authorization server, and how it proves it there.

The client is the entry's own ("oauth": {"clientId", "clientSecret"}), a client ID metadata
document ("clientMetadataUrl") where the server takes one, or one registered (RFC 7591) once per
issuer and kept in the logins file. How it proves itself at the token endpoint: the entry's
"tokenEndpointAuthMethod", else what the registration answer names, else the first of
TOKEN_METHODS the server offers. An entry's client with a secret and no method named that is
refused with 401 invalid_client tries the other method once; the one that worked goes with the
login's tokens. A kept registration is checked before a browser is opened for it: the server may
have forgotten it (a restart, an expiry), and then it shows its error on its own page and never
redirects back. Every login's tokens carry the client that got them, so a refresh or a logout
needs nothing else, and a registration forgotten here leaves other servers' logins alone.
"""
import os
import secrets
import time
import urllib.parse

from beyond.auth import es256
from beyond.auth.errors import AuthError
from beyond.auth.metadata import Answered, post_form, post_json
from beyond.dirs import FolderError, UnsetVariable, expand, read_inside

# How a client proves itself at the token endpoint (RFC 7591's names), in the order one is picked
# from what the server offers; "none": a public client, which has no secret.
TOKEN_METHODS = ("client_secret_basic", "client_secret_post", "none")
SECRET_METHODS = TOKEN_METHODS[:2]
# "privateKeyFile": the entry's client proves itself with a signed assertion (RFC 7523 section 2.2).
KEY_METHOD = "private_key_jwt"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFE_S = 60
MAX_KEY_BYTES = 16 * 1024
CLIENT_NAME = "GeekAgent Day 15 (Python)"
# Registration answers are kept only within this bound (real ones are a few hundred characters).
MAX_CLIENT_CHARS = 16 * 1024


class Clients:
    """The clients of one server's login (`name`, its entry's "oauth" `settings`), registered ones kept
    in `store` (tokens.py's TokenStore); every request goes through `outbound` (outbound.py)."""

    def __init__(self, name: str, settings: dict, store, outbound, folder: str | None = None, log=print) -> None:
        self.name, self.settings, self.store, self.outbound = name, settings, store, outbound
        self.folder, self.log = folder, log  # where a folder's entry may read its key; the server's log

    def for_login(self, meta: dict, redirect_uri: str) -> dict:
        """The client a login at this issuer uses: the entry's, a metadata document, or a kept
        registration the server still knows (checked), else a new registration (kept)."""
        own = self.configured(meta)
        if own:
            return own
        if self.settings.get("clientMetadataUrl") and meta.get("client_id_metadata_document_supported"):
            return {"client_id": self.settings["clientMetadataUrl"], "method": "none"}
        kept = self.kept(meta["issuer"])
        if kept and redirect_uri in kept.get("redirect_uris", []):
            if self._known(meta, kept):
                return kept
            self.forget(meta["issuer"], kept["client_id"])
        return self._register(meta, redirect_uri)

    def of_tokens(self, tokens: dict, meta: dict) -> dict:
        """The client that got `tokens` (for their refresh or revocation): the entry's own, with its
        secret read again; else the registration they were got with."""
        own = self.configured(meta)
        had = tokens.get("client") if isinstance(tokens.get("client"), dict) else None
        if own:
            if had and had.get("client_id") == own["client_id"] and had.get("method") in TOKEN_METHODS \
                    and not self.settings.get("tokenEndpointAuthMethod"):
                own["method"] = had["method"]  # the one that worked at the login
            return own
        if had and isinstance(had.get("client_id"), str) and had.get("method") in TOKEN_METHODS:
            return had
        kept = self.kept(meta["issuer"])
        if not kept:
            raise AuthError(f"no client is registered at {meta['issuer']}")
        return kept

    def remembered(self, client: dict) -> dict:
        """What of `client` goes with its login's tokens: an entry's own without its secret (the config
        holds it), a registration whole (another server's logout may forget the kept one)."""
        if client["client_id"] == self.settings.get("clientId"):
            return {"client_id": client["client_id"], "method": client["method"]}
        return {k: v for k, v in client.items() if k not in ("may_switch", "key")}

    def configured(self, meta: dict) -> dict | None:
        """The entry's own client ("clientId"), with its secret expanded and its method chosen; or None."""
        if not self.settings.get("clientId"):
            return None
        if self.settings.get("privateKeyFile"):
            return {"client_id": self.settings["clientId"], "method": KEY_METHOD, "key": self._key(),
                    "may_switch": False}
        try:
            secret = expand(self.settings["clientSecret"], "oauth.clientSecret") \
                if self.settings.get("clientSecret") else None
        except UnsetVariable as e:
            raise AuthError(str(e)) from None
        method = self.settings.get("tokenEndpointAuthMethod") or (
            next((m for m in SECRET_METHODS if m in offered(meta)), SECRET_METHODS[0]) if secret else "none")
        return {"client_id": self.settings["clientId"], "client_secret": secret, "method": method,
                "may_switch": bool(secret) and not self.settings.get("tokenEndpointAuthMethod")}

    def _key(self):
        """The entry's private key, read now as every file an entry names is (a folder's: inside it, no link
        out, no device); one that group or others may read is used, with a warning."""
        try:
            path = expand(self.settings["privateKeyFile"], "oauth.privateKeyFile")
            raw = read_inside(path, MAX_KEY_BYTES, root=self.folder)
            if raw is None:
                raise AuthError(f"oauth.privateKeyFile: {path} does not exist")
            key = es256.read_pem(raw.decode("ascii", "replace"))
        except (UnsetVariable, FolderError, es256.KeyError_) as e:
            raise AuthError(f"oauth.privateKeyFile: {e}") from None
        where = os.path.join(self.folder or ".", os.path.expanduser(path) if self.folder is None else path)
        if os.stat(where).st_mode & 0o077:  # as read_inside found it
            self.log(f"warning: oauth.privateKeyFile {path} can be read by others than you (chmod 600 it)")
        return key

    def kept(self, issuer: str) -> dict | None:
        with self.store.locked() as data:
            kept = (data.get("clients") or {}).get(issuer)
        usable = isinstance(kept, dict) and isinstance(kept.get("client_id"), str) \
            and kept.get("method") in TOKEN_METHODS
        return kept if usable else None

    def forget(self, issuer: str, client_id: str) -> None:
        """Forget the registration at `issuer` if it is still `client_id` (the entry's own stays in the config)."""
        with self.store.locked() as data:
            clients = data.get("clients") or {}
            if isinstance(clients.get(issuer), dict) and clients[issuer].get("client_id") == client_id:
                del clients[issuer]

    def kept_port(self, issuer: str) -> int:
        """The callback port of the client registered at `issuer` before, or 0 (any)."""
        kept = self.kept(issuer)
        uris = kept.get("redirect_uris") if kept else None
        first = uris[0] if isinstance(uris, list) and uris and isinstance(uris[0], str) else None
        port = urllib.parse.urlsplit(first).port if first else None
        return port or 0

    def token_request(self, meta: dict, client: dict, form: dict, dpop=None) -> dict:
        """The token endpoint's answer to `form` sent as `client` (with a DPoP proof when `dpop`, dpop.py,
        is given; a use_dpop_nonce answer is tried once more with its nonce); an entry's client with a
        secret and no method named, refused as invalid_client, tries the other method once
        (client["method"] is then it)."""
        try:
            return self._post_token(meta, client, form, dpop)
        except Answered as e:
            other = next((m for m in SECRET_METHODS if m != client["method"]), None)
            if not (client.get("may_switch") and e.code == "invalid_client" and e.status == 401
                    and other in offered(meta, SECRET_METHODS)):
                raise
            answer = self._post_token(meta, {**client, "method": other}, form, dpop)
            client["method"], client["may_switch"] = other, False
            return answer

    def _post_token(self, meta: dict, client: dict, form: dict, dpop) -> dict:
        endpoint = meta["token_endpoint"]
        for attempt in (1, 2):
            extra = {"DPoP": dpop.proof("POST", endpoint)} if dpop else {}
            if client["method"] == KEY_METHOD:  # a new assertion every time: each has its own jti
                form = {**form, "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion(client, meta)}
            try:
                return post_form(self.outbound, "token_endpoint", endpoint, client, form, extra=extra)
            except Answered as e:
                if attempt == 2 or not (dpop and e.code == "use_dpop_nonce" and dpop.nonce_given(endpoint, e.nonce)):
                    raise
        raise AssertionError("unreachable")

    def revoke(self, meta: dict, client: dict, token: str, kind: str) -> None:
        """Revoke one token (RFC 7009) as `client` proves itself at the token endpoint (a secret, or a new
        assertion for private_key_jwt); AuthError when the server does not take it."""
        form = {"token": token, "token_type_hint": kind}
        if client["method"] == KEY_METHOD:
            form |= {"client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion(client, meta)}
        post_form(self.outbound, "revocation_endpoint", meta["revocation_endpoint"], client, form, expect_json=False)

    # --- registering ----------------------------------------------------------------------------

    def _known(self, meta: dict, client: dict) -> bool:
        """Whether the authorization server still knows a kept registration: a refresh token that cannot
        be valid is sent (servers authenticate the client first; no authorization code is spent, no PKCE
        is involved); invalid_client means it does not, any other answer (invalid_grant) that it does."""
        try:
            post_form(self.outbound, "token_endpoint", meta["token_endpoint"], client, {
                "grant_type": "refresh_token", "refresh_token": "registration-check-" + secrets.token_urlsafe(16)})
        except Answered as e:
            return e.code != "invalid_client"
        return True

    def _register(self, meta: dict, redirect_uri: str) -> dict:
        if not meta.get("registration_endpoint"):
            raise AuthError(f"the authorization server {meta['issuer']} takes no registrations; add "
                            f"\"oauth\": {{\"clientId\": ...}} to the entry of {self.name}")
        method = next((m for m in TOKEN_METHODS if m in offered(meta)), "none")
        answer = post_json(self.outbound, "registration_endpoint", meta["registration_endpoint"], {
            "client_name": CLIENT_NAME, "redirect_uris": [redirect_uri], "token_endpoint_auth_method": method,
            "application_type": "native",  # a program on the user's machine, redirected to 127.0.0.1
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
        if not isinstance(answer.get("client_id"), str):
            raise AuthError("the registration answer has no client_id")
        secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
        if len(answer["client_id"]) > MAX_CLIENT_CHARS or len(secret or "") > MAX_CLIENT_CHARS:
            raise AuthError(f"the registration answer's client_id or client_secret is over {MAX_CLIENT_CHARS:,} "
                            "characters; it is not kept")
        named = answer.get("token_endpoint_auth_method")
        client = {"client_id": answer["client_id"], "client_secret": secret,
                  "method": named if named in TOKEN_METHODS else method, "redirect_uris": [redirect_uri]}
        with self.store.locked() as data:
            data.setdefault("clients", {})[meta["issuer"]] = client
        return client


def assertion(client: dict, meta: dict) -> str:
    """A client assertion for the token endpoint (private_key_jwt): the client is iss and sub, the
    authorization server's issuer the audience, a minute of life, a unique jti."""
    now = int(time.time())
    return client["key"].jws({"typ": "JWT"}, {"iss": client["client_id"], "sub": client["client_id"],
                                              "aud": meta["issuer"], "iat": now, "exp": now + ASSERTION_LIFE_S,
                                              "jti": secrets.token_urlsafe(18)})


def offered(meta: dict, unlisted: tuple[str, ...] = ("client_secret_basic",)) -> list[str]:
    """The token endpoint methods the server offers; `unlisted` where its metadata names none (RFC
    8414's default is client_secret_basic)."""
    methods = meta.get("token_endpoint_auth_methods_supported")
    return [m for m in methods if isinstance(m, str)] if isinstance(methods, list) and methods else list(unlisted)
