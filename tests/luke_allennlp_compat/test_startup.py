"""The start-up deferral (luke_allennlp_compat.startup): what allennlp imports but does not use is not loaded, and
everything allennlp takes from it still works once used. The real commands that depend on it: the subprocess tests
of tests/luke_allennlp_compat/; the figures: benchmarks/startup.py."""

import subprocess
import sys

from tests.conftest import REPO_ROOT

# In a fresh interpreter (the test process may have loaded spaCy or NLTK already), as the `allennlp` command starts.
CODE = """
import sys
from luke_allennlp_compat import startup

def real(name):
    return name in sys.modules and not isinstance(sys.modules[name], startup._DeferredModule)

import allennlp.commands, allennlp.training.metrics, allennlp.modules.transformer.activation_layer as activation
import allennlp.common.cached_transformers as cached, allennlp.common.util as util
import allennlp.data.fields.text_field as text_field
import allennlp.training.metrics.evalb_bracketing_scorer as evalb
print("UNLOADED", [n for n in ("spacy", "nltk", "sklearn", "scipy.stats", "transformers.modeling_utils",
                               "transformers.models.bert.modeling_bert") if real(n)])
print("SANITIZED", util.sanitize({"a": [1, "b"]}), "STILL", real("spacy"))
import transformers
print("TRANSFORMERS_NAMES", transformers.AutoModel.__name__, repr(cached.AutoModel))
print("ACT2FN", type(activation.ACT2FN["gelu"]).__name__, real("transformers.models.bert.modeling_bert"))
print("TREE", evalb.Tree.fromstring("(S (NP a) (VP b))").leaves(), real("nltk"))
import spacy  # the stand-in from sys.modules: its attributes are the real ones
token = spacy.blank("en")("Hello world")[0]
import sklearn.metrics  # a submodule of a stand-in, imported by someone else: the real one, under the real parent
print("SKLEARN", real("sklearn"), sklearn.metrics.accuracy_score([1, 0], [1, 1]))
print("SPACY", real("spacy"), isinstance(token, text_field.SpacyToken), util.sanitize(token))
"""


def test_unused_imports_are_deferred_and_work_on_first_use():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["UNLOADED"] == "[]"  # nothing of them loaded by importing allennlp's commands and modules
    assert lines["SANITIZED"] == "{'a': [1, 'b']} STILL False"  # sanitize's isinstance(x, spacy.tokens.Token)
    # transformers.AutoModel is transformers' own again; allennlp's binding is the stand-in
    assert lines["TRANSFORMERS_NAMES"] == "AutoModel <deferred transformers.AutoModel>"
    assert lines["ACT2FN"] == "GELUActivation True"
    assert lines["TREE"] == "['a', 'b'] True"
    assert lines["SKLEARN"] == "True 0.5"
    assert lines["SPACY"] == "True True Hello"  # a real token: TextField and sanitize see it
