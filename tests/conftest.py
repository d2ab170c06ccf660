import json
import os

# Nothing in the suite may reach a hub: a missing local file must fail fast instead. Set before
# huggingface_hub is imported, since it reads these once.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from luke_allennlp.testing import shared_data_dir, write_tiny_checkpoint  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


# What a tiny (2-layer) LUKE classifier over entity states alone leaves without gradient: the pooler, and the
# last layer's word queries, which no entity state depends on.
UNUSED_BY_ENTITY_HEADS = {"embedder.luke.pooler.dense.weight", "embedder.luke.pooler.dense.bias"} | {
    f"embedder.luke.encoder.layer.1.attention.self.{q}.{p}" for q in ("query", "w2e_query") for p in ("weight", "bias")
}


def set_config_env(monkeypatch, model_dir: Path, data: Path) -> None:
    """The extVars of the configs in configs/: a checkpoint, and one file for training and validation."""
    monkeypatch.setenv("MODEL_NAME", str(model_dir))
    monkeypatch.setenv("TRAIN_DATA_PATH", str(data))
    monkeypatch.setenv("VALIDATION_DATA_PATH", str(data))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()


@pytest.fixture(scope="session")
def tiny_luke_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-luke"), "luke")


@pytest.fixture(scope="session")
def tiny_roberta_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-roberta"), "roberta")


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-bert"), "bert")


@pytest.fixture(scope="session")
def conll_slice(shared_data, tmp_path_factory) -> Path:
    """The first two documents of CoNLL-2003 eng.testa (29 sentences), written to a temporary file."""
    lines = (shared_data / "conll2003" / "eng.testa").read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("-DOCSTART-")]
    path = tmp_path_factory.mktemp("conll") / "slice.txt"
    path.write_text("\n".join(lines[: starts[2]]) + "\n")
    return path


@pytest.fixture(scope="session")
def open_entity_slice(shared_data, tmp_path_factory) -> Path:
    """The first 40 examples of Open Entity's train.json (paper format), written to a temporary file."""
    examples = json.loads((shared_data / "open_entity" / "train.json").read_text())[:40]
    path = tmp_path_factory.mktemp("open_entity") / "slice.json"
    path.write_text(json.dumps(examples))
    return path


@pytest.fixture(scope="session")
def semeval_slice(shared_data, tmp_path_factory) -> Path:
    """The first 40 examples of SemEval-2010 Task 8's training file, written to a temporary file."""
    lines = (shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT").read_text().splitlines()
    path = tmp_path_factory.mktemp("semeval") / "slice.txt"
    path.write_text("\n".join(lines[: 40 * 4]) + "\n")
    return path


@pytest.fixture(scope="session")
def tacred_train(shared_data) -> Path:
    return shared_data / "tacred_sample" / "train.json"
