"""Every package that app/ and model/ import is declared in pyproject.toml: in the dependencies, or
in the extra of the feature that needs it (`serve`, `korean`). One that only arrives as another
package's dependency (h11 through uvicorn, httpx2 through huggingface_hub) breaks the day that
package stops bringing it."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
OURS = {"app", "model", "resources"}
NOT_FOR_THE_APP = {"test", "package"}  # extras for developing and bundling, not features


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {_name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra not in NOT_FOR_THE_APP:
            names |= {_name(r) for r in requirements}
    return names


def imported() -> dict[str, list[str]]:
    """Top-level module → the files that import it (absolute imports outside the standard library)."""
    found: dict[str, list[str]] = {}
    for package in ("app", "model"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.partition(".")[0]
                    if top not in OURS and top not in sys.stdlib_module_names:
                        found.setdefault(top, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared():
    distributions = importlib.metadata.packages_distributions()
    names = declared()
    undeclared = {}
    for module, files in imported().items():
        providers = {_name(d) for d in distributions.get(module, [])}
        if not providers & names:
            undeclared[module] = (sorted(providers) or ["not installed"], files[:3])
    assert undeclared == {}


def test_the_walk_sees_the_imports_it_must():
    modules = imported()
    # a plain import, a from-import, one inside a function, one of an optional extra
    assert {"numpy", "PIL", "torch", "httpx", "starlette"} <= modules.keys()
    assert "app" not in modules and "json" not in modules
    assert "torch" in declared() and "starlette" in declared() and "pytest" not in declared()
