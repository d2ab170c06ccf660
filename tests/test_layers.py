"""
What `make lint`'s import-linter contracts (pyproject.toml) do not say: the compatibility layer imports nothing of the
package, not even inside a function, in any of its modules (it names `luke_allennlp.archival` and loads it when a
repaired allennlp function is first called); and importing it (what the start-up hook does in every interpreter)
imports nothing but the standard library.
"""

import ast
import subprocess
import sys
from pathlib import Path

import luke_allennlp_compat

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("luke_allennlp", "data_readers", "luke_allennlp_readers", "tests")


def _imported(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")


def test_the_compat_layer_imports_nothing_of_the_package():
    modules = sorted((REPO / "luke_allennlp_compat").glob("*.py"))
    assert len(modules) > 10, "the package's modules not found: the test reads the wrong folder"
    imported = {name for path in modules for name in _imported(path)}
    assert "luke_allennlp_compat._patch" in imported
    assert not [name for name in imported if name.split(".")[0] in PACKAGES or name.startswith(".")]
    assert luke_allennlp_compat.ARCHIVAL_MODULE == "luke_allennlp.archival"


def test_the_start_up_hook_imports_only_the_standard_library():
    code = (
        "import sys; before = set(sys.modules)\n"
        "import luke_allennlp_compat; luke_allennlp_compat.install()\n"
        "print(*sorted(set(sys.modules) - before))"
    )
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert "luke_allennlp_compat.hook" in loaded and "luke_allennlp_compat.startup" in loaded
    foreign = [
        m
        for m in loaded
        if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "luke_allennlp_compat"
    ]
    assert not foreign
    assert not [
        m
        for m in loaded
        if m.startswith("luke_allennlp_compat.") and m.split(".")[1] not in ("hook", "startup", "_patch")
    ]
