"""Every config in configs/ parses with the paper's hyper-parameters and trains on tiny data."""
import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from tests.conftest import REPO_ROOT, set_config_env

CONFIGS = sorted(p for p in (REPO_ROOT / "configs").rglob("*.jsonnet"))
# Paper Tables 11/12: (learning rate, batch size, epochs) per task folder.
HYPER_PARAMETERS = {"ner": (1e-5, 8, 5), "entity_typing": (1e-5, 4, 3), "relation_classification": (1e-5, 32, 5)}
# Fixtures of tests/conftest.py, by config name prefix.
DATA = {"conll2003": "conll_slice", "open_entity": "open_entity_slice", "tacred": "tacred_train", "semeval": "semeval_slice"}
TINY = {"trainer.num_epochs": 1, "data_loader.batch_size": 8, "dataset_reader.max_seq_length": 64}


def test_every_config_is_covered():
    assert CONFIGS and all(p.parent.name in HYPER_PARAMETERS for p in CONFIGS)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_config_trains(config, tmp_path, monkeypatch, tiny_luke_dir, tiny_roberta_dir, request):
    model_dir = tiny_roberta_dir if "roberta" in config.name or "bio_crf" in config.name else tiny_luke_dir
    data = request.getfixturevalue(next(v for k, v in DATA.items() if config.name.startswith(k)))
    set_config_env(monkeypatch, model_dir, data)
    params = Params.from_file(str(config))
    lr, batch_size, epochs = HYPER_PARAMETERS[config.parent.name]
    assert params["trainer"]["optimizer"]["lr"] == lr
    assert params["data_loader"]["batch_size"] == batch_size and params["trainer"]["num_epochs"] == epochs
    assert params["trainer"]["learning_rate_scheduler"] == {"type": "linear_with_warmup_ratio", "warmup_ratio": 0.06}
    model = train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(TINY))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert "validation_f1" in metrics and metrics["training_loss"] > 0
    if config.name.startswith("semeval"):
        assert params["trainer"]["validation_metric"] == "+macro_f1"
    assert (tmp_path / "run" / "model.tar.gz").exists() and model is not None
