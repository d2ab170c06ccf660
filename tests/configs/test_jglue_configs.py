"""
Every config in configs/jglue trains a few steps on the real JGLUE files (slices of them; MARC-ja, which is not
distributed, on lines in its documented format) with the tiny Japanese-capable checkpoint, and `allennlp evaluate
--predictions-output-file` writes one line per example whose predictions give the reported metrics when scored
independently (scipy's Pearson / Spearman, accuracy, JGLUE's JSQuAD scoring written out here).
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from allennlp.commands.evaluate import evaluate_from_archive
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from scipy.stats import pearsonr, spearmanr

from tests.conftest import REPO_ROOT, set_config_env
from tests.jglue import JAPANESE_CHECKPOINT, write_slice, write_task_data
from tests.training.host_syncs import AUDIT

CONFIGS = REPO_ROOT / "configs" / "jglue"
# JGLUE's fine-tuning README (configs/lib/jglue.libsonnet): learning rate, batch size, epochs, max seq length.
HYPER_PARAMETERS = {
    "marc_ja": (5e-5, 32, 4, 512),
    "jnli": (5e-5, 32, 4, 128),
    "jsts": (5e-5, 32, 4, 128),
    "jcommonsenseqa": (5e-5, 64, 4, 64),
    "jsquad": (5e-5, 32, 3, 384),
}
# A few steps: 16 training examples, batches of 8, a larger learning rate so that predictions differ.
# Each training step is audited: no step without a report makes the host wait for a GPU (tests/training/host_syncs.py).
TINY = {"trainer.num_epochs": 1, "data_loader.batch_sampler.batch_size": 8, "trainer.optimizer.lr": 1e-3, **AUDIT}


def data_for(name: str, tmp_path: Path):
    """(training file, validation file) for a config."""
    return write_task_data(name, tmp_path)


def gold_of(name: str, path: Path) -> dict:
    if name == "jsquad":
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        return {q["id"]: [a["text"] for a in q["answers"]] for a in data for p in a["paragraphs"] for q in p["qas"]}
    key = {"marc_ja": "review_id", "jcommonsenseqa": "q_id"}.get(name, "sentence_pair_id")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {str(line[key]): line["label"] for line in lines}


def jglue_normalize(text: str) -> str:
    return " ".join(text.lower().rstrip("。").split())


def jglue_f1(prediction: str, gold: str) -> float:
    same = sum((Counter(jglue_normalize(prediction)) & Counter(jglue_normalize(gold))).values())
    if not same:
        return 0.0
    precision, recall = same / len(jglue_normalize(prediction)), same / len(jglue_normalize(gold))
    return 2 * precision * recall / (precision + recall)


def independent_metrics(name: str, rows: list, gold: dict) -> dict:
    if name == "jsts":
        predicted, expected = [r["score"] for r in rows], [gold[r["id"]] for r in rows]
        return {"pearson": pearsonr(predicted, expected)[0], "spearman": spearmanr(predicted, expected)[0]}
    if name == "jsquad":
        em = [max(jglue_normalize(r["answer"]) == jglue_normalize(g) for g in gold[r["id"]]) for r in rows]
        f1 = [max(jglue_f1(r["answer"], g) for g in gold[r["id"]]) for r in rows]
        return {"em": sum(em) / len(rows), "f1": sum(f1) / len(rows)}
    return {"accuracy": sum(r["label"] == gold[r["id"]] for r in rows) / len(rows)}


@pytest.mark.parametrize("name", sorted(HYPER_PARAMETERS))
def test_config_trains_and_evaluates_on_jglue(name, tmp_path, monkeypatch, request):
    config = CONFIGS / f"{name}.jsonnet"
    train, valid = data_for(name, tmp_path)
    set_config_env(monkeypatch, request.getfixturevalue(JAPANESE_CHECKPOINT), train)
    monkeypatch.setenv("VALIDATION_DATA_PATH", str(valid))
    params = Params.from_file(str(config)).as_dict(quiet=True)
    lr, batch_size, epochs, max_seq_length = HYPER_PARAMETERS[name]
    trainer = params["trainer"]
    assert (
        trainer["optimizer"]["lr"],
        params["data_loader"]["batch_sampler"]["batch_size"],
        trainer["num_epochs"],
        params["dataset_reader"]["max_seq_length"],
    ) == (lr, batch_size, epochs, max_seq_length)
    assert trainer["optimizer"]["weight_decay"] == 0.0 and trainer["learning_rate_scheduler"]["warmup_ratio"] == 0.1
    train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(TINY))

    predictions = tmp_path / "predictions.jsonl"
    metrics = evaluate_from_archive(
        str(tmp_path / "run" / "model.tar.gz"), str(valid), predictions_output_file=str(predictions)
    )
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    gold = gold_of(name, valid)
    assert [r["id"] for r in rows] == list(gold)  # one line per example, in the file's order
    expected = independent_metrics(name, rows, gold)
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, abs=1e-9), key
    if name in ("jsts",):
        assert set(rows[0]) == {"id", "score"} and len({r["score"] for r in rows}) > 1
    elif name == "jcommonsenseqa":
        assert set(rows[0]) == {"id", "label", "probabilities"} and len(rows[0]["probabilities"]) == 5
        assert all(r["label"] == max(range(5), key=r["probabilities"].__getitem__) for r in rows)
    elif name != "jsquad":
        assert set(rows[0]) == {"id", "label", "probabilities"}
        assert all(sum(r["probabilities"].values()) == pytest.approx(1.0) for r in rows)


def test_a_lite_checkpoint_works_as_model_name(tmp_path, monkeypatch, tiny_luke_japanese_lite_dir):
    """luke-japanese-base-lite's layout (special entities only, in the lite order): the task entities come from it."""
    data = write_slice("jnli_valid", tmp_path, 16)
    set_config_env(monkeypatch, tiny_luke_japanese_lite_dir, data)
    model = train_model_from_file(str(CONFIGS / "jnli.jsonnet"), str(tmp_path / "run"), overrides=json.dumps(TINY))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert 0.0 <= metrics["validation_accuracy"] <= 1.0 and model.embedder.luke.config.entity_vocab_size == 4


def test_jsts_with_entity_inputs_trains(tmp_path, monkeypatch, request):
    """configs/jglue/jsts_entities.jsonnet (MENTION_DICTIONARY): the reader gives entity inputs, the embedder keeps the
    checkpoint's entity table, and a few steps train and validate; jsts.jsonnet itself has no entity inputs."""
    from tests.jglue import write_mention_dictionary

    mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
    train, valid = data_for("jsts", tmp_path)
    set_config_env(monkeypatch, request.getfixturevalue(JAPANESE_CHECKPOINT), train)
    monkeypatch.setenv("VALIDATION_DATA_PATH", str(valid))
    assert "mention_dictionary" not in Params.from_file(str(CONFIGS / "jsts.jsonnet")).as_dict()["dataset_reader"]
    monkeypatch.setenv("MENTION_DICTIONARY", str(mentions))
    params = Params.from_file(str(CONFIGS / "jsts_entities.jsonnet")).as_dict(quiet=True)
    assert params["dataset_reader"]["mention_dictionary"] == str(mentions)
    assert params["model"]["embedder"]["entity_vocab"] == "checkpoint"
    overrides = {**TINY, "dataset_reader.entity_vocab": str(vocab)}
    model = train_model_from_file(
        str(CONFIGS / "jsts_entities.jsonnet"), str(tmp_path / "run"), overrides=json.dumps(overrides)
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert -1.0 <= metrics["validation_pearson"] <= 1.0
    assert model.embedder.luke.config.entity_vocab_size > 4  # the checkpoint's table, not the task entities
    # evaluation from the archive reads the entity inputs again
    predictions = tmp_path / "predictions.jsonl"
    evaluated = evaluate_from_archive(
        str(tmp_path / "run" / "model.tar.gz"), str(valid), predictions_output_file=str(predictions)
    )
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(gold_of("jsts", valid))
    assert evaluated["pearson"] == pytest.approx(independent_metrics("jsts", rows, gold_of("jsts", valid))["pearson"])
