"""No import cycle in app/ or model/ (issue #42): every import counts, at module level, under
`if TYPE_CHECKING:` and inside functions, so that a module's dependencies read one way and a cycle
cannot hide in a late import. `from x import y` with y a submodule imports x.y; importing a package
imports its __init__.py (and only it: Python runs the parents' __init__ too, but a submodule that
imports its own package's siblings is no cycle to remove)."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "model")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, packages=PACKAGES) -> dict[str, dict[str, str]]:
    """Each module under `packages` → the modules of those packages it imports, each with where
    (file:line of its first import)."""
    files = {
        module_name(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }
    graph: dict[str, dict[str, str]] = {}
    for name, path in files.items():
        # the package a relative import starts from: a package's __init__ is inside itself
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges = graph[name] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module.split(".") if node.module else []
                if node.level:
                    base = here[: len(here) - node.level + 1] + base
                source = ".".join(base)
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in files else source
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target in files and target != name:
                    edges.setdefault(target, f"{path.relative_to(root)}:{node.lineno}")
    return graph


def strongly_connected(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, each sorted, in name order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def chain(graph: dict[str, dict[str, str]], component: list[str]) -> str:
    """A shortest cycle through the component's first module, each import with its file:line; a
    larger component also names all its modules."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while start not in came_from:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w in members and w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    path = [start]
    while len(path) == 1 or path[-1] != start:
        path.append(came_from[path[-1]])
    path.reverse()
    steps = [f"{a} ({graph[a][b]}) →" for a, b in zip(path, path[1:])]
    text = " ".join([*steps, start])
    if len(component) > len(path) - 1:
        text += f"\n    all {len(component)} modules in the cycle: {', '.join(component)}"
    return text


def cycles(root: Path = REPO) -> list[str]:
    graph = import_graph(root)
    return [chain(graph, component) for component in strongly_connected(graph)]


def test_app_and_model_have_no_import_cycle():
    found = cycles()
    assert not found, "import cycles (move the shared definition to the module that owns it):\n" + (
        "\n".join(f"- {c}" for c in found)
    )


def test_every_kind_of_import_is_seen(tmp_path):
    """Late, type-only, relative and `from package import submodule` imports all make edges."""
    files = {
        "app/__init__.py": "",
        "app/a.py": "def f():\n    from app import b\n",
        "app/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import X\n",
        "app/c.py": "import app.d\n",
        "app/d/__init__.py": "from ..a import f\n",
        "model/__init__.py": "",
        "model/e.py": "from model import f\n",
        "model/f.py": "from . import g\n",
        "model/g.py": "x = 1\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cycles(tmp_path) == [
        "app.a (app/a.py:2) → app.b (app/b.py:3) → app.c (app/c.py:1) → app.d (app/d/__init__.py:1) → app.a"
    ]
