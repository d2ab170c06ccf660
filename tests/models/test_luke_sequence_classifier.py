import json
import sys

import pytest
import torch
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT
from tests.jglue import JAPANESE_CHECKPOINT, write_marc_ja, write_slice
from tests.model_cases import ConfigModelTestCase, train_archive

CONFIGS = REPO_ROOT / "configs" / "jglue"
# A sequence head reads the pooler over <s>: nothing leaves an entity-side parameter with a gradient (no entities).
NO_ENTITIES = {
    "embedder.luke.entity_embeddings.entity_embeddings.weight",
    "embedder.luke.entity_embeddings.entity_embedding_dense.weight",
    "embedder.luke.entity_embeddings.token_type_embeddings.weight",
    "embedder.luke.entity_embeddings.LayerNorm.weight",
    "embedder.luke.entity_embeddings.LayerNorm.bias",
    "embedder.luke.entity_embeddings.position_embeddings.weight",
} | {
    f"embedder.luke.encoder.layer.{i}.attention.self.{q}.{p}"
    for i in range(2)
    for q in ("w2e_query", "e2w_query", "e2e_query")
    for p in ("weight", "bias")
}


class TestJstsRegression(ConfigModelTestCase):
    CONFIG, CHECKPOINT = CONFIGS / "jsts.jsonnet", JAPANESE_CHECKPOINT

    def data(self, request, tmp_path):
        return write_slice("jsts_train", tmp_path, 12)

    def test_train_save_and_load(self):
        self.train_save_and_load(NO_ENTITIES, {"trainer.num_epochs": 1})

    def test_head_is_transformers_and_loss_is_mse(self):
        model = self.model.eval()
        assert self.model.classifier.out_features == 1 and self.model.dropout.p == 0.1  # hidden_dropout_prob
        tensors = self.dataset.as_tensor_dict()
        output = model(**tensors)
        with torch.no_grad():
            pooled = model.embedder.luke(tensors["word_ids"], tensors["word_attention_mask"]).pooler_output
        expected = model.classifier(pooled)[:, 0]
        assert torch.allclose(output["logits"][:, 0], expected, atol=1e-6)
        assert output["loss"].item() == pytest.approx(((expected - tensors["label"]) ** 2).mean().item(), rel=1e-5)
        readable = model.make_output_human_readable(output)
        assert set(readable) == {"id", "score"} and readable["score"] == pytest.approx(expected.tolist())
        assert set(model.get_metrics(reset=True)) == {"pearson", "spearman"}


class TestJnliClassification(ConfigModelTestCase):
    CONFIG, CHECKPOINT = CONFIGS / "jnli.jsonnet", JAPANESE_CHECKPOINT

    def data(self, request, tmp_path):
        return write_slice("jnli_valid", tmp_path, 12)

    def test_train_save_and_load(self):
        self.train_save_and_load(NO_ENTITIES, {"trainer.num_epochs": 1})

    def test_outputs(self):
        output = self.model.eval()(**self.dataset.as_tensor_dict())
        readable = self.model.make_output_human_readable(output)
        labels = set(self.vocab.get_token_to_index_vocabulary("labels"))
        assert labels <= {"entailment", "contradiction", "neutral"} and set(readable) == {
            "id",
            "label",
            "probabilities",
        }
        for label, probabilities in zip(readable["label"], readable["probabilities"]):
            assert set(probabilities) == labels and label == max(probabilities, key=probabilities.get)
        assert set(self.model.get_metrics(reset=True)) == {"accuracy"}

    def test_compiled_embedder_runs_encoder_and_head_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, pooler and classifier are one graph per bucket, a batch of one pair
        included; loss, logits and gradients those of the eager model."""
        batches = [self.instances[:4], self.instances[4:5], self.instances[5:12]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "logits")
        assert all(" of the encoder and LukeSequenceClassifier.pooled_scores, for " in g for g in graphs)


@pytest.fixture(scope="module")
def marc_archive(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("marc")
    return train_archive(
        CONFIGS / "marc_ja.jsonnet",
        request.getfixturevalue(JAPANESE_CHECKPOINT),
        write_marc_ja(directory),
        directory / "run",
        {"data_loader.batch_sampler.batch_size": 4},
    )


def test_predictor_single_sentences(marc_archive):
    predictor = Predictor.from_archive(load_archive(str(marc_archive)))
    result = predictor.predict_json({"sentence": "とても良い商品でした。"})
    assert set(result) == {"id", "label", "probabilities"} and set(result["probabilities"]) == {"positive", "negative"}
    with pytest.raises(ValueError, match='reads single sentences: the input needs "sentence"'):
        predictor.predict_json({"sentence1": "a", "sentence2": "b"})
    inputs = [{"id": "a", "sentence": "最高です。"}, {"id": "b", "sentence": "最悪の品質で、すぐに壊れました。"}]
    for batched, alone in zip(predictor.predict_batch_json(inputs), map(predictor.predict_json, inputs)):
        assert batched["id"] == alone["id"] and batched["probabilities"] == pytest.approx(alone["probabilities"])


def test_predict_command_on_pairs(request, tmp_path, monkeypatch):
    """`allennlp predict` (the command's entry point, in-process) with {"sentence1", "sentence2"} lines and the
    model's default predictor."""
    from allennlp.commands import main

    data = write_slice("jsts_train", tmp_path, 8)
    train_archive(
        CONFIGS / "jsts.jsonnet",
        request.getfixturevalue(JAPANESE_CHECKPOINT),
        data,
        tmp_path / "run",
        {"data_loader.batch_sampler.batch_size": 4},
    )
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(
        '{"id": "p1", "sentence1": "犬が走っている。", "sentence2": "犬が走る。"}\n'
        '{"sentence1": "猫が寝ている。", "sentence2": "車が止まっている。"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "allennlp",
            "predict",
            str(tmp_path / "run" / "model.tar.gz"),
            str(inputs),
            "--output-file",
            str(out),
            "--silent",
        ],
    )
    main()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [set(r) for r in rows] == [{"id", "score"}] * 2 and rows[0]["id"] == "p1"
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    instance = archive.dataset_reader.text_to_instance("犬が走っている。", "犬が走る。")
    batch = Batch([instance])
    batch.index_instances(archive.model.vocab)
    with torch.no_grad():
        score = archive.model.eval()(**batch.as_tensor_dict())["logits"][0, 0].item()
    assert rows[0]["score"] == pytest.approx(score, abs=1e-6)
