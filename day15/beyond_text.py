"""Beyond the tutorial: text that came from a server, made fit to show in one line.

The tutorial prints what servers send as it is. One home for how the full client shortens it.
"""


def shorten(text: str, limit: int = 200) -> str:
    """At most `limit` characters of the stripped text, and how long it was when cut."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
