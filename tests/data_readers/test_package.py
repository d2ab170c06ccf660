import subprocess
import sys

from tests.conftest import REPO_ROOT

CODE = """
import sys
from allennlp.common.util import import_module_and_submodules
import_module_and_submodules("luke_allennlp")
assert "data_readers" not in sys.modules, "luke_allennlp imports data_readers"
from allennlp.data import DatasetReader
from allennlp.models import Model
assert "luke_conll2003" not in DatasetReader.list_available() and "luke_span_ner" in Model.list_available()
import data_readers
names = ["luke_conll2003", "luke_relation_classification", "luke_open_entity", "luke_squad", "luke_record", "luke_pretraining"]
assert set(names) <= set(DatasetReader.list_available())
print("ok")
"""


def test_readers_depend_on_luke_allennlp_not_the_reverse():
    """No import cycle: every module of luke_allennlp loads without data_readers; importing data_readers then
    registers the readers (and, were it imported first, everything else)."""
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


ALIAS = """
import sys
sys.path.insert(0, sys.argv[1])  # holds luke_allennlp_readers: the folder under its installed name
first, second = sys.argv[2:4]
a = __import__(first + ".luke_conll2003", fromlist=["x"])
b = __import__(second + ".luke_conll2003", fromlist=["x"])  # no "name already in use" registration error
assert a.LukeConll2003Reader is b.LukeConll2003Reader and sys.modules[first] is sys.modules[second]
from allennlp.data import DatasetReader
assert DatasetReader.by_name("luke_conll2003") is a.LukeConll2003Reader
print("ok")
"""


def test_installed_name_and_repository_name_are_one_package(tmp_path):
    """setup.py installs data_readers/ as luke_allennlp_readers (no generic top-level name in site-packages); a
    process that sees both names (the installed package run from the repository root) gets one package."""
    (tmp_path / "luke_allennlp_readers").symlink_to(REPO_ROOT / "data_readers")
    for order in (["data_readers", "luke_allennlp_readers"], ["luke_allennlp_readers", "data_readers"]):
        result = subprocess.run(
            [sys.executable, "-c", ALIAS, str(tmp_path), *order],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            timeout=300,
        )
        assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
    setup = (REPO_ROOT / "setup.py").read_text()
    assert 'package_dir={READERS: "data_readers"}' in setup and 'READERS = "luke_allennlp_readers"' in setup
