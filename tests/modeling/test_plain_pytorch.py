"""`luke_allennlp.modeling` is plain PyTorch: importing it and loading a checkpoint imports no allennlp."""

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from safetensors.torch import load_file

REPO = Path(__file__).resolve().parents[2]

# A fresh interpreter without site's start-up hooks (-S: no `.pth` line installs the compatibility layer), given
# site-packages and the checkout by hand.
CHILD = """
import json, sys
sys.path[:0] = [{repo!r}]
sys.path.append({site_packages!r})
import luke_allennlp.modeling
encoder = luke_allennlp.modeling.LukeEncoder.from_pretrained({checkpoint!r})
print(json.dumps({{"parameters": sum(p.numel() for p in encoder.parameters()), "modules": sorted(sys.modules)}}))
"""


def test_the_model_loads_in_an_interpreter_without_allennlp(tiny_luke_dir, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(tiny_luke_dir, checkpoint)
    import torch

    # As pytorch_model.bin, so that the weights-only loader of `modeling` is the one that reads it.
    torch.save(load_file(checkpoint / "model.safetensors"), checkpoint / "pytorch_model.bin")
    (checkpoint / "model.safetensors").unlink()
    site_packages = sysconfig.get_paths()["purelib"]
    code = CHILD.format(repo=str(REPO), site_packages=site_packages, checkpoint=str(checkpoint))
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded["parameters"] > 0
    tops = {name.split(".")[0] for name in loaded["modules"]}
    assert "luke_allennlp" in tops and "torch" in tops
    assert not tops & {"allennlp", "spacy", "nltk", "luke_allennlp_compat", "data_readers"}
    assert [m for m in loaded["modules"] if m.startswith("luke_allennlp.")] == [
        m for m in loaded["modules"] if m.startswith("luke_allennlp.modeling")
    ]
