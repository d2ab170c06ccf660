"""Repair 1 (luke_allennlp_compat/optional_dependencies.py): allennlp without spaCy, boto3, the Google Cloud client
or a working torchvision."""

import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, REPO_ROOT


def test_placeholder_torchvision_explains_itself():
    """In a fresh interpreter where torchvision cannot be imported, allennlp's vision code still imports."""
    code = (
        "import sys; sys.modules['torchvision'] = None\n"  # `import torchvision` now raises ImportError
        "import allennlp.modules.vision, allennlp.data.image_loader as il\n"
        "try:\n"
        "    il.torchvision.io.read_image('x.png')\n"
        "except ImportError as e:\n"
        "    print('ERROR:', e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "torchvision.io.read_image is unavailable: torchvision could not be imported" in result.stdout


def test_allennlp_trains_without_its_heavy_optional_dependencies(tiny_luke_dir, tmp_path):
    """As on a GPU machine given only `make wheelhouse`: no spaCy, boto3 or Google Cloud client. Every allennlp
    module still imports, a config trains, and what needs a missing package says which and why."""
    missing = ["spacy", "boto3", "botocore", "google.cloud", "google.api_core", "google.auth", "torchvision"]
    code = (
        f"import sys\nfor name in {missing!r}: sys.modules[name] = None\n"
        "import allennlp.commands, allennlp.common.util as util, cached_path, luke_allennlp.plugin\n"
        "from allennlp.commands.train import train_model_from_file\n"
        f"train_model_from_file({str(FIXTURES / 'configs' / 'luke_classifier.jsonnet')!r}, {str(tmp_path / 'run')!r},\n"
        "                      overrides='{\"trainer.num_epochs\": 1}')\n"
        # allennlp's sanitize (every prediction goes through it) checks isinstance against spaCy's Token
        "print('SANITIZED:', util.sanitize({'tokens': ['a'], 'score': 0.5}))\n"
        "try:\n"
        "    util.get_spacy_model('en_core_web_sm', False, False, False)\n"
        "except ImportError as e:\n"
        "    print('ERROR:', e)\n"
    )
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.tar.gz").exists()
    assert "is unavailable: spacy could not be imported" in result.stdout and "install spacy" in result.stdout
    assert "SANITIZED: {'tokens': ['a'], 'score': 0.5}" in result.stdout


@pytest.mark.parametrize(
    "torchvision_init, expected",
    [
        # Installed but built for another torch, as PyPI's torchvision beside this machine's CPU torch.
        (
            "raise RuntimeError('operator torchvision::nms does not exist')",
            "placeholder: torchvision could not be imported (RuntimeError: operator torchvision::nms",
        ),
        # A working torchvision is used as it is.
        ("class io:\n    pass\n", "real"),
    ],
    ids=["broken", "working"],
)
def test_torchvision_that_loads_is_kept_and_one_that_breaks_is_replaced(tmp_path, torchvision_init, expected):
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text(torchvision_init)
    code = (
        "import allennlp.data.image_loader as il, luke_allennlp_compat.optional_dependencies as c\n"
        "tv = il.torchvision\n"
        "print('placeholder: ' + tv.__reason__ if isinstance(tv, c._PlaceholderModule) else 'real')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().startswith(expected)
