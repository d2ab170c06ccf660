"""
docs/getting-started.md runs as written: its ```bash blocks marked `<!-- docs-test: NAME -->` (all of them but
the install block) run by bash (`set -euo pipefail`) in the docs test's scratch checkout (tests/test_docs.py:
`configs/`, `tests/`, `demo/` and `../shared` as in a checkout), in page order, a block's prerequisites first,
with the environment's `allennlp` and `python` first on PATH and the hub offline. Unlike the task pages' blocks,
no override is merged in: the page's commands are small already (tiny checkpoints, a few hundred instances).
The default suite runs every block: on a quiet 2-core machine (2026-11-25) the tokenizer 3 s, the checkpoints 20 s,
the NER run 17 s and the entity-disambiguation run 40 s.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.test_docs import bash_blocks, scratch_checkout  # noqa: F401  (scratch_checkout: a fixture used here)

PAGE = REPO_ROOT / "docs" / "getting-started.md"
BLOCKS = bash_blocks(PAGE.read_text(encoding="utf-8"), file="docs/getting-started.md")
RUN = ["gs-tokenizer", "gs-xlmr-tokenizer", "gs-checkpoints", "gs-ner", "gs-ed"]


class Page:
    """Runs the page's marked blocks in the scratch checkout, each once, a block's prerequisites first."""

    NEEDS = {
        "gs-checkpoints": ["gs-tokenizer", "gs-xlmr-tokenizer"],
        "gs-ner": ["gs-checkpoints"],
        "gs-ed": ["gs-tokenizer"],
    }

    def __init__(self, checkout: Path):
        self.checkout, self.outputs = checkout, {}

    def run(self, name: str) -> str:
        if name in self.outputs:
            return self.outputs[name]
        for needed in self.NEEDS.get(name, []):
            self.run(needed)
        (block,) = [b for b in BLOCKS if b.name == name]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)  # as in a checkout
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=self.checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"{PAGE.name}:{block.line} ({name}) failed:\n{result.stderr[-4000:]}"
        self.outputs[name] = result.stdout
        return result.stdout


@pytest.fixture(scope="module")
def page(scratch_checkout) -> Page:  # noqa: F811  (the fixture imported above)
    return Page(scratch_checkout)


def test_every_block_but_the_install_runs():
    (install,) = [b for b in BLOCKS if b.name is None]
    assert "make install" in install.code and [b.name for b in BLOCKS if b.name] == RUN


def test_tokenizer_block(page):
    """The saved tokenizer loads with AutoTokenizer and gives the ids the page shows."""
    out = page.run("gs-tokenizer")
    (block,) = [b for b in BLOCKS if b.name == "gs-tokenizer"]
    shown = block.code.strip().splitlines()[-1].lstrip("# ")
    assert out.strip().splitlines()[-1] == shown == "[0, 22611, 20809, 3790, 6497, 4, 2]"
    assert (page.checkout / "output" / "roberta-base" / "tokenizer.json").is_file()


def test_checkpoints_block(page):
    page.run("gs-checkpoints")
    output = page.checkout / "output"
    from transformers import AutoTokenizer

    for name in ("tiny-luke", "tiny-mluke", "tiny-luke-japanese"):
        config = json.loads((output / name / "config.json").read_text())
        assert config["model_type"] == "luke" and config["hidden_size"] == 32, name
    mluke = AutoTokenizer.from_pretrained(str(output / "tiny-mluke"))
    assert type(mluke.backend_tokenizer.model).__name__ == "Unigram"  # XLM-R's sentencepiece, not a BPE
    assert mluke.convert_ids_to_tokens([0, 1, 2, 3]) == ["<s>", "<pad>", "</s>", "<unk>"]  # fairseq's ids
    entities = json.loads((output / "tiny-mluke" / "entity_vocab.json").read_text())
    assert entities["en:Tokyo"] == entities["ja:東京都"]  # one id for a title in several languages
    assert (output / "tiny-luke-japanese" / "entity_vocab.json").is_file()


def test_ner_block(page):
    out = page.run("gs-ner")
    ner = page.checkout / "output" / "first-ner"
    metrics = json.loads((ner / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"'f1': {round(metrics['f1'], 3)}" in out  # the figure the page prints
    (prediction,) = [json.loads(line) for line in (ner / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."] and len(prediction["tags"]) == 5


def test_entity_disambiguation_block(page):
    out = page.run("gs-ed")
    ed = page.checkout / "output" / "ed"
    metrics = json.loads((ed / "held_out.json").read_text())
    assert metrics["mentions"] > 0 and 0.0 <= metrics["accuracy"] <= 1.0
    assert 0.0 < metrics["prior_accuracy"] <= metrics["candidate_recall"] <= 1.0  # the prior is among the candidates
    assert f"'accuracy': {metrics['accuracy']}" in out
