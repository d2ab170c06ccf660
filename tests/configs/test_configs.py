"""Every config in configs/ parses with the paper's hyper-parameters and trains on tiny data."""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from tests.conftest import REPO_ROOT, set_config_env
from tests.training.host_syncs import audit

# Pretraining, entity disambiguation and JGLUE configs have their own smoke tests (tests/configs/test_pretraining_configs.py,
# tests/configs/test_entity_disambiguation_configs.py, tests/configs/test_jglue_configs.py); search spaces (`*_search`,
# for `allennlp tune`) theirs (tests/experiments/test_search_space.py).
CONFIGS = sorted(
    p
    for p in (REPO_ROOT / "configs").rglob("*.jsonnet")
    if p.parent.name not in ("pretraining", "entity_disambiguation", "jglue") and not p.stem.endswith("_search")
)
# Paper Tables 11/12: (learning rate, batch size, epochs) per task folder, or per config name prefix.
HYPER_PARAMETERS = {
    "ner": (1e-5, 8, 5),
    "entity_typing": (1e-5, 4, 3),
    "relation_classification": (1e-5, 32, 5),
    "squad": (15e-6, 48, 2),
    "record": (1e-5, 32, 2),
}
# mLUKE's recipes (the original repository's; see each config): per step 2 x 16 and 4 x 8 accumulated.
MLUKE_HYPER_PARAMETERS = {"squad_mluke.jsonnet": (2e-5, 2, 2), "kbp37_mluke.jsonnet": (1e-5, 4, 5)}
# Fixtures of tests/conftest.py, by config name prefix.
DATA = {
    "conll2003": "conll_slice",
    "conll_multilingual": "german_conll_sample",
    "open_entity": "open_entity_slice",
    "tacred": "tacred_train",
    "semeval": "semeval_slice",
    "kbp37": "kbp37_sample",
    "squad": "squad_slice",
    "record": "record_sample",
}
# The tiny checkpoint each config trains from, by the first of these words in its name (LUKE otherwise).
MODELS = [
    ("multilingual", "tiny_mluke_dir"),
    ("roberta", "tiny_roberta_dir"),
    ("bio_crf", "tiny_roberta_dir"),
    ("bert", "tiny_bert_dir"),
    ("xlnet", "tiny_xlnet_dir"),
    ("squad", "tiny_luke_squad_dir"),
]


@pytest.fixture(scope="module")
def german_conll_sample():
    """Seven German sentences of our own in the CoNLL-2003 German layout (word lemma POS chunk NER, IOB1)."""
    return REPO_ROOT / "tests" / "fixtures" / "data" / "conll2003_german_sample.txt"


TINY = {"trainer.num_epochs": 1, "data_loader.batch_sampler.batch_size": 8, "dataset_reader.max_seq_length": 64}
# Each training step is audited: no step without a report makes the host wait for a GPU (tests/training/host_syncs.py),
# but for these files' syncs, by config name prefix: the word-only baselines' transformers and allennlp code reads the
# device (transformers' attention-mask shortcut, allennlp's type-id check; XLNet's own).
LIBRARY_SYNCS = ("masking_utils.py", "pretrained_transformer_embedder.py")
KNOWN_SYNCS = {
    "conll2003_bio_crf": ("masking_utils.py",),
    "squad_xlnet": ("pretrained_transformer_embedder.py", "modeling_xlnet.py"),
    "squad_roberta": LIBRARY_SYNCS,
    "squad_bert": LIBRARY_SYNCS,
}


def known_syncs(config) -> tuple:
    known = next((v for k, v in KNOWN_SYNCS.items() if config.stem.startswith(k)), ())
    return known or (("masking_utils.py",) if config.stem.endswith("roberta") else ())


def hyper_parameters(config):
    if config.name in MLUKE_HYPER_PARAMETERS:
        return MLUKE_HYPER_PARAMETERS[config.name]
    if config.parent.name in HYPER_PARAMETERS:
        return HYPER_PARAMETERS[config.parent.name]
    return next(v for k, v in HYPER_PARAMETERS.items() if config.name.startswith(k))


def test_every_config_is_covered():
    assert CONFIGS and all(hyper_parameters(p) for p in CONFIGS)
    assert all(any(p.name.startswith(k) for k in DATA) for p in CONFIGS)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_config_trains(config, tmp_path, monkeypatch, request):
    model_dir = request.getfixturevalue(next((v for k, v in MODELS if k in config.name), "tiny_luke_dir"))
    data = request.getfixturevalue(next(v for k, v in DATA.items() if config.name.startswith(k)))
    set_config_env(monkeypatch, model_dir, data)
    if config.name.startswith("squad"):  # the configs with entity inputs read a mention dictionary
        monkeypatch.setenv("MENTION_DICTIONARY", str(request.getfixturevalue("squad_mention_dictionary")))
    params = Params.from_file(str(config))
    lr, batch_size, epochs = hyper_parameters(config)
    assert params["trainer"]["optimizer"]["lr"] == lr
    loader, trainer = params["data_loader"], params["trainer"]
    keys = ["entity_attention_mask", "word_ids"] if config.parent.name == "ner" else ["word_ids"]  # spans, then words
    assert loader["batch_sampler"].as_dict() == {"type": "luke_bucket", "batch_size": batch_size, "sorting_keys": keys}
    assert (
        trainer["num_epochs"] == epochs
        and trainer["type"] == "luke_gradient_descent"
        and trainer["precision"] == "auto"
    )
    assert params["trainer"]["learning_rate_scheduler"] == {"type": "linear_with_warmup_ratio", "warmup_ratio": 0.06}
    overrides = {**TINY, **audit(known_syncs(config))}
    model = train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(overrides))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert "validation_f1" in metrics and metrics["training_loss"] > 0
    if config.name == "kbp37_mluke.jsonnet":  # the mLUKE recipe keeps the model by micro F1 (RELX reports it)
        assert params["trainer"]["validation_metric"] == "+f1"
    elif config.name.startswith(("semeval", "kbp37")):
        assert params["trainer"]["validation_metric"] == "+macro_f1"
    assert (tmp_path / "run" / "model.tar.gz").exists() and model is not None
