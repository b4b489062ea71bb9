"""docs/architecture.md's threads table names every `hayai-…` thread the code starts, and no other.

The names are collected from app/ and model/ by reading the source: `threading.Thread(name=…)`,
`ThreadPoolExecutor(…, thread_name_prefix=…)` (its threads run as `PREFIX_0`, `PREFIX_1`, …), a
`QThread`'s `setObjectName(…)`, and a helper that passes its own parameter on as the name
(`ModelThread(name="hayai-model")`): its default and every value its callers give it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PREFIX = "hayai-"


def _callee(call: ast.Call) -> str:
    """`threading.Thread(…)` → "Thread"; `pool(…)` → "pool"."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _name_arguments(tree: ast.AST) -> list[tuple[ast.expr, ast.AST]]:
    """Each expression that names a thread in this module, with the node it was given at."""
    found = []
    made_qthreads = set()  # `self._thread = QThread()`: what setObjectName names is a thread
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if _callee(node.value) == "QThread":
                made_qthreads |= {ast.unparse(target) for target in node.targets}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node)
        if name == "Thread":  # threading.Thread(group, target, name, …)
            value = _argument(node, "name", 2)
        elif name == "ThreadPoolExecutor":  # (max_workers, thread_name_prefix, …)
            value = _argument(node, "thread_name_prefix", 1)
        elif name == "setObjectName" and isinstance(node.func, ast.Attribute):
            value = node.args[0] if ast.unparse(node.func.value) in made_qthreads else None
        else:
            continue
        if value is not None:
            found.append((value, node))
    return found


def _enclosing(tree: ast.AST) -> dict[ast.AST, tuple[ast.AST, ast.FunctionDef | None]]:
    """Each node → (its class or None, its function or None)."""
    owners: dict[ast.AST, tuple[ast.AST, ast.FunctionDef | None]] = {}

    def visit(node, cls, func):
        for child in ast.iter_child_nodes(node):
            owners[child] = (cls, func)
            if isinstance(child, ast.ClassDef):
                visit(child, child, None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, cls, child)
            else:
                visit(child, cls, func)

    visit(tree, None, None)
    return owners


def _parameter(func: ast.FunctionDef, name: str) -> tuple[int, ast.expr | None] | None:
    """A parameter's position (counting self) and its default, or None when `name` is not one."""
    args = func.args.posonlyargs + func.args.args
    defaults = [None] * (len(args) - len(func.args.defaults)) + list(func.args.defaults)
    for position, (arg, default) in enumerate(zip(args, defaults)):
        if arg.arg == name:
            return position, default
    for arg, default in zip(func.args.kwonlyargs, func.args.kw_defaults):
        if arg.arg == name:
            return -1, default
    return None


def code_thread_names() -> dict[str, str]:
    """`hayai-…` thread name (or a pool's prefix) → where the code gives it ("path:line")."""
    names: dict[str, str] = {}
    helpers: list[tuple[str, str, int]] = []  # (callable, parameter, position in a call)
    unresolved: list[str] = []
    trees = {}
    for package in ("app", "model"):
        for path in sorted((ROOT / package).rglob("*.py")):
            trees[path] = ast.parse(path.read_text(encoding="utf-8"))
    for path, tree in trees.items():
        owners = _enclosing(tree)
        for value, node in _name_arguments(tree):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names.setdefault(value.value, where)
                continue
            cls, func = owners[node]
            found = _parameter(func, value.id) if func and isinstance(value, ast.Name) else None
            if found is None:  # a name made some other way: this test cannot check it
                unresolved.append(f"{where}: {ast.unparse(value)}")
                continue
            position, default = found
            if isinstance(default, ast.Constant) and isinstance(default.value, str):
                names.setdefault(default.value, where)
            # a method's callers call its class (__init__) or the method; self is not passed
            callable_name = cls.name if cls and func.name == "__init__" else func.name
            helpers.append((callable_name, value.id, position - 1 if cls else position))
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for callable_name, parameter, position in helpers:
                if _callee(node) == callable_name:
                    value = _argument(node, parameter, position) if position >= 0 else None
                    if value is None:
                        continue
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        names.setdefault(value.value, where)
                    else:
                        unresolved.append(f"{where}: {ast.unparse(value)}")
    assert not unresolved, f"thread names this test cannot read: {unresolved}"
    return {name: where for name, where in names.items() if name.startswith(PREFIX)}


def table_thread_names() -> set[str]:
    """The `hayai-…` names in the first column of the "## Threads" table."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("\n## Threads\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # past the header
    assert rows, "docs/architecture.md has no threads table"
    return {name for row in rows for name in re.findall(r"`(hayai-[\w-]+)`", row.split("|")[1])}


def test_the_threads_table_names_every_thread_the_code_starts():
    # GIVEN the names the code gives its threads and the names the threads table's rows give
    in_code = code_thread_names()
    in_table = table_thread_names()
    # THEN the finder found the threads it must (so an empty or broken walk fails)
    assert {"hayai-history", "hayai-model", "hayai-ocr", "hayai-page"} <= set(in_code)
    # AND every one of them has its row, and every row's thread exists
    missing = {name: where for name, where in in_code.items() if name not in in_table}
    assert not missing, f"threads with no row in docs/architecture.md's threads table: {missing}"
    assert not in_table - set(in_code), (
        f"rows of docs/architecture.md's threads table for threads the code does not start: "
        f"{sorted(in_table - set(in_code))}"
    )
