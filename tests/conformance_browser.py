#!/usr/bin/env python3
"""The stand-in browser of the tests, `make interop` and `make conformance` (BROWSER=this script): what a
person's browser does after they approve, without a person.

It GETs the authorization URL and follows redirects one by one; a page with a login form (the
Python SDK's simple-auth asks for a user name and password, filled in already) is submitted as it
is, with its hidden fields. It stops at the client's own callback on 127.0.0.1, whose page is
written to $BROWSER_PAGE_FILE when that is set, so a test can read what the page said: whole, as a
temporary file renamed into place (a test waits for the file, never for a half-written one).
"""
import html.parser
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

MAX_STEPS = 10


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Form(html.parser.HTMLParser):
    """The first form of a page: its action, method and the values of its inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action, self.method, self.fields, self.seen = None, "get", {}, False

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == "form" and not self.seen:
            self.seen, self.action = True, attrs.get("action") or ""
            self.method = (attrs.get("method") or "get").lower()
        elif tag == "input" and self.seen and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""


def main() -> int:
    opener = urllib.request.build_opener(NoRedirect)
    url, body = sys.argv[1], None
    for _ in range(MAX_STEPS):
        try:
            response = opener.open(urllib.request.Request(url, body), timeout=30)
            status, headers, page = response.status, response.headers, response.read()
        except urllib.error.HTTPError as e:
            status, headers, page = e.code, e.headers, e.read()
        if urllib.parse.urlsplit(url).hostname == "127.0.0.1" and urllib.parse.urlsplit(url).path == "/callback":
            if os.environ.get("BROWSER_PAGE_FILE"):
                part = f"{os.environ['BROWSER_PAGE_FILE']}.{os.getpid()}.part"
                with open(part, "wb") as f:
                    f.write(page)
                os.replace(part, os.environ["BROWSER_PAGE_FILE"])
            return 0
        if 300 <= status < 400 and headers.get("Location"):
            url, body = urllib.parse.urljoin(url, headers["Location"]), None
            continue
        form = Form()
        form.feed(page.decode("utf-8", "replace"))
        if status != 200 or not form.seen:
            return 1  # an error page, or nothing to follow
        encoded = urllib.parse.urlencode(form.fields)
        target = urllib.parse.urljoin(url, form.action)
        url, body = (target, encoded.encode()) if form.method == "post" else (f"{target}?{encoded}", None)
    return 1


if __name__ == "__main__":
    sys.exit(main())
