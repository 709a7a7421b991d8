"""ES256 in the standard library (beyond/auth/es256.py): RFC 6979's vectors, RFC 9449's thumbprint, keys
and signatures checked by OpenSSL where it is installed, and the key files it refuses."""
import hashlib
import shutil
import subprocess
import time

import pytest

from beyond.auth import es256

# RFC 6979, appendix A.2.5: the P-256 key, its public point, and SHA-256 signatures of "sample" and "test".
RFC6979_KEY = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
RFC6979_PUBLIC = (0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6,
                  0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299)
RFC6979_SIGNATURES = {
    b"sample": ("A6E3C57DD01ABE90086538398355DD4C3B17AA873382B0F24D6129493D8AAD60",
                "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
                "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"),
    b"test": ("D16B6AE827F17175E040871A1C7EC3500192C4C92677336EC2537ACAEE0008E0",
              "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367"
              "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083")}
# RFC 9449, figures 2 and 9: the example proof's key and its published thumbprint.
RFC9449_JWK = {"kty": "EC", "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
               "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA", "crv": "P-256"}
RFC9449_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
OPENSSL = shutil.which("openssl")


@pytest.mark.parametrize("message", sorted(RFC6979_SIGNATURES))
def test_rfc_6979_vectors_exactly(message):
    key = es256.Key(RFC6979_KEY)
    k, signature = RFC6979_SIGNATURES[message]
    assert (key.x, key.y) == RFC6979_PUBLIC
    assert es256.nonce(RFC6979_KEY, hashlib.sha256(message).digest()) == int(k, 16)
    assert key.sign(message, hedge=b"").hex().upper() == signature


def test_rfc_9449_thumbprint_and_hedged_signatures_differ():
    assert es256.thumbprint(RFC9449_JWK) == RFC9449_JKT
    key = es256.Key(RFC6979_KEY)
    assert key.sign(b"sample") != key.sign(b"sample")  # hedged: fresh randomness in every k
    began = time.perf_counter()
    for _ in range(10):
        key.sign(b"a DPoP proof")
    print(f"ES256: {(time.perf_counter() - began) * 100:.1f} ms a signature")


def der_signature(raw: bytes) -> bytes:
    """r || s as OpenSSL wants it: SEQUENCE { INTEGER r, INTEGER s }."""
    def integer(value: bytes) -> bytes:
        value = value.lstrip(b"\x00")
        value = b"\x00" + value if not value or value[0] & 0x80 else value
        return b"\x02" + bytes([len(value)]) + value
    body = integer(raw[:32]) + integer(raw[32:])
    return b"\x30" + bytes([len(body)]) + body


def openssl(*args: str, cwd, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([OPENSSL, *args], cwd=cwd, input=data, capture_output=True, timeout=30)


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
@pytest.mark.parametrize("made_by", [("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
                                     ("ecparam", "-name", "prime256v1", "-genkey")])
def test_keys_openssl_makes_sign_what_openssl_verifies(tmp_path, made_by):
    """PKCS#8 (genpkey) and SEC1 with its curve parameters first (ecparam -genkey), 12 keys each: each read,
    its public JWK equal to OpenSSL's, a signature of a random message verified by OpenSSL."""
    for i in range(12):
        pem = openssl(*made_by, cwd=tmp_path).stdout
        key = es256.read_pem(pem.decode())
        (tmp_path / "key.pem").write_bytes(pem)
        public = openssl("ec", "-in", "key.pem", "-pubout", "-outform", "DER", cwd=tmp_path).stdout
        assert public[-64:] == key.x.to_bytes(32, "big") + key.y.to_bytes(32, "big")
        message = f"message {i} {time.time()}".encode()
        (tmp_path / "message").write_bytes(message)
        (tmp_path / "signature").write_bytes(der_signature(key.sign(message)))
        openssl("ec", "-in", "key.pem", "-pubout", "-out", "public.pem", cwd=tmp_path)
        done = openssl("dgst", "-sha256", "-verify", "public.pem", "-signature", "signature", "message", cwd=tmp_path)
        assert done.returncode == 0 and b"Verified OK" in done.stdout, done.stderr


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
@pytest.mark.parametrize("make, said", [
    (("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"), "another curve"),
    (("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"), "not an elliptic-curve key"),
    (("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:x"),
     "encrypted")])
def test_keys_it_cannot_use_are_refused_saying_why(tmp_path, make, said):
    pem = openssl(*make, cwd=tmp_path).stdout.decode()
    with pytest.raises(es256.KeyError_, match=said):
        es256.read_pem(pem)


@pytest.mark.parametrize("text, said", [
    ("", "no PEM block"),
    ("-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----", "no private key found"),
    ("-----BEGIN PRIVATE KEY-----\nnot*base64\n-----END PRIVATE KEY-----", "not valid base64"),
    ("-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----", "ends early"),
    ("-----BEGIN EC PRIVATE KEY-----\nMAMCAQE=\n-----END EC PRIVATE KEY-----", "DER structure"),
])
def test_broken_pem_is_refused_saying_why(text, said):
    with pytest.raises(es256.KeyError_, match=said):
        es256.read_pem(text)


def test_a_key_whose_public_part_is_not_its_own_is_refused():
    """A SEC1 key whose [1] public point belongs to another private key."""
    import base64
    secret, other = es256.Key(RFC6979_KEY), es256.Key(12345)
    point = b"\x00\x04" + other.x.to_bytes(32, "big") + other.y.to_bytes(32, "big")
    public = b"\xa1" + bytes([len(point) + 2]) + b"\x03" + bytes([len(point)]) + point
    body = b"\x02\x01\x01" + b"\x04\x20" + RFC6979_KEY.to_bytes(32, "big") + public
    der = b"\x30" + bytes([len(body)]) + body
    pem = "-----BEGIN EC PRIVATE KEY-----\n" + base64.b64encode(der).decode() + "\n-----END EC PRIVATE KEY-----"
    with pytest.raises(es256.KeyError_, match="public part does not belong"):
        es256.read_pem(pem)
    good = body[:-len(public)] + b"\xa1" + bytes([len(point) + 2]) + b"\x03" + bytes([len(point)]) + \
        b"\x00\x04" + secret.x.to_bytes(32, "big") + secret.y.to_bytes(32, "big")
    pem = "-----BEGIN EC PRIVATE KEY-----\n" + base64.b64encode(b"\x30" + bytes([len(good)]) + good).decode() + \
        "\n-----END EC PRIVATE KEY-----"
    assert es256.read_pem(pem).thumbprint() == secret.thumbprint()
