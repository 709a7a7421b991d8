"""Beyond the tutorial: what a server may ask of the client, as the client sees it.

The tutorial's client offers no capabilities. The full client declares what its ask handlers
offer and hands each request of the server's (elicitation, sampling, roots) to them: the agent
gives it beyond/asks/handlers.py's, which ask the user through the console; without any, it
declares nothing and answers "method not found", as an SDK's session does without callbacks.
"""
from collections.abc import Callable
from typing import Protocol

from beyond.client.skill_entries import SKILLS

# JSON-RPC's "method not found".
METHOD_NOT_FOUND = -32601
# 2025-11-25: a request that waits on pages the user must visit first (error.data.elicitations).
URL_ELICITATION_REQUIRED = -32042


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

    def finished(self, server: str, config, completed: Callable[[], bool]) -> bool:
        """After a page the user chose to open for a request (-32042): True once they say they are
        done there, or once completed() (the server said so); False if they give up."""


class NoAsks:
    """No handlers: nothing offered, every request answered "method not found"."""

    def capabilities(self) -> dict:
        return {}

    def answer(self, server: str, config, method: str, params: object) -> dict:
        raise AskRefused(METHOD_NOT_FOUND, f"method not found: {method[:100]}")

    def finished(self, server: str, config, completed: Callable[[], bool]) -> bool:
        return False


# Pages one -32042 may ask the user to visit before its request is sent again; more are not asked.
MAX_PAGES = 3


def pages_visited(asks: Asks, server: str, config, data: object, completed: Callable[[str], bool]) -> bool:
    """A -32042's error.data.elicitations asked as URL questions (asks.answer), each then waited on
    until the user is done or completed(its elicitationId), the server's notification; True when every
    one was opened and finished (the request is then sent again), False once one is not."""
    wanted = data.get("elicitations") if isinstance(data, dict) else None
    pages = [page for page in wanted if isinstance(page, dict) and page.get("mode") == "url"] \
        if isinstance(wanted, list) else []
    if not pages or len(pages) > MAX_PAGES:
        return False
    for page in pages:
        ident = str(page.get("elicitationId", ""))[:200]
        asked = {"mode": "url", "message": page.get("message", ""), "url": page.get("url"), "elicitationId": ident}
        try:
            if asks.answer(server, config, "elicitation/create", asked).get("action") != "accept":
                return False
        except AskRefused:
            return False
        if not asks.finished(server, config, lambda: completed(ident)):
            return False
    return True


def offered_to(asks: Asks, config) -> dict:
    """What the client declares to one server: the handlers' capabilities, without roots where its entry
    says "roots": false; the skills extension (client/skills.py) in every revision."""
    offered = asks.capabilities()
    offered = {k: v for k, v in offered.items() if k != "roots"} if getattr(config, "roots", None) is False else offered
    return {**offered, "extensions": {**offered.get("extensions", {}), SKILLS: {}}}
