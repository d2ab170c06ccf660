"""The entity disambiguation configs: the released fine-tuning settings, and one epoch of each on tiny data (the
Wikipedia config with its held-out pages, then the predictor from its archive on raw text)."""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT, set_config_env
from tests.training.host_syncs import AUDIT

CONFIGS = sorted((REPO_ROOT / "configs" / "entity_disambiguation").glob("*.jsonnet"))
# The tests' data for each config: a corpus of two real Wikipedia articles, or CoNLL-2003 documents in the benchmark format.
DATA = {"wikipedia": ("ed_wikipedia", "corpus"), "aida": ("ed_conll", "benchmark")}
# Each training step is audited: no step without a report makes the host wait for a GPU (tests/training/host_syncs.py).
TINY = {
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 8,
    "dataset_reader.max_seq_length": 128,
    "validation_dataset_reader.max_seq_length": 128,
    **AUDIT,
}


def test_every_config_is_covered():
    assert sorted(p.stem for p in CONFIGS) == sorted(DATA)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_trains(config, tmp_path, monkeypatch, request):
    data = request.getfixturevalue(DATA[config.stem][0])
    set_config_env(monkeypatch, data["model"], data[DATA[config.stem][1]])
    monkeypatch.setenv("MENTION_DICTIONARY", str(request.getfixturevalue("ed_wikipedia")["dictionary"]))
    params = Params.from_file(str(config)).as_dict()
    trainer, model = params["trainer"], params["model"]
    optimizer = trainer["optimizer"]
    # examples/entity_disambiguation/train.py of the released code
    assert (
        optimizer["type"],
        optimizer["lr"],
        optimizer["eps"],
        optimizer["weight_decay"],
        optimizer["betas"],
        optimizer["correct_bias"],
    ) == ("huggingface_adamw", 2e-5, 1e-6, 0.01, [0.9, 0.999], False)
    assert (params["data_loader"]["batch_sampler"]["batch_size"], trainer["num_epochs"], trainer["grad_norm"]) == (
        16,
        2,
        1.0,
    )
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup_ratio", "warmup_ratio": 0.1}
    assert (model["masked_entity_prob"], model["inference"], model["freeze_entity_embeddings"]) == (0.9, "global", True)
    assert model["embedder"]["entity_vocab"] == "checkpoint" and trainer["validation_metric"] == "+accuracy"
    for reader in (params["dataset_reader"], params["validation_dataset_reader"]):
        assert (
            reader["max_seq_length"],
            reader["max_entities"],
            reader["max_mention_length"],
            reader["max_candidates"],
        ) == (512, 128, 30, 30)
    if config.stem == "wikipedia":
        assert (params["dataset_reader"]["pages"], params["validation_dataset_reader"]["pages"]) == (
            "train",
            "held_out",
        )
    train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(TINY))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_loss"] > 0 and metrics["validation_mentions"] > 0
    assert 0 < metrics["validation_accuracy"] <= metrics["validation_candidate_recall"] <= 1
    if config.stem == "wikipedia":  # the held-out page, "Anarchism": its 667 links
        assert metrics["validation_mentions"] == 667 and metrics["validation_candidate_recall"] == 1.0
        predictor = Predictor.from_archive(load_archive(str(tmp_path / "run" / "model.tar.gz")))
        mentions = predictor.predict_json({"text": "Proudhon wrote on syndicalism."})["mentions"]
        assert [(m["text"], m["entity"]) for m in mentions][0] == ("Proudhon", "Pierre-Joseph Proudhon")
        assert mentions[1]["entity"] in ("Syndicalism", "Anarcho-syndicalism")
