import json

import pytest
import torch
from allennlp.common import Params

from data_readers.luke_squad import LukeSquadReader
from luke_allennlp.models.luke_squad import best_span
from tests.conftest import REPO_ROOT, SAME_BATCHES, set_config_env
from tests.model_cases import HostArraysModelTestCase

CONFIGS = REPO_ROOT / "configs" / "reading_comprehension"
SMALL = json.dumps(
    {
        **SAME_BATCHES,
        "trainer.num_epochs": 1,
        "data_loader.batch_sampler.batch_size": 16,
        "dataset_reader.max_seq_length": 96,
        "trainer.optimizer.lr": 1e-3,
    }
)
# A bias shared by all positions of a softmax over positions has no gradient (BERT's QA head has it too).
QA_BIAS = {"qa_outputs.bias"}
# With entity inputs, a head over word states leaves the pooler and the last layer's entity queries without gradient.
UNUSED_BY_WORD_HEADS = (
    QA_BIAS
    | {"embedder.luke.pooler.dense.weight", "embedder.luke.pooler.dense.bias"}
    | {
        f"embedder.luke.encoder.layer.1.attention.self.{q}.{p}"
        for q in ("e2w_query", "e2e_query")
        for p in ("weight", "bias")
    }
)
# A LUKE without entity inputs leaves its entity side and pooler without gradient.
ENTITY_SIDE = (
    QA_BIAS
    | {"embedder.luke.pooler.dense.weight", "embedder.luke.pooler.dense.bias"}
    | {
        f"embedder.luke.entity_embeddings.{name}"
        for name in (
            "entity_embedding_dense.weight",
            "position_embeddings.weight",
            "token_type_embeddings.weight",
            "LayerNorm.weight",
            "LayerNorm.bias",
        )
    }
    | {
        f"embedder.luke.encoder.layer.{i}.attention.self.{q}.{p}"
        for i in (0, 1)
        for q in ("w2e_query", "e2w_query", "e2e_query")
        for p in ("weight", "bias")
    }
)


def test_best_span_decodes_across_windows():
    # Two windows over a passage of 6 subwords: window 0 holds subwords 0-3 at input positions 2-5, window 1
    # holds subwords 2-5 at positions 2-5; subwords 0-1 have their most context in window 0, 2-5 in window 1
    # (per max_context).
    passage = torch.tensor([[-1, -1, 0, 1, 2, 3], [-1, -1, 2, 3, 4, 5]])
    max_context = torch.tensor([[0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]], dtype=torch.bool)
    start = torch.tensor([[9.0, 0, 1, 0, 8, 0], [9.0, 0, 0, 0, 0, 2]])  # 9: not passage; 8: start outside max context
    end = torch.tensor([[0.0, 9, 0, 3, 0, 0], [0.0, 0, 0, 0, 0, 1]])
    # Window 0: start subword 0 (1.0) + end subword 1 (3.0) = 4.0; window 1: start 5 (2.0) + end 5 (1.0) = 3.0.
    assert best_span(start, end, passage, max_context) == (0, 1, 4.0)
    # The end must not precede the start, and the answer is at most max_answer_length subwords.
    end[0] = torch.tensor([0.0, 0, 5, 0, 0, 0])  # the best end of window 0 is subword 0: with start 0, length 1
    assert best_span(start, end, passage, max_context, max_answer_length=1) == (0, 0, 6.0)
    # Window 0's best start (subword 1) comes after its best end (subword 0): its best valid pair scores 0, and
    # window 1's (5, 5) scores 3.
    start[0], end[0] = torch.tensor([0.0, 0, -5, 7, -5, -5]), torch.tensor([0.0, 0, 5, -9, -9, -9])
    assert best_span(start, end, passage, max_context) == (5, 5, 3.0)
    assert best_span(start, end, passage, max_context, top_k=1) == (5, 5, 3.0)  # window 0's only pair is invalid
    # No valid pair among the top k anywhere: the best valid pair over all positions.
    one = torch.tensor([[-1, 0, 1, 2]])
    assert best_span(torch.tensor([[0.0, 0, 0, 5]]), torch.tensor([[0.0, 4, 0, -9]]), one, one >= 0, top_k=1) == (
        0,
        0,
        4.0,
    )
    assert best_span(start[:, :2], end[:, :2], passage[:, :2], max_context[:, :2]) is None


class TestLukeSquad(HostArraysModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_luke_dir, squad_slice, monkeypatch):
        set_config_env(monkeypatch, tiny_luke_dir, squad_slice)
        self.set_up_model(CONFIGS / "squad_without_entities.jsonnet", squad_slice)

    def test_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=ENTITY_SIDE, overrides=SMALL)

    def test_one_answer_per_question_from_the_passage(self):
        batch = self.dataset.as_tensor_dict()
        output = self.model(**batch)
        assert output["loss"] > 0 and output["start_logits"].shape == batch["word_ids"].shape
        readable = self.model.make_output_human_readable(output)
        assert len(readable["id"]) == len(self.instances) == 55
        for instance, answer, start, end, score, em, f1 in zip(
            self.instances,
            readable["answer"],
            readable["start"],
            readable["end"],
            readable["score"],
            readable["em"],
            readable["f1"],
        ):
            context = instance["metadata"].metadata["context"]
            assert answer and answer == context[start:end] and isinstance(score, float)
            assert 0 <= em <= f1 <= 1
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"em", "f1"} and metrics["f1"] == pytest.approx(sum(readable["f1"]) / 55)

    def test_bf16_autocast_step(self):
        """Under bf16 autocast (the trainer's default on a GPU) the answer head's output is bf16; the padding mask's
        fill value must fit (the first GPU check failed every SQuAD config here, "value cannot be converted to type
        c10::BFloat16 without overflow")."""
        batch = self.dataset.as_tensor_dict()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            output = self.model(**batch)
        assert output["start_logits"].dtype == torch.float32 and torch.isfinite(output["loss"])
        output["loss"].backward()

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, answer head and loss are one graph per bucket, a batch of one window
        included; loss, start logits and gradients those of the eager model."""
        batches = [self.instances[:6], self.instances[6:7], self.instances[7:16]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "start_logits")
        assert all(" of the encoder and LukeSquad.score, for " in g for g in graphs)


def test_xlnet_trains_saves_and_loads(tiny_xlnet_dir, squad_slice, monkeypatch):
    set_config_env(monkeypatch, tiny_xlnet_dir, squad_slice)
    case = HostArraysModelTestCase()
    case.setup_method()
    try:
        case.set_up_model(CONFIGS / "squad_xlnet.jsonnet", squad_slice)
        # XLNet's mask embedding is for its pretraining only.
        unused = QA_BIAS | {"embedder.transformer_model.mask_emb"}
        case.ensure_model_can_train_save_and_load(case.param_file, gradients_to_ignore=unused, overrides=SMALL)
    finally:
        case.teardown_method()


def test_entity_inputs_train_save_and_load(tiny_luke_squad_dir, squad_slice, squad_mention_dictionary, monkeypatch):
    set_config_env(monkeypatch, tiny_luke_squad_dir, squad_slice)
    monkeypatch.setenv("MENTION_DICTIONARY", str(squad_mention_dictionary))
    case = HostArraysModelTestCase()
    case.setup_method()
    try:
        case.set_up_model(CONFIGS / "squad.jsonnet", squad_slice)
        assert "entity_ids" in case.instances[0].fields
        model, _ = case.ensure_model_can_train_save_and_load(
            case.param_file, gradients_to_ignore=UNUSED_BY_WORD_HEADS, overrides=SMALL
        )
        assert (
            not model.embedder.luke.entity_embeddings.entity_embeddings.weight.requires_grad
        )  # frozen, as in the paper
    finally:
        case.teardown_method()


def test_learns_real_squad_questions(shared_data, tmp_path, monkeypatch):
    """A small LUKE without pretraining, trained on 200 real questions (the first paragraphs of SQuAD dev; there is
    no train set here), lowers its loss and answers those questions far better than before training."""
    from allennlp.commands.train import train_model_from_file
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.models import Model
    from allennlp.training.util import evaluate

    from luke_allennlp.testing import SMALL, write_tiny_checkpoint

    squad = json.loads((shared_data / "squad1.1" / "dev-v1.1.json").read_text())
    paragraphs, questions = [], 0
    for paragraph in squad["data"][0]["paragraphs"]:
        if questions >= 200:
            break
        paragraphs.append(paragraph)
        questions += len(paragraph["qas"])
    data = tmp_path / "questions.json"
    data.write_text(json.dumps({"version": "1.1", "data": [{**squad["data"][0], "paragraphs": paragraphs}]}))
    set_config_env(monkeypatch, write_tiny_checkpoint(tmp_path / "small-luke", "luke", **SMALL), data)
    # A model without pretraining: a larger learning rate, 10% warm-up; no validation pass (evaluated below).
    overrides = {
        "dataset_reader.max_seq_length": 128,
        "trainer.num_epochs": 5,
        "data_loader.batch_sampler.batch_size": 16,
        "trainer.optimizer.lr": 1e-3,
        "trainer.learning_rate_scheduler.warmup_ratio": 0.1,
        "validation_data_path": None,
    }
    config = CONFIGS / "squad_without_entities.jsonnet"
    trained = train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(overrides))
    first, last = (json.loads((tmp_path / "run" / f"metrics_epoch_{e}.json").read_text()) for e in (0, 4))

    untrained = Model.from_params(
        vocab=trained.vocab, params=Params.from_file(str(config), json.dumps(overrides))["model"]
    )
    loader = MultiProcessDataLoader(
        LukeSquadReader(str(tmp_path / "small-luke"), max_seq_length=128), str(data), batch_size=32
    )
    loader.index_with(trained.vocab)
    before, after = evaluate(untrained, loader), evaluate(trained, loader)
    print(
        f"{questions} questions: loss {first['training_loss']:.3f} -> {last['training_loss']:.3f}; "
        f"F1 {before['f1']:.3f} -> {after['f1']:.3f}, EM {before['em']:.3f} -> {after['em']:.3f}"
    )
    assert questions >= 200 and last["training_loss"] < 0.6 * first["training_loss"]
    assert before["f1"] < 0.1 and after["f1"] > before["f1"] + 0.15
