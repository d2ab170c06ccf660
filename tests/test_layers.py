"""
What `make lint`'s import-linter contracts (pyproject.toml) do not say: the compatibility layer imports nothing of the
package, not even inside a function, in any of its modules, nor names it in a string that it could load by
`importlib` (the product hands its hooks to the layer's installer instead); and the start-up line (what the `.pth`
hook runs in every interpreter) imports nothing but the standard library.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

from luke_allennlp.cli import PTH_LINE

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("luke_allennlp", "data_readers", "luke_allennlp_readers", "tests")


def _imported(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")


def _strings(path: Path):
    """The string constants of a module but its docstrings (what `importlib` could be given)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, documented) and ast.get_docstring(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


def _words(text: str):
    return re.split(r"[^A-Za-z0-9_]+", text)


def test_the_compat_layer_imports_nothing_of_the_package():
    modules = sorted((REPO / "luke_allennlp_compat").glob("*.py"))
    assert len(modules) > 5, "the package's modules not found: the test reads the wrong folder"
    imported = {name for path in modules for name in _imported(path)}
    assert "luke_allennlp_compat.patch" in imported
    assert not [name for name in imported if name.split(".")[0] in PACKAGES or name.startswith(".")]
    named = [(path.name, value) for path in modules for value in _strings(path) if set(_words(value)) & set(PACKAGES)]
    assert not named, named


def test_the_start_up_hook_imports_only_the_standard_library():
    code = f"import sys; before = set(sys.modules)\n{PTH_LINE}print(*sorted(set(sys.modules) - before))"
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=REPO)  # -S: no .pth
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert "luke_allennlp_compat.hook" in loaded and "luke_allennlp_compat.startup" in loaded
    foreign = [
        m
        for m in loaded
        if m.split(".")[0] not in sys.stdlib_module_names
        and m not in ("luke_allennlp", "luke_allennlp.cli")
        and m.split(".")[0] != "luke_allennlp_compat"
    ]
    assert not foreign
    assert not [
        m
        for m in loaded
        if m.startswith("luke_allennlp_compat.") and m.split(".")[1] not in ("hook", "startup", "patch")
    ]
