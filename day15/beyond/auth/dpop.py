"""Beyond the tutorial: DPoP (RFC 9449; MCP's SEP-1932), tokens bound to a key the agent holds, so a
token that leaks is of no use to whoever has it.

Used where the authorization server's metadata offers ES256 in dpop_signing_alg_values_supported,
unless the entry says "oauth": {"dpop": false}. Each login of a server makes a key (es256.py), in
memory only: it is never written, so a token bound to it dies with the agent, and a later run
refreshes or logs in again (provider.py). Every token request carries a proof (htm, htu without query
or fragment, iat, a unique jti); every request to the server one more, with ath (the token's hash),
and the token goes as `Authorization: DPoP <token>`. A use_dpop_nonce challenge, from the token
endpoint or from the server, is answered by one retry with the nonce it gave, which later proofs to
that URL carry (an authorization server and a server may share a host; their nonces are their own);
the same nonce twice is no reason to retry again.
"""
import hashlib
import re
import secrets
import threading
import time
import urllib.parse

from beyond.auth.es256 import Key, b64url

ALGORITHM = "ES256"
# A nonce is NQCHAR (RFC 9449 section 8), of a sane length; anything else is not used.
NONCE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,512}")


def offered(meta: dict, settings: dict) -> bool:
    """Whether a login at the authorization server of `meta` binds its tokens with DPoP."""
    algorithms = meta.get("dpop_signing_alg_values_supported")
    return settings.get("dpop") is not False and isinstance(algorithms, list) and ALGORITHM in algorithms


def htu(url: str) -> str:
    """The URL a proof names: without query and fragment."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


class Dpop:
    """One login's key, and the nonces given to it (by the URL they were given for)."""

    def __init__(self) -> None:
        self.key = Key.generate()
        self.jkt = self.key.thumbprint()  # what a token bound to this key names in cnf.jkt
        self._nonces: dict[str, str] = {}
        self._lock = threading.Lock()  # requests of several threads make proofs

    def proof(self, method: str, url: str, token: str | None = None) -> str:
        """A fresh proof for one request: a new jti every time; with `token`, its hash (ath)."""
        claims = {"jti": secrets.token_urlsafe(18), "htm": method, "htu": htu(url), "iat": int(time.time())}
        with self._lock:
            nonce = self._nonces.get(htu(url))
        if nonce:
            claims["nonce"] = nonce
        if token:
            claims["ath"] = b64url(hashlib.sha256(token.encode("ascii", "replace")).digest())
        return self.key.jws({"typ": "dpop+jwt", "jwk": self.key.jwk()}, claims)

    def nonce_given(self, url: str, nonce: str | None) -> bool:
        """A DPoP-Nonce given for `url`: kept for its next proofs; True when it is new (one retry may carry it)."""
        if not nonce or not NONCE.fullmatch(nonce):
            return False
        with self._lock:
            new = self._nonces.get(htu(url)) != nonce
            self._nonces[htu(url)] = nonce
        return new


def held_elsewhere(tokens: dict, dpop: Dpop | None) -> bool:
    """Whether `tokens` are bound to a key this agent does not hold (an earlier run's): never sent."""
    return tokens.get("jkt") is not None and (dpop is None or dpop.jkt != tokens["jkt"])


def authorization(tokens: dict, dpop: Dpop | None, method: str, url: str) -> dict[str, str]:
    """The headers that present `tokens` to the server: Bearer, or DPoP with a fresh proof; none for
    tokens bound to a key not held."""
    token = tokens["access_token"]
    if tokens.get("jkt") is None:
        return {"Authorization": f"Bearer {token}"}
    if held_elsewhere(tokens, dpop):
        return {}
    return {"Authorization": f"DPoP {token}", "DPoP": dpop.proof(method, url, token)}
