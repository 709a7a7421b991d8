"""Beyond the tutorial: where a login meets the user (light to import: login.py, with its listener
and browser, is imported only when a login begins)."""
from dataclasses import dataclass


@dataclass
class Screen:
    """Where a login meets the user: whether a browser may be opened, and the console (beyond/console.py)
    a redirect may be pasted into (None: nowhere)."""
    browser: bool = True
    console: object = None
