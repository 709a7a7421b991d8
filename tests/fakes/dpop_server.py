"""tests/fakes/oauth_server.py's server and authorization server, made to bind tokens (DPoP, RFC 9449)
and to take clients that prove themselves with a key (private_key_jwt, RFC 7523), for tests/auth/test_dpop.py.

Every proof and assertion is verified here (ECDSA, with the curve of beyond/auth/es256.py): a token request
with a valid proof gets a token bound to its key (token_type DPoP); /mcp takes a bound token only as
`DPoP <token>` with a valid proof for it (htm, htu, ath, the key the token is bound to). nonce=True: the
token endpoint and /mcp each want a nonce of theirs; new_nonces=True: a new one at every request (a
hostile server); keys: client_id -> public JWK of a private_key_jwt client. Recorded: proofs (the claims
of every valid proof, by where: "token" or "mcp"), refused (why each refused proof was refused), schemes
(the Authorization scheme of every /mcp request).
"""
import base64
import hashlib
import json
import time

from beyond.auth import es256
from fakes.oauth_server import OAuthFake

AS_NONCE, RS_NONCE = "as-nonce-1", "rs-nonce-1"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verified(jws: str, jwk: dict | None = None) -> tuple[dict, dict] | None:
    """(header, claims) of an ES256 JWS whose signature holds for `jwk` (else its own header's jwk); None if not."""
    try:
        head, body, signature = jws.split(".")
        header, claims = json.loads(b64d(head)), json.loads(b64d(body))
        key = jwk or header["jwk"]
        point = (int.from_bytes(b64d(key["x"]), "big"), int.from_bytes(b64d(key["y"]), "big"), 1)
        raw = b64d(signature)
        r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        e = int.from_bytes(hashlib.sha256(f"{head}.{body}".encode()).digest(), "big")
        w = pow(s, es256.N - 2, es256.N)
        x = es256.affine(es256.add(es256.multiply(e * w % es256.N), es256.multiply(r * w % es256.N, point)))[0]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    return (header, claims) if header.get("alg") == "ES256" and x % es256.N == r else None


class DpopFake(OAuthFake):
    def __init__(self, nonce: bool = False, new_nonces: bool = False, keys: dict | None = None, **options) -> None:
        self.nonce, self.new_nonces, self.keys = nonce, new_nonces, dict(keys or {})
        self.proofs: dict[str, list[dict]] = {"token": [], "mcp": []}
        self.refused: list[str] = []
        self.bound: dict[str, str] = {}  # access token -> the thumbprint of the key it is bound to
        self.schemes: list[str] = []  # the Authorization scheme of every /mcp request that had one
        self.nonces_given = 0
        methods = ["private_key_jwt"] if keys else options.pop("methods", None)
        super().__init__(methods=methods, meta={"dpop_signing_alg_values_supported": ["ES256"]}, **options)

    def _nonce(self, fixed: str) -> str:
        self.nonces_given += 1
        return f"{fixed}-{self.nonces_given}" if self.new_nonces else fixed

    def _proof(self, handler, where: str, url: str, token: str | None = None) -> dict | str:
        """The claims of the request's valid proof, or why it is none."""
        proof = handler.headers.get("DPoP")
        checked = verified(proof) if proof else None
        if checked is None:
            return "no valid proof"
        header, claims = checked
        wanted = {"typ": header.get("typ") == "dpop+jwt", "htm": claims.get("htm") == "POST",
                  "htu": claims.get("htu") == url, "iat": abs(time.time() - claims.get("iat", 0)) < 60,
                  "jti": isinstance(claims.get("jti"), str) and claims["jti"] not in
                  [p["jti"] for p in self.proofs["token"] + self.proofs["mcp"]],
                  "no d": "d" not in header["jwk"]}
        if token is not None:
            wanted["ath"] = claims.get("ath") == es256.b64url(hashlib.sha256(token.encode()).digest())
            wanted["jkt"] = es256.thumbprint(header["jwk"]) == self.bound.get(token)
        wrong = [name for name, ok in wanted.items() if not ok]
        if wrong:
            return f"{where} proof: wrong {', '.join(wrong)}"
        self.proofs[where].append({**claims, "jkt": es256.thumbprint(header["jwk"])})
        return claims

    def post(self, handler) -> None:
        if handler.path.startswith("/token"):
            handler.dpop_claims = self._proof(handler, "token", f"{self.base}/token")
            if isinstance(handler.dpop_claims, str):
                self.refused.append(handler.dpop_claims)
            elif self.nonce and (self.new_nonces or handler.dpop_claims.get("nonce") != AS_NONCE):
                return self.send(handler, 400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": self._nonce(AS_NONCE)})
        return super().post(handler)

    def unauthenticated(self, handler, form: dict) -> str | None:
        """A private_key_jwt client's assertion: signed by its key, for this authorization server, fresh."""
        key = self.keys.get(form.get("client_id"))
        if key is None:
            return super().unauthenticated(handler, form)
        checked = verified(form.get("client_assertion", ""), key)
        claims = checked[1] if checked else {}
        if form.get("client_assertion_type") != ASSERTION_TYPE or not checked:
            return "no valid client assertion"
        if (claims.get("iss"), claims.get("sub"), claims.get("aud")) != (form["client_id"], form["client_id"],
                                                                          self.base):
            return "the assertion names another client or audience"
        return None if claims.get("exp", 0) > time.time() and isinstance(claims.get("jti"), str) else "expired"

    def send(self, handler, status: int, data: dict, headers: dict | None = None) -> None:
        """A token answer to a request with a valid proof is bound to the proof's key."""
        claims = getattr(handler, "dpop_claims", None)
        if status == 200 and "access_token" in data and isinstance(claims, dict):
            self.bound[data["access_token"]] = self.proofs["token"][-1]["jkt"]
            data = {**data, "token_type": "DPoP"}
        OAuthFake.send(handler, status, data, headers)

    def mcp(self, handler, body: bytes) -> None:
        """A bound token only with its proof; then as the plain server (which reads a Bearer header)."""
        scheme, _, token = (handler.headers.get("Authorization") or "").partition(" ")
        if scheme:
            self.schemes.append(scheme)
        if token in self.bound:
            claims = self._proof(handler, "mcp", self.url, token) if scheme == "DPoP" else "not the DPoP scheme"
            if isinstance(claims, str):
                self.refused.append(claims)
                return self.send(handler, 401, {"error": "invalid_token"},
                                 {"WWW-Authenticate": 'DPoP error="invalid_token"'})
            if self.nonce and (self.new_nonces or claims.get("nonce") != RS_NONCE):
                return self.send(handler, 401, {"error": "use_dpop_nonce"}, {
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": self._nonce(RS_NONCE)})
            handler.headers.replace_header("Authorization", f"Bearer {token}")
        return super().mcp(handler, body)
