"""Beyond the tutorial: the built-in `read` asks before it opens a file that usually holds secrets (by the
names secrets/names.py lists), even when GeekAgent.json allows `read`: by its name, by where it leads, or as
another name (a hard link) of such a file in the project or the home folder. read_question() is its question.
"""
import json
import os
from collections.abc import Callable

import tools
from beyond.secrets import SECRET_FOLDERS, SECRET_PATHS, looks_secret


def read_question(root: str = ".") -> Callable[[dict], tuple[str, bool]]:
    """The question before the built-in `read` (tools.register_builtin_tools) runs: the plain one, as its
    policy says, or, for a secret-looking file, one asked whatever the policy says."""
    base = os.path.realpath(root)

    def question(args: dict) -> tuple[str, bool]:
        path = args.get("path", "")
        target = tools.inside(base, path)
        if looks_secret(path) or looks_secret(os.path.relpath(target, base)) or _links_to_secret(target, base):
            return f"read wants {path!r}, which looks like a file of secrets. Allow?", True
        return f"Run read with {json.dumps(args, ensure_ascii=False)}?", False

    return question


def _links_to_secret(target: str, base: str) -> bool:
    """True for a file with other names (hard links) one of which is a secret-looking file in the
    home folder or the project (compared by device and inode: a hard link has no target to follow)."""
    try:
        info = os.stat(target)
    except OSError:
        return False  # read reports it
    if info.st_nlink < 2:
        return False
    return (info.st_dev, info.st_ino) in {(s.st_dev, s.st_ino) for s in _secret_files(os.path.expanduser("~"))
                                          + _secret_files(base)}


def _secret_files(folder: str) -> list[os.stat_result]:
    """The secret-looking files at the top of a folder and in its SECRET_FOLDERS and SECRET_PATHS."""
    found = []
    places = [(folder, False)] + [(os.path.join(folder, name), True) for name in SECRET_FOLDERS]
    places += [(os.path.join(folder, os.path.dirname(name)), False) for name in SECRET_PATHS]
    for place, every in places:
        try:
            with os.scandir(place) as entries:
                found += [e.stat() for e in entries if e.is_file() and (every or looks_secret(
                    os.path.relpath(e.path, folder)))]
        except OSError:
            continue  # no such folder
    return found
