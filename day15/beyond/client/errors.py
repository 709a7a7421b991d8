"""Beyond the tutorial: the errors of a request that a caller tells apart, each of its own type.

All are McpErrors (the twin's) that name the server they came from (ServerError): a caller that only
reports an error needs nothing else; one that tells errors apart by their JSON-RPC code catches ReplyError.
"""
from mcp import McpError


class ServerError(McpError):
    """An McpError of a server, with its name ("" where none)."""

    def __init__(self, message: str, server: str = "") -> None:
        super().__init__(message)
        self.server = server


class ReplyError(ServerError):
    """An error reply of the server: its message and code, and its data (for -32022, the versions it speaks)."""

    def __init__(self, message: str, server: str, code: int | None, data: object = None) -> None:
        super().__init__(message, server)
        self.code, self.data = code, data


class NoReply(ServerError):
    """No reply came within the request's deadline (the request was cancelled where it may be)."""


class Refused(ServerError):
    """The server refused a request with an error status that is no JSON-RPC reply (HTTP 400 and
    above): it is there, and said no; `status` says how."""

    def __init__(self, message: str, server: str, status: int) -> None:
        super().__init__(message, server)
        self.status = status


class Interrupted(ServerError):
    """The connection broke while the reply streamed (2026-07-28, which cannot resume): the request
    may be sent again as a new one."""
