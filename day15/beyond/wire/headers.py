"""Beyond the tutorial: the headers MCP's HTTP transport adds to a message, from what the client says of it.

Every request carries the revision agreed (MCP-Protocol-Version); in 2026-07-28 a routed one also
carries its method, the name it targets and the arguments a tool asks to see, each value written
as that revision has it (plain ASCII, else =?base64?...?=). The HTTP transport (http.py) adds them.
"""
import base64

from beyond.wire.base import About


def about_headers(about: About) -> dict[str, str]:
    """MCP's headers for what the client says of a message: the version; when routed, the method, its
    target and the arguments a tool asks to see (Mcp-Param-<name>)."""
    if not about.revision:
        return {}
    headers = {"MCP-Protocol-Version": about.revision}
    if about.routed:
        headers["Mcp-Method"] = about.method or ""
        if about.name is not None:
            headers["Mcp-Name"] = header_value(about.name)
        headers.update({f"Mcp-Param-{name}": header_value(value) for name, value in about.params.items()})
    return headers


def header_value(text: str) -> str:
    """A header value as 2026-07-28 writes it: plain printable ASCII as it is, anything else =?base64?...?=."""
    plain = all(" " <= c <= "~" for c in text) and text == text.strip() \
        and not (text.startswith("=?base64?") and text.endswith("?="))
    return text if plain else f"=?base64?{base64.b64encode(text.encode()).decode()}?="
