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
