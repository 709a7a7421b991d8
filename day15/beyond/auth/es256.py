"""Beyond the tutorial: ES256 (ECDSA over P-256 with SHA-256) in the standard library, which has none.

It signs and never verifies: DPoP proofs (auth/dpop.py) and private_key_jwt client assertions
(auth/clients.py). Keys are made here (secrets) or read from an unencrypted PEM file (PKCS#8 or
SEC1; a strict DER walk, anything else refused with a line saying what it is).

Side channels, as far as Python allows (its integers take time by their size, and no branch-free
code is guaranteed):
- k·G and d·G are a Montgomery ladder of a fixed 256 steps over a scalar first made exactly 257 bits
  long (k + n or k + 2n, chosen by arithmetic), with the complete addition formulas of Renes, Costello
  and Batina (one formula for every pair of points, the point at infinity included) and a swap done
  with masks, not a branch: the steps do not depend on the key's bits or length.
- k⁻¹ is blinded: (k·b)⁻¹·b with a fresh random b, by Fermat's little theorem (a fixed exponent).
- k is RFC 6979's deterministic nonce, hedged with 32 fresh random bytes as its section 3.6 allows:
  a broken random source cannot repeat k, and a repeated message does not give the same k.
"""
import base64
import hashlib
import hmac
import json
import re
import secrets

# The curve P-256 (FIPS 186-4, SEC 2: secp256r1): y² = x³ - 3x + b over the integers mod P.
P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
A = P - 3
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5, 1)
INFINITY = (0, 1, 0)
B3 = 3 * B % P
# DER object identifiers: id-ecPublicKey and prime256v1 (P-256).
EC_PUBLIC_KEY = bytes.fromhex("2a8648ce3d0201")
PRIME256V1 = bytes.fromhex("2a8648ce3d030107")
OTHER_CURVE = "the key is on another curve than P-256 (prime256v1), which ES256 needs"


class KeyError_(ValueError):
    """A key that cannot be used: the message says what it is and what to do."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def add(p1: tuple, p2: tuple) -> tuple:
    """p1 + p2 in projective coordinates (X:Y:Z), by the complete formulas: no case is special."""
    x1, y1, z1 = p1
    x2, y2, z2 = p2
    xx, yy, zz = x1 * x2 % P, y1 * y2 % P, z1 * z2 % P
    xy = (x1 * y2 + x2 * y1) % P
    yz = (y1 * z2 + y2 * z1) % P
    xz = (x1 * z2 + x2 * z1) % P
    u = (A * xx + B3 * xz - A * A * zz) % P        # a·XX + 3b·XZ - a²·ZZ
    v = (yy - A * xz - B3 * zz) % P                # YY - a·XZ - 3b·ZZ
    w = (yy + A * xz + B3 * zz) % P                # YY + a·XZ + 3b·ZZ
    t = (3 * xx + A * zz) % P                      # 3·XX + a·ZZ
    return (xy * v - yz * u) % P, (t * u + w * v) % P, (yz * w + xy * t) % P


def _swap(bit: int, p1: tuple, p2: tuple) -> tuple[tuple, tuple]:
    """(p2, p1) when bit is 1, else (p1, p2), with masks: the same operations either way."""
    mask = -bit  # all ones or all zeros
    pairs = [(a ^ (mask & (a ^ b)), b ^ (mask & (a ^ b))) for a, b in zip(p1, p2)]
    return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)


def multiply(k: int, point: tuple = G) -> tuple:
    """k·point, 1 <= k < N: a Montgomery ladder over k made exactly 257 bits long, 256 steps always."""
    k1, k2 = k + N, k + 2 * N
    top = k1 >> 256  # 1 when k + N has 257 bits already
    scalar = k2 ^ (-top & (k1 ^ k2))  # k + N if top, else k + 2N: 2^256 <= scalar < 2^257, ≡ k (mod N)
    r0, r1 = point, add(point, point)  # the top bit, 1
    for i in range(255, -1, -1):
        bit = (scalar >> i) & 1
        r0, r1 = _swap(bit, r0, r1)
        r0, r1 = add(r0, r0), add(r0, r1)
        r0, r1 = _swap(bit, r0, r1)
    return r0


def affine(point: tuple) -> tuple[int, int]:
    x, y, z = point
    inverse = pow(z, P - 2, P)
    return x * inverse % P, y * inverse % P


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def nonce(d: int, digest: bytes, extra: bytes = b"") -> int:
    """RFC 6979 section 3.2's k for private key d and message digest, with `extra` (section 3.6) mixed in."""
    x, h = d.to_bytes(32, "big"), (int.from_bytes(digest, "big") % N).to_bytes(32, "big")
    key, v = b"\x00" * 32, b"\x01" * 32
    key = _hmac(key, v + b"\x00" + x + h + extra)
    v = _hmac(key, v)
    key = _hmac(key, v + b"\x01" + x + h + extra)
    v = _hmac(key, v)
    while True:
        v = _hmac(key, v)
        k = int.from_bytes(v, "big")
        if 1 <= k < N:
            return k
        key = _hmac(key, v + b"\x00")
        v = _hmac(key, v)


class Key:
    """A P-256 private key: sign() makes a JWS signature (r || s, 64 bytes); jwk() and thumbprint() are
    its public part."""

    def __init__(self, d: int) -> None:
        if not 1 <= d < N:
            raise KeyError_("the private key is out of range for P-256")
        self._d = d
        self.x, self.y = affine(multiply(d))

    @classmethod
    def generate(cls) -> "Key":
        return cls(secrets.randbelow(N - 1) + 1)

    def sign(self, message: bytes, hedge: bytes | None = None) -> bytes:
        """ECDSA with SHA-256; `hedge` (default: 32 random bytes; b"" gives RFC 6979's exact k) goes into the nonce."""
        digest = hashlib.sha256(message).digest()
        e = int.from_bytes(digest, "big")
        while True:
            k = nonce(self._d, digest, secrets.token_bytes(32) if hedge is None else hedge)
            r = affine(multiply(k))[0] % N
            blind = secrets.randbelow(N - 1) + 1
            s = blind * pow(k * blind % N, N - 2, N) * (e + r * self._d) % N
            if r and s:
                return r.to_bytes(32, "big") + s.to_bytes(32, "big")
            hedge = None  # r or s of 0 (probability 2^-256): another k

    def jwk(self) -> dict:
        return {"crv": "P-256", "kty": "EC", "x": b64url(self.x.to_bytes(32, "big")),
                "y": b64url(self.y.to_bytes(32, "big"))}

    def thumbprint(self) -> str:
        """RFC 7638's JWK thumbprint (SHA-256), as DPoP's jkt."""
        return thumbprint(self.jwk())

    def jws(self, header: dict, claims: dict) -> str:
        """A compact JWS (header.claims.signature) with alg ES256."""
        signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode())
                                 for part in ({"alg": "ES256", **header}, claims))
        return f"{signing_input}.{b64url(self.sign(signing_input.encode()))}"


def thumbprint(jwk: dict) -> str:
    """RFC 7638: SHA-256 of the required members, in lexical order, without whitespace."""
    members = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    return b64url(hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest())


# --- reading a key file ----------------------------------------------------------------------

PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----\s*(.*?)\s*-----END \1-----", re.S)


def read_pem(text: str) -> Key:
    """The P-256 key of an unencrypted PKCS#8 ("PRIVATE KEY") or SEC1 ("EC PRIVATE KEY") PEM text."""
    blocks = {label: body for label, body in PEM_BLOCK.findall(text)}
    if "ENCRYPTED PRIVATE KEY" in blocks or "Proc-Type: 4,ENCRYPTED" in text:
        raise KeyError_("the key is encrypted; write it unencrypted (openssl pkcs8 -nocrypt) where only you "
                        "can read it")
    for label, parse in (("PRIVATE KEY", _pkcs8), ("EC PRIVATE KEY", _sec1)):
        if label in blocks:
            try:
                der = base64.b64decode("".join(blocks[label].split()), validate=True)
            except ValueError:
                raise KeyError_(f"the {label} block is not valid base64") from None
            return parse(der)
    found = ", ".join(blocks) or "no PEM block"
    raise KeyError_(f"no private key found ({found}); an unencrypted P-256 key in PEM is needed (BEGIN PRIVATE KEY)")


def _tlv(der: bytes, at: int, tag: int) -> tuple[bytes, int]:
    """(the value of the DER element at `at`, which must have `tag`, and where the next one starts)."""
    if at + 2 > len(der) or der[at] != tag:
        raise KeyError_("the key is not the DER structure of a P-256 private key")
    length, at = der[at + 1], at + 2
    if length & 0x80:
        count = length & 0x7F
        if count not in (1, 2) or at + count > len(der):
            raise KeyError_("the key's DER has a length it cannot have")
        length, at = int.from_bytes(der[at:at + count], "big"), at + count
    if at + length > len(der):
        raise KeyError_("the key's DER ends early")
    return der[at:at + length], at + length


def _sequence(der: bytes) -> bytes:
    """The contents of the SEQUENCE that is the whole of `der`."""
    body, end = _tlv(der, 0, 0x30)
    if end != len(der):
        raise KeyError_("the key has bytes after its DER structure")
    return body


def _pkcs8(der: bytes) -> Key:
    """PrivateKeyInfo: version, the algorithm (id-ecPublicKey on prime256v1), the SEC1 key in an OCTET STRING."""
    info = _sequence(der)
    version, at = _tlv(info, 0, 0x02)
    algorithm, at = _tlv(info, at, 0x30)
    if version not in (b"\x00", b"\x01"):
        raise KeyError_("the PKCS#8 version is not one this reads")
    kind, after = _tlv(algorithm, 0, 0x06)
    if kind != EC_PUBLIC_KEY:
        raise KeyError_("the key is not an elliptic-curve key; ES256 needs a P-256 key")
    curve, _ = _tlv(algorithm, after, 0x06) if after < len(algorithm) else (b"", 0)
    if curve != PRIME256V1:
        raise KeyError_(OTHER_CURVE)
    inner, _ = _tlv(info, at, 0x04)
    return _sec1(inner)


def _sec1(der: bytes) -> Key:
    """ECPrivateKey: version 1, the 32-byte secret, then optionally [0] the curve and [1] the public key."""
    body = _sequence(der)
    version, at = _tlv(body, 0, 0x02)
    secret, at = _tlv(body, at, 0x04)
    if version != b"\x01" or len(secret) != 32:
        raise KeyError_("the key is not a P-256 private key (SEC1 version 1, 32 bytes)")
    public = None
    if at < len(body) and body[at] == 0xA0:
        params, at = _tlv(body, at, 0xA0)
        if _tlv(params, 0, 0x06)[0] != PRIME256V1:
            raise KeyError_(OTHER_CURVE)
    if at < len(body) and body[at] == 0xA1:
        public = _tlv(_tlv(body, at, 0xA1)[0], 0, 0x03)[0]
    key = Key(int.from_bytes(secret, "big"))
    if public is not None and public != b"\x00\x04" + key.x.to_bytes(32, "big") + key.y.to_bytes(32, "big"):
        raise KeyError_("the key's public part does not belong to its private part")
    return key
