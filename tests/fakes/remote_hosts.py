"""Remote hosts for tests: names that resolve to public-looking addresses, served from this machine over TLS.

hooks({"mcp.evil.test": (["198.51.100.7"], port)}) are a socket.getaddrinfo that answers those addresses
for the name and a socket.create_connection that reaches 127.0.0.1:port for any of them. A child
process gets the same hosts with environment() (PYTHONPATH to remote_site/, whose sitecustomize.py
installs them, and TEST_REMOTE_HOSTS), so a browser script or the agent itself sees them too.
certificates(folder) makes a throw-away CA (SSL_CERT_FILE) and a certificate for *.evil.test,
*.good.test and *.lan.test with openssl, so the client checks real certificates of remote names.
"""
import json
import os
import socket
import ssl
import subprocess
from pathlib import Path

ENV = "TEST_REMOTE_HOSTS"
SITE = Path(__file__).resolve().parent / "remote_site"
NAMES = ("*.evil.test", "*.good.test", "*.lan.test")


_REAL = socket.getaddrinfo, socket.create_connection


def hooks(hosts: dict[str, tuple[list[str], int]]):
    """(getaddrinfo, create_connection) for socket that resolve each name of `hosts` (which may grow
    meanwhile) to its addresses and connect each of those addresses to 127.0.0.1:port; the real ones otherwise."""
    real_getaddrinfo, real_connect = _REAL

    def getaddrinfo(host, port, *args, **kwargs):
        if host in hosts:
            return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                     (a, port, 0, 0) if ":" in a else (a, port)) for a in hosts[host][0]]
        return real_getaddrinfo(host, port, *args, **kwargs)

    def create_connection(address, *args, **kwargs):
        host, port = address[0], address[1]
        if host in hosts:
            host = hosts[host][0][0]
        local = {a: p for addresses, p in hosts.values() for a in addresses if a != "127.0.0.1"}
        if host in local:
            return real_connect(("127.0.0.1", local[host]), *args, **kwargs)
        return real_connect((host, port), *args, **kwargs)
    return getaddrinfo, create_connection


def install(hosts: dict[str, tuple[list[str], int]]) -> None:
    """The hooks, in this process for good (a child's sitecustomize.py)."""
    socket.getaddrinfo, socket.create_connection = hooks(hosts)


def environment(hosts: dict[str, tuple[list[str], int]]) -> dict[str, str]:
    """What a child process needs in its environment to see the same hosts."""
    path = os.environ.get("PYTHONPATH", "")
    return {ENV: json.dumps(hosts), "PYTHONPATH": f"{SITE}{os.pathsep}{path}" if path else str(SITE)}


def certificates(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """(the CA file to trust, a server context with the certificate of NAMES) made with openssl."""
    ca_key, ca, key, csr, cert, ext = (folder / name for name in ("ca.key", "ca.pem", "leaf.key", "leaf.csr",
                                                                  "leaf.pem", "leaf.ext"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)  # noqa: E731
    run("req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "3650",
        "-subj", "/CN=throw-away test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=evil.test")
    ext.write_text("subjectAltName=" + ",".join(f"DNS:{name}" for name in NAMES) + "\n"
                   "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                   "extendedKeyUsage=serverAuth\nauthorityKeyIdentifier=keyid,issuer\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-out", str(cert),
        "-days", "3650", "-extfile", str(ext))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return ca, context
