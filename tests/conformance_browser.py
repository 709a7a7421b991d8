#!/usr/bin/env python3
"""The browser of `make conformance` (BROWSER=this script): GET the authorization URL without following
its redirect, then GET where it redirects, which is the client's own callback on 127.0.0.1.

The suite's authorization server approves at once; a person's browser would do the same two steps.
"""
import sys
import urllib.error
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main() -> int:
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(sys.argv[1], timeout=10)
        return 1  # no redirect: nothing to follow
    except urllib.error.HTTPError as e:
        location = e.headers.get("Location")
    if not location:
        return 1
    urllib.request.urlopen(location, timeout=10).read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
