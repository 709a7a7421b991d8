"""Beyond the tutorial: what a login can fail with: AuthError, its words for the user; LoginNeeded, which
reaches whoever started the server as itself (an McpError), so a caller can tell it apart."""
from mcp import McpError


class AuthError(Exception):
    """A login, a refresh or a logout that could not be done; the words are for the user."""


class LoginNeeded(McpError):
    """The server wants a login, and none may be started now (nobody asked for one): `/mcp login`."""
