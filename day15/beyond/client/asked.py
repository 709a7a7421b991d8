"""Beyond the tutorial: what a server may ask of the client, as the client sees it.

The tutorial's client offers no capabilities. The full client declares what its ask handlers
offer and hands each request of the server's (elicitation, sampling, roots) to them: the agent
gives it beyond/asks/handlers.py's, which ask the user through the console; without any, it
declares nothing and answers "method not found", as an SDK's session does without callbacks.
"""
from typing import Protocol

# JSON-RPC's "method not found".
METHOD_NOT_FOUND = -32601


class AskRefused(Exception):
    """An answer that is a JSON-RPC error: its code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Asks(Protocol):
    """The handlers of what servers ask, as the agent gives them to each client."""

    def capabilities(self) -> dict:
        """What this client offers servers (elicitation, sampling, roots), the same in every run."""

    def answer(self, server: str, config, method: str, params: object) -> dict:
        """The result of one request of a server's; AskRefused for an error answer."""


class NoAsks:
    """No handlers: nothing offered, every request answered "method not found"."""

    def capabilities(self) -> dict:
        return {}

    def answer(self, server: str, config, method: str, params: object) -> dict:
        raise AskRefused(METHOD_NOT_FOUND, f"method not found: {method[:100]}")
