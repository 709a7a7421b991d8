"""In a child process of a test: the simulated remote hosts of tests/fakes/remote_hosts.py, when
TEST_REMOTE_HOSTS names them."""
import json
import os
import sys

if os.environ.get("TEST_REMOTE_HOSTS"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import remote_hosts
    remote_hosts.install({name: (addresses, port) for name, (addresses, port)
                          in json.loads(os.environ["TEST_REMOTE_HOSTS"]).items()})
    sys.path.pop(0)
