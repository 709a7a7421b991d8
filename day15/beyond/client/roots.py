"""Beyond the tutorial: the roots a server is given (roots/list), from what the user wrote.

In order: the entry's "roots" (folders, a relative one from the project folder; false: no roots
capability at all for that server); else, for a local server, the existing folders its args name
as absolute or ~ paths, instead of the project folder (server-filesystem replaces the folders of
its command line with the client's roots: adding the project folder would widen what the user
gave it); else the project folder. A remote server gets roots only from "roots". From a folder's
own mcp.json (the entry's `folder_entry`), / and the home folder and its parents are never roots:
a cloned folder cannot hand a server the whole disk; what lies outside the project folder is shown
in the trust question (folder/trust.py). The roots the question showed are the entry's `shown_roots`:
a root that later resolves elsewhere (a link swapped in, a folder replaced) is left out (roots_now).
"""
import os


def roots_of(config, project: str) -> list[str]:
    """The absolute folders `config` (a ServerConfig) gets as its roots, from the project folder `project`."""
    wanted = getattr(config, "roots", None)
    if isinstance(wanted, list):
        folders = [os.path.join(project, os.path.expanduser(path)) for path in wanted]
    elif getattr(config, "kind", "stdio") != "stdio":
        return []
    else:
        folders = [os.path.expanduser(arg) for arg in getattr(config, "args", []) if arg.startswith(("/", "~"))]
    found = []
    for folder in (os.path.realpath(f) for f in folders):
        if os.path.isdir(folder) and folder not in found and not (getattr(config, "folder_entry", False)
                                                                  and _too_wide(folder)):
            found.append(folder)
    return found if found or isinstance(wanted, list) else [os.path.realpath(project)]


def roots_now(config, project: str) -> tuple[list[str], list[str]]:
    """(the roots to give now, those left out since the trust question showed others): a folder's entry
    gets only roots the question showed (its `shown_roots`, when set)."""
    found, shown = roots_of(config, project), getattr(config, "shown_roots", None)
    if shown is None:
        return found, []
    return [root for root in found if root in shown], [root for root in found if root not in shown]


def outside(config, project: str) -> list[str]:
    """The roots of `config` that are not in the project folder (what the trust question names)."""
    inside = os.path.realpath(project)
    return [root for root in roots_of(config, inside) if os.path.commonpath([root, inside]) != inside]


def _too_wide(folder: str) -> bool:
    """/, the home folder, or a folder above it."""
    home = os.path.realpath(os.path.expanduser("~"))
    return folder == os.path.dirname(folder) or os.path.commonpath([folder, home]) == folder
