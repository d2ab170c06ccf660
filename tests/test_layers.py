"""
What `make lint`'s import-linter contracts (pyproject.toml) cannot say: the compatibility layer, a single-file
module that import-linter 2.6 cannot take as a root, imports nothing of the package, not even inside a function (it
names `luke_allennlp.archival` and loads it when a repaired allennlp function is first called).
"""

import ast
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
    imported = set(_imported(REPO / "luke_allennlp_compat.py"))
    assert imported, "no imports found: the test reads the wrong file"
    assert not [name for name in imported if name.split(".")[0] in PACKAGES or name.startswith(".")]
    assert luke_allennlp_compat.ARCHIVAL_MODULE == "luke_allennlp.archival"
