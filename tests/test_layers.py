"""The arrows between the parts (DESIGN.md, "Layout"): every import in day15/, function-level ones
too, read with ast, must point the way the design draws. Drawn as a ladder, a part imports only parts
on lower rungs; the lesson never imports the product (index.py included: the full agent has its own door,
beyond_agent.py); nothing in the product assigns into a lesson module."""
import ast
import re
from pathlib import Path

from conftest import ROOT

LESSON = {"chat", "tools", "permissions", "mcp"}  # the tutorial's modules, under every part
# The rungs, top first; a part may import the parts below its own rung, and the lesson modules.
LADDER = [
    {"entry"},                                         # day15/beyond_mcp.py and beyond_agent.py, the doors
    {"face"},                                          # beyond/__init__.py
    {"repl"},                                          # repl/shell.py is the REPL beyond_agent.py runs
    {"agent"},
    {"model", "skills"},                               # the model client: it runs tool calls through servers/
    {"servers"},
    {"folder", "asks"},
    {"client"},
    {"wire"},                                          # wire/http.py logs in: auth is below it
    {"auth", "console"},                               # what auth shares with wire comes from below
    {"bottom"},                                        # text, waits, dirs, net, sse, secrets: nothing of ours
]
RUNG = {part: level for level, parts in enumerate(LADDER) for part in parts}
# Forbidden though the ladder would allow it: the client is handed its asks, log and folder.
SIDEWAYS = {("client", "console")}


def part_of(module: str) -> str | None:
    """The part a module belongs to; None for what is not ours (the standard library)."""
    names = module.split(".")
    if names[0] in ("index", "demo_server"):
        return names[0]
    if names[0] in LESSON:
        return "lesson"
    if names[0] in ("beyond_mcp", "beyond_agent"):
        return "entry"
    if names[0] != "beyond":
        return None
    if len(names) == 1:
        return "face"
    if names[1] in ("text", "waits", "dirs", "net", "sse", "secrets"):
        return "bottom"
    if names[1] in ("console", "terminal", "turn"):  # terminal.py and turn.py are the console's drawing
        return "console"
    return names[1]


def module_name(path: Path, root: Path) -> str:
    names = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


def imports_of(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth, relative ones resolved, and
    importlib.import_module / __import__ of a constant name."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from beyond.servers import registry` imports a module
                sub = f"{base}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or \
                    (root / Path(*sub.split(".")) / "__init__.py").exists()
                found.append((node.lineno, sub if is_module else base))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str) and \
                getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__"):
            found.append((node.lineno, node.args[0].value))
    return found


def wrong_way(root: Path) -> list[str]:
    """Every import under root that points a way the design forbids, as 'file:line: a -> b (why)';
    then every two parts that import each other."""
    complaints, arrows = [], {}
    for path in sorted(root.rglob("*.py")):
        source = module_name(path, root)
        mine = part_of(source)
        for line, target in imports_of(path, root):
            theirs = part_of(target)
            if theirs is None or theirs == mine:
                continue
            arrows.setdefault((mine, theirs), f"{source} -> {target}")
            why = None
            if mine == "demo_server":
                why = "the demo server is a program of its own: it imports nothing of the project"
            elif mine == "lesson" and theirs != "lesson":
                why = "the lesson never imports the product"
            elif mine == "index" and theirs != "lesson":
                why = "index.py is the lesson: it imports nothing of the product"
            elif theirs in ("index", "demo_server"):
                why = "nothing imports a program"
            elif theirs == "lesson":
                why = "the bottom imports nothing of ours" if mine == "bottom" else None
            elif (mine, theirs) in SIDEWAYS:
                why = f"{mine} is handed what it needs of {theirs}"
            elif RUNG[theirs] <= RUNG[mine]:
                why = f"{mine} is on rung {RUNG[mine]}, {theirs} on rung {RUNG[theirs]}: arrows point down"
            if why:
                complaints.append(f"{path.relative_to(root)}:{line}: {source} -> {target} ({why})")
    for (a, b), example in arrows.items():
        if a < b and (b, a) in arrows:
            complaints.append(f"{a} and {b} import each other: {example}; {arrows[(b, a)]}")
    return complaints


def test_every_import_points_the_way_the_design_draws():
    assert wrong_way(ROOT / "day15") == []


def test_the_owner_of_secrets_imports_nothing_of_ours():
    """Every part asks beyond/secrets/ what is secret; it asks none (the standard library and itself only)."""
    day15 = ROOT / "day15"
    for path in (day15 / "beyond" / "secrets").glob("*.py"):
        theirs = [target for _, target in imports_of(path, day15) if part_of(target) is not None]
        assert [target for target in theirs if not target.startswith("beyond.secrets")] == [], path.name


def test_every_module_of_ours_has_a_part():
    """A new top-level file or folder is placed on the ladder, not silently left out of the check."""
    day15 = ROOT / "day15"
    for path in day15.rglob("*.py"):
        part = part_of(module_name(path, day15))
        assert part in RUNG or part in ("index", "demo_server", "lesson"), f"{path}: no rung for {part!r}"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_check_finds_a_wrong_way_import_at_any_depth(tmp_path):
    """A copy of the arrows' shape with imports the design forbids: each is found, by file and line."""
    root = write(tmp_path, {
        "tools.py": "import os\n",
        "mcp.py": "def later():\n    from beyond.client import session\n",      # the lesson into the product
        "beyond/__init__.py": "",
        "beyond/text.py": "import tools\n",                                     # the bottom into the lesson
        "beyond/client/__init__.py": "",
        "beyond/client/session.py": "import tools\nfrom beyond.console import Console\n",
        "beyond/wire/__init__.py": "",
        "beyond/wire/stdio.py": "import importlib\nimportlib.import_module('beyond.client.session')\n",
        "beyond/wire/http.py": "from beyond.auth import login\n",             # allowed: the HTTP transport logs in
        "beyond/auth/__init__.py": "",
        "beyond/auth/login.py": "from ..wire import http\n",                   # upward, and a pair
        "beyond/console.py": "from beyond.text import clean\n",
        "beyond/repl/__init__.py": "",
        "beyond/repl/commands.py": "",
        "index.py": "from beyond.repl import commands\n",
    })
    found = wrong_way(root)
    assert [c.split(" (")[0] for c in found] == [
        "beyond/auth/login.py:1: beyond.auth.login -> beyond.wire.http",
        "beyond/client/session.py:2: beyond.client.session -> beyond.console",
        "beyond/text.py:1: beyond.text -> tools",
        "beyond/wire/stdio.py:2: beyond.wire.stdio -> beyond.client.session",
        "index.py:1: index -> beyond.repl.commands",
        "mcp.py:2: mcp -> beyond.client.session",
        "auth and wire import each other: beyond.auth.login -> beyond.wire.http; beyond.wire.http -> beyond.auth.login",
        "client and lesson import each other: beyond.client.session -> tools; mcp -> beyond.client.session",
    ]


def test_every_folder_names_each_of_its_files():
    """The map of the product is the tree: each folder's docstring has a line for every file in it."""
    beyond = ROOT / "day15" / "beyond"
    for init in [beyond / "__init__.py", *beyond.glob("*/__init__.py")]:
        listed = ast.get_docstring(ast.parse(init.read_text()))
        for path in init.parent.iterdir():
            if path.name != "__init__.py" and (path.suffix == ".py" or (path / "__init__.py").exists()):
                name = path.name + ("/" if path.is_dir() else "")
                assert name in listed, f"{init.relative_to(ROOT)} does not name {name}"


def test_no_line_of_code_is_over_120_characters():
    """Wrapped where it grows, so it reads beside the tutorial without scrolling."""
    files = sorted([*(ROOT / "day15").rglob("*.py"), *(ROOT / "tests").rglob("*.py")])
    long = [f"{path.relative_to(ROOT)}:{number}" for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > 120]
    assert not long, long


def module_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of the imports a file runs when it is imported: outside every function and class."""
    found, todo = [], list(ast.parse(path.read_text(), str(path)).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or ""))
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
    return found


def test_no_lesson_file_imports_the_product_when_it_is_imported():
    """Copied alone, the lesson's files import: none imports the product (beyond_*.py are its doors)."""
    for path in (ROOT / "day15").glob("*.py"):
        if not path.name.startswith("beyond_"):
            assert [m for _, m in module_level_imports(path) if m.split(".")[0] == "beyond"] == [], path.name


def writes_into_the_lesson(path: Path) -> list[str]:
    """'file:line' of each assignment (or setattr) to an attribute of a lesson module the file imported."""
    tree = ast.parse(path.read_text(), str(path))
    names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names if alias.name in LESSON | {"index"}}
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        found += [f"{path.name}:{node.lineno}" for target in targets
                  if isinstance(target, ast.Attribute) and getattr(target.value, "id", None) in names]
    return found


def test_the_product_never_assigns_into_a_lesson_module(tmp_path):
    """The product extends the lesson from above (subclass, wrap, pass an object in), never rewires it."""
    for path in (ROOT / "day15" / "beyond").rglob("*.py"):
        assert writes_into_the_lesson(path) == [], path
    bad = write(tmp_path, {"x.py": "import chat\nimport mcp as m\nchat.MAX = 1\nm.f += 1\nsetattr(chat, 'y', 2)\n"})
    assert writes_into_the_lesson(bad / "x.py") == ["x.py:3", "x.py:4", "x.py:5"]


def test_importing_the_product_builds_nothing():
    """`import beyond` (as scripts and beyond_agent.py do) makes no console and no set of servers."""
    import subprocess
    import sys
    code = ("import gc, sys; sys.path.insert(0, sys.argv[1]); import beyond, beyond.repl.shell; "
            "print(sorted({type(o).__name__ for o in gc.get_objects() if type(o).__name__ in ('Console', 'Servers')}))")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "day15")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def lesson_hooks(path: Path) -> list[str]:
    """'file:line' of each set_* function and `global` statement: a hook through which another module rewires it."""
    tree = ast.parse(path.read_text(), str(path))
    return [f"{path.name}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Global) or isinstance(node, ast.FunctionDef) and node.name.startswith("set_")]


def reads_lesson_privates(path: Path) -> list[str]:
    """'file:line' of each private name of a lesson module the file uses: `module._name`, `from module import _name`."""
    tree = ast.parse(path.read_text(), str(path))
    names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names if alias.name in LESSON}
    found = [f"{path.name}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and getattr(node.value, "id", None) in names and re.match(r"_(?!_)", node.attr)]
    return found + [f"{path.name}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module in LESSON and any(alias.name.startswith("_") for alias in node.names)]


def test_the_lesson_has_no_hooks_and_the_product_reads_none_of_its_privates(tmp_path):
    """No lesson module offers a setter or keeps state behind `global`; the product uses only public names."""
    for path in (ROOT / "day15").glob("*.py"):
        assert lesson_hooks(path) == [], path.name
    for path in (ROOT / "day15" / "beyond").rglob("*.py"):
        assert reads_lesson_privates(path) == [], path
    bad = write(tmp_path, {"x.py": "import tools\nfrom mcp import _x\nglobal y\ndef set_z(): pass\ntools._registry\n"})
    assert lesson_hooks(bad / "x.py") == ["x.py:3", "x.py:4"]
    assert sorted(reads_lesson_privates(bad / "x.py")) == ["x.py:2", "x.py:5"]


def unused_in_lesson(folder: Path) -> list[str]:
    """Functions, classes and methods of the lesson's files that no lesson file uses, and parameters that
    their own function never reads (lambdas aside): what only the product would use."""
    trees = {path.name: ast.parse(path.read_text()) for path in folder.glob("*.py")
             if not path.name.startswith("beyond_")}
    used = {node.id for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {node.attr for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("__") \
                    and node.name not in used and node.name != "main":
                found.append(f"{name}: {node.name} is used by no lesson file")
            if isinstance(node, ast.FunctionDef):
                read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                found += [f"{name}: {node.name}({arg.arg}) never reads it" for arg in node.args.args
                          + node.args.kwonlyargs if arg.arg not in read and arg.arg != "self"]
    return found


def test_the_lesson_stays_small_and_narrow():
    """The six lesson files: at most 720 lines together (mcp.py 240, index.py 100, demo_server.py 75),
    none over 100 characters, so a reader holds them beside the tutorial."""
    sizes = {path.name: path.read_text(encoding="utf-8").splitlines() for path in (ROOT / "day15").glob("*.py")
             if not path.name.startswith("beyond_")}
    assert sorted(sizes) == ["chat.py", "demo_server.py", "index.py", "mcp.py", "permissions.py", "tools.py"]
    assert sum(map(len, sizes.values())) <= 720 and len(sizes["mcp.py"]) <= 240
    assert len(sizes["index.py"]) <= 100 and len(sizes["demo_server.py"]) <= 75
    wide = [f"{name}:{n}" for name, lines in sizes.items() for n, line in enumerate(lines, 1) if len(line) > 100]
    assert wide == [], wide


def test_nothing_in_the_lesson_is_there_for_the_product_alone(tmp_path):
    """Every function, class, method and parameter of a lesson file is used by the lesson itself; the check
    finds one that is not."""
    assert unused_in_lesson(ROOT / "day15") == []
    (tmp_path / "tools.py").write_text("def run(name, hook=None):\n    return name\n\n\nrun('x')\n")
    assert unused_in_lesson(tmp_path) == ["tools.py: run(hook) never reads it"]


def circles_in_parts(root: Path) -> list[str]:
    """Files of one part that import each other, at any depth (function-level imports too): each circle
    once, as 'a <-> b'. A part is read bottom up; a file that imports one that imports it is not."""
    modules = {module_name(path, root): path for path in root.rglob("*.py")}
    edges = {source: {target for _, target in imports_of(path, root) if target in modules and target != source
                      and part_of(target) == part_of(source) and part_of(source) not in ("lesson", "face")}
             for source, path in modules.items()}
    found = []
    for source, targets in edges.items():
        for target in targets:
            seen, todo = set(), [target]
            while todo:
                module = todo.pop()
                if module == source:
                    found.append(" <-> ".join(sorted((source, target))))
                    break
                if module not in seen:
                    seen.add(module)
                    todo += edges.get(module, ())
    return sorted(set(found))


def private_reads(root: Path) -> list[str]:
    """Every `x._name` whose x is not self, cls or super(): one object reading another's private names."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                own = isinstance(owner, ast.Name) and owner.id in ("self", "cls") or \
                    isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "super"
                if not own:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_file_circles_within_a_part_and_no_object_reads_anothers_privates(tmp_path):
    assert circles_in_parts(ROOT / "day15") == [] and private_reads(ROOT / "day15") == []
    written = write(tmp_path, {"beyond/wire/a.py": "from beyond.wire import b\n",
                               "beyond/wire/b.py": "def f():\n    from beyond.wire import a\n    return a._x\n"})
    assert circles_in_parts(written) == ["beyond.wire.a <-> beyond.wire.b"]
    assert private_reads(written) == ["beyond/wire/b.py:3: a._x"]
