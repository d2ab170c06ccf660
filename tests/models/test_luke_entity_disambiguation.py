import json

import pytest
import torch
from allennlp.data import Batch, Vocabulary

from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader
from luke_allennlp.modeling import LukeForPretraining
from luke_allennlp.modeling.pretraining import IGNORE_INDEX
from luke_allennlp.models.luke_entity_disambiguation import EdInputs, LukeEntityDisambiguation
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder
from tests.conftest import REPO_ROOT, SAME_BATCHES, UNUSED_BY_ENTITY_HEADS, set_config_env
from tests.model_cases import HostArraysModelTestCase

CONFIG = REPO_ROOT / "configs" / "entity_disambiguation" / "aida.jsonnet"


def build_model(model_dir, **kwargs) -> LukeEntityDisambiguation:
    embedder = LukeEmbedder(str(model_dir), entity_vocab="checkpoint")
    return LukeEntityDisambiguation(Vocabulary.empty(), embedder, str(model_dir), **kwargs)


def tensors(ed, count=6, **reader_kwargs):
    ed_reader = LukeEntityDisambiguationReader(
        str(ed["model"]), mention_dictionary=str(ed["dictionary"]), **reader_kwargs
    )
    instances = [i for i, _ in zip(ed_reader.read(str(ed["corpus"])), range(count))]
    return Batch(instances).as_tensor_dict()


class TestLukeEntityDisambiguation(HostArraysModelTestCase):
    # Real CoNLL-2003 documents with two candidates a mention (a mention with one candidate teaches nothing: its
    # softmax is 1 whatever the model), in the benchmarks' format.
    @pytest.fixture(autouse=True)
    def _model(self, ed_conll, monkeypatch):
        set_config_env(monkeypatch, ed_conll["model"], ed_conll["benchmark"])
        self.set_up_model(CONFIG, ed_conll["benchmark"])

    def test_train_save_and_load(self):
        # The frozen entity table and head bias get no gradient and are not checked.
        overrides = {
            "trainer.optimizer.lr": 1e-3,
            "trainer.num_epochs": 1,
            "dataset_reader.max_seq_length": 128,
            "validation_dataset_reader.max_seq_length": 128,
            **SAME_BATCHES,
        }
        self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=UNUSED_BY_ENTITY_HEADS, overrides=json.dumps(overrides)
        )

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, candidate head (and in training the loss) are one graph per bucket. Global
        inference (one pass per resolved mention, fewer rows each time): loss, scores and gradients those of the eager
        model. A training step without dropout, the same mentions masked: the same loss and gradients."""
        batches = [self.instances[:3], self.instances[3:4]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "scores")
        assert all(" of the encoder and LukeEntityDisambiguation._score_candidates, for " in g for g in graphs)
        compiled = self.compiled_model(monkeypatch)
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        losses = []
        for model in (self.model, compiled):
            model.train()
            for module in model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.p = 0.0
                if hasattr(module, "dropout_prob"):  # (the attention's, in its fused kernel)
                    module.dropout_prob = 0.0
            model.zero_grad()
            torch.manual_seed(0)  # (which mentions are masked)
            loss = model(**batch.as_tensor_dict())["loss"]
            loss.backward()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], abs=1e-5) and losses[0] > 0
        grads = dict(compiled.named_parameters())
        for name, param in self.model.named_parameters():
            if param.grad is not None:
                torch.testing.assert_close(grads[name].grad, param.grad, rtol=0, atol=1e-5)

    def test_model_batch_norm_verification(self):
        """allennlp's check flags exactly the entity head's dense -> gelu -> layer norm (BERT's design), since it
        cannot see the functional gelu; nothing else."""
        from allennlp.confidence_checks.normalization_bias_verification import NormalizationBiasVerification

        verification = NormalizationBiasVerification(self.model)
        verification.check(inputs=self.dataset.as_tensor_dict())
        assert [pair[:2] for pair in verification.detected_pairs] == [
            ("entity_predictions.transform.dense", "entity_predictions.transform.LayerNorm")
        ]

    def test_outputs_and_metrics(self):
        self.model.eval()
        output = self.model.make_output_human_readable(self.model(**Batch(self.instances[:8]).as_tensor_dict()))
        for mentions, instance in zip(output["mentions"], self.instances[:8]):
            for mention, meta in zip(mentions, instance["metadata"]["mentions"]):
                if meta["candidates"]:
                    assert mention["entity"] in meta["candidates"] and 0 < mention["score"] <= 1
                else:
                    assert "entity" not in mention and mention["score"] == 0.0
                assert mention["text"] == meta["text"] and mention["gold"] == meta["gold"]
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {
            "accuracy",
            "prior_accuracy",
            "candidate_recall",
            "mentions",
            "mentions_without_candidates",
            "gold_outside_vocabulary",
        }
        mentions = [m for i in self.instances[:8] for m in i["metadata"]["mentions"]]
        assert metrics["mentions"] == len(mentions)
        assert metrics["mentions_without_candidates"] == sum(1 for m in mentions if not m["candidates"]) > 0
        vocabulary = {
            t for i in self.instances for m in i["metadata"]["mentions"] for t in m["candidates"]
        }  # (the checkpoint's)
        assert metrics["gold_outside_vocabulary"] == sum(1 for m in mentions if m["gold"] not in vocabulary) > 0
        assert metrics["candidate_recall"] == sum(1 for m in mentions if m["gold"] in m["candidates"]) / len(mentions)
        assert metrics["prior_accuracy"] == metrics["candidate_recall"]  # the gold is always the first candidate here


def test_candidate_logits_are_the_entity_heads(ed_wikipedia):
    """Scoring the candidates alone equals the full masked-entity head (LukeForMaskedLM's) at the candidates."""
    model = build_model(ed_wikipedia["model"]).eval()
    reference = LukeForPretraining.from_pretrained(str(ed_wikipedia["model"])).eval()
    batch = tensors(ed_wikipedia)
    candidate_ids = batch["candidate_ids"]
    mask = candidate_ids.ge(0)
    entity_ids = torch.full_like(batch["gold_entity_ids"], model.mask_entity_id).masked_fill(
        ~batch["entity_attention_mask"], 0
    )
    with torch.no_grad():
        inputs = EdInputs(
            batch["word_ids"],
            batch["word_attention_mask"],
            batch["entity_position_ids"],
            batch["entity_attention_mask"],
            candidate_ids,
            mask,
        )
        ours = model._candidate_logits(entity_ids, inputs)
        full = reference(
            batch["word_ids"],
            attention_mask=batch["word_attention_mask"],
            entity_ids=entity_ids,
            entity_position_ids=batch["entity_position_ids"],
            entity_attention_mask=batch["entity_attention_mask"],
        ).entity_logits
    expected = full.gather(-1, candidate_ids.clamp(min=0))
    assert torch.allclose(ours[mask], expected[mask], atol=1e-5)
    assert (ours[~mask] == torch.finfo(torch.float32).min).all()
    assert torch.equal(
        model.entity_predictions.transform.dense.weight, reference.entity_predictions.transform.dense.weight
    )


class StubScores:
    """Candidate logits that depend on the entity inputs: mention 0 ("Paris") is a city or a person; mention 1
    ("Hilton") a hotel or a person. Alone, Hilton is more likely the hotel; once Paris is known to be the person
    Paris Hilton, the person wins."""

    PARIS_CITY, PARIS_PERSON, HILTON_HOTEL, HILTON_PERSON = 10, 11, 12, 13

    def __call__(self, entity_ids, inputs):
        logits = torch.zeros(entity_ids.size(0), 2, 2)
        logits[:, 0] = torch.tensor([0.0, 2.0])  # Paris: p(person) = 0.88, the most confident
        person = entity_ids[:, 0].eq(self.PARIS_PERSON)
        logits[:, 1] = torch.where(
            person[:, None], torch.tensor([0.0, 3.0]), torch.tensor([1.0, 0.0])
        )  # p(hotel) = 0.73
        return logits


@pytest.mark.parametrize("inference, expected", [("local", [1, 0]), ("global", [1, 1])])
def test_the_confidence_order_changes_the_answer(ed_wikipedia, inference, expected):
    model = build_model(ed_wikipedia["model"], inference=inference).eval()
    stub = StubScores()
    model._candidate_logits = stub
    candidate_ids = torch.tensor([[[stub.PARIS_CITY, stub.PARIS_PERSON], [stub.HILTON_HOTEL, stub.HILTON_PERSON]]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    words = torch.zeros(1, 3, dtype=torch.long)  # (the stub reads only the entity inputs)
    positions = torch.tensor([[[1], [2]]])
    predicted, scores, _ = model._infer(
        EdInputs(words, words.bool(), positions, mask, candidate_ids, candidate_ids.ge(0))
    )
    assert predicted.tolist() == [expected]
    # Global: Paris first (0.88 > 0.73), then Hilton given Paris Hilton (p = 0.95); local: both from [MASK] inputs.
    second = torch.tensor([0.0, 3.0]).softmax(0)[1] if inference == "global" else torch.tensor([1.0, 0.0]).softmax(0)[0]
    assert scores[0].tolist() == pytest.approx([torch.tensor([0.0, 2.0]).softmax(0)[1].item(), second.item()])


def test_global_inference_is_the_papers_procedure_instance_by_instance(ed_wikipedia):
    """Batched global inference equals the plain loop: resolve the most confident unresolved mention, put its entity
    in, rerun; on a random model, where confidence orders differ between instances."""
    torch.manual_seed(1)
    model = build_model(ed_wikipedia["model"]).eval()
    with torch.no_grad():  # a random head, so that mentions with 2 candidates get unequal scores
        model.entity_predictions.bias.normal_(0, 1.0)
    batch = tensors(ed_wikipedia, count=5)
    keys = ("word_ids", "word_attention_mask", "entity_position_ids", "entity_attention_mask", "candidate_ids")
    with torch.no_grad():
        inputs = EdInputs(*(batch[k] for k in keys), batch["candidate_ids"].ge(0))
        predicted, scores, _ = model._infer(inputs)
        for row in range(5):
            one = inputs.rows(torch.tensor([row]))
            count = int(one.entity_attention_mask.sum())
            one = EdInputs(one.word_ids, one.word_attention_mask, *(x[:, :count] for x in one[2:]))
            entity_ids = torch.full((1, count), model.mask_entity_id)
            resolved = {}
            while len(resolved) < sum(one.candidate_mask[0].any(-1).tolist()):
                probabilities = model._candidate_logits(entity_ids, one).softmax(-1)[0]
                best, index = probabilities.max(-1)
                best[[i for i in resolved] + [i for i in range(count) if not one.candidate_mask[0, i].any()]] = -1
                target = int(best.argmax())
                resolved[target] = (int(index[target]), float(best[target]))
                entity_ids[0, target] = one.candidate_ids[0, target, index[target]]
            assert [resolved.get(i, (-1, 0.0))[0] for i in range(count)] == predicted[row, :count].tolist()
            assert [resolved.get(i, (-1, 0.0))[1] for i in range(count)] == pytest.approx(
                scores[row, :count].tolist(), abs=1e-5
            )


def test_training_masks_ninety_percent_and_predicts_the_masked(ed_wikipedia):
    model = build_model(ed_wikipedia["model"])
    gold = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12, 13, 14], [5, 6, -1, 7, -2, 0, 0, 0, 0, 0]])
    attention = torch.tensor([[True] * 10, [True] * 5 + [False] * 5])
    candidate_ids = gold.clamp(min=3).unsqueeze(-1).repeat(1, 1, 2)
    candidate_ids[..., 1] = 3
    candidate_ids[0, 9] = torch.tensor([3, 4])  # the last gold entity is no candidate
    torch.manual_seed(0)
    entity_ids, labels = model._training_inputs(gold, candidate_ids, candidate_ids.ge(0), attention)
    masked = entity_ids.eq(model.mask_entity_id)
    # Instance 1: round(0.9 * 10) = 9 of 10 masked, the other gets its gold entity. Instance 2: 3 known golds,
    # round(2.7) = 3 masked; unknown golds (-1, -2) are always [MASK], padding [PAD] (0).
    assert masked[0].sum() == 9 and entity_ids[0][~masked[0]].tolist() == gold[0][~masked[0]].tolist()
    assert masked[1].tolist() == [True] * 5 + [False] * 5 and entity_ids[1, 5:].tolist() == [0] * 5
    # Labels: the gold's candidate index for masked mentions whose gold is a candidate; -100 elsewhere.
    expected = torch.full_like(gold, IGNORE_INDEX)
    expected[masked & gold.ge(5)] = 0
    expected[0, 9] = IGNORE_INDEX
    assert labels.tolist() == expected.tolist()


def test_a_checkpoint_without_the_entity_head(tiny_luke_dir, tmp_path, caplog):
    import shutil

    model_dir = tmp_path / "luke"
    shutil.copytree(tiny_luke_dir, model_dir)
    (model_dir / "entity_vocab.json").write_text(json.dumps({"[PAD]": 0, "[UNK]": 1, "[MASK]": 2}))
    model = build_model(model_dir)
    assert "has no entity prediction head" in caplog.text
    assert not model.embedder.luke.entity_embeddings.entity_embeddings.weight.requires_grad
    assert (
        not model.entity_predictions.bias.requires_grad
        and model.entity_predictions.transform.dense.weight.requires_grad
    )
    with pytest.raises(ValueError, match="keep the checkpoint's"):
        LukeEntityDisambiguation(Vocabulary.empty(), LukeEmbedder(str(model_dir), entity_vocab="task"), str(model_dir))


def test_an_archived_model_does_not_read_the_head_its_weights_replace(tiny_luke_dir, tmp_path, caplog):
    """An archive's weights hold the trained head: loading it read the head from the bundled checkpoint again and
    warned, naming a temporary directory, that a checkpoint without one leaves it randomly initialised."""
    import shutil

    from luke_allennlp.archival import bundle_config

    model_dir = tmp_path / "luke"
    shutil.copytree(tiny_luke_dir, model_dir)
    (model_dir / "entity_vocab.json").write_text(json.dumps({"[PAD]": 0, "[UNK]": 1, "[MASK]": 2}))
    config = {
        "model": {
            "type": "luke_entity_disambiguation",
            "model_name": str(model_dir),
            "embedder": {"type": "luke", "model_name": str(model_dir)},
        }
    }
    (tmp_path / "archive").mkdir()
    bundled = bundle_config(config, tmp_path / "archive")["model"]
    assert bundled["load_weights"] is False and bundled["embedder"]["load_weights"] is False
    assert not any(p.suffix == ".safetensors" for p in (tmp_path / "archive").rglob("*"))  # the archive's replace them
    caplog.clear()
    root = tmp_path / "archive"
    embedder = LukeEmbedder(
        str(root / bundled["embedder"]["model_name"]), entity_vocab="checkpoint", load_weights=False
    )
    LukeEntityDisambiguation(Vocabulary.empty(), embedder, str(root / bundled["model_name"]), load_weights=False)
    assert "entity prediction head" not in caplog.text


def test_starts_from_a_transformers_luke_for_masked_lm(tmp_path):
    """A `transformers.LukeForMaskedLM` directory (the layout of LUKE's released checkpoints): our candidate scores
    are its masked-entity logits at the candidates."""
    import transformers

    from luke_allennlp.testing import ROBERTA_VOCAB_SIZE, TINY, save_roberta_tokenizer

    torch.manual_seed(0)
    config = transformers.LukeConfig(
        vocab_size=ROBERTA_VOCAB_SIZE,
        entity_vocab_size=12,
        entity_emb_size=16,
        type_vocab_size=1,
        max_position_embeddings=514,
        layer_norm_eps=1e-5,
        **TINY,
    )
    theirs = transformers.LukeForMaskedLM(config).eval()
    with torch.no_grad():
        theirs.entity_predictions.bias.normal_()
    theirs.save_pretrained(tmp_path / "luke")
    save_roberta_tokenizer(tmp_path / "luke")
    titles = ["[PAD]", "[UNK]", "[MASK]"] + [f"E{i}" for i in range(9)]
    (tmp_path / "luke" / "entity_vocab.json").write_text(json.dumps({t: i for i, t in enumerate(titles)}))
    ours = build_model(tmp_path / "luke").eval()
    word_ids = torch.tensor([[0, 713, 16, 10, 1296, 2]])
    positions = torch.tensor([[[1, 2], [4, -1]]])
    entity_ids = torch.tensor([[2, 5]])  # a [MASK] and a known entity
    candidate_ids = torch.tensor([[[3, 7, 9], [4, 5, -1]]])
    with torch.no_grad():
        expected = theirs(word_ids, entity_ids=entity_ids, entity_position_ids=positions).entity_logits
        inputs = EdInputs(
            word_ids,
            torch.ones_like(word_ids),
            positions,
            torch.ones(1, 2, dtype=torch.bool),
            candidate_ids,
            candidate_ids.ge(0),
        )
        got = ours._candidate_logits(entity_ids, inputs)
    mask = candidate_ids.ge(0)
    assert torch.allclose(got[mask], expected.gather(-1, candidate_ids.clamp(min=0))[mask], atol=1e-4)


def test_linking_metrics_from_detected_mentions(ed_wikipedia):
    """With `mention_detection`, validation also scores end-to-end linking: a link is right if span and entity are."""
    model = build_model(ed_wikipedia["model"], inference="local").eval()
    ed_reader = LukeEntityDisambiguationReader(
        str(ed_wikipedia["model"]),
        mention_dictionary=str(ed_wikipedia["dictionary"]),
        mention_detection=True,
        max_seq_length=128,
    )
    instances = list(ed_reader.read(str(ed_wikipedia["benchmark"])))
    right = predicted = gold = 0
    with torch.no_grad():
        for start in range(0, len(instances), 16):
            batch = instances[start : start + 16]
            output = model.make_output_human_readable(model(**Batch(batch).as_tensor_dict()))
            for mentions, instance in zip(output["mentions"], batch):
                links = {(m["start"], m["end"], m["entity"]) for m in mentions if "entity" in m}
                golds = {tuple(link) for link in instance["metadata"]["gold_links"]}
                right, predicted, gold = right + len(links & golds), predicted + len(links), gold + len(golds)
    metrics = model.get_metrics()
    assert gold == 299 and 0 < right < predicted
    assert (metrics["linking_precision"], metrics["linking_recall"]) == (
        pytest.approx(right / predicted),
        pytest.approx(right / gold),
    )
    assert metrics["mentions"] == 0  # no gold mentions to disambiguate: only links


def test_learns_beyond_the_prior(tmp_path, shared_data):
    """
    Learning, on real text: the named entities of six CoNLL-2003 documents, each with four candidates "Name (PER)",
    "Name (ORG)", "Name (LOC)", "Name (MISC)" of equal p(e|m), the gold one of its annotated type. The prior picks
    the first (PER); a tiny random LUKE trained on these documents (entity table included) must do far better on them.
    """
    from luke_allennlp.data.tags import tags_to_spans
    from luke_allennlp.resources.entity_disambiguation import EdDocument, EdMention, read_benchmark, write_benchmark
    from luke_allennlp.testing import write_tiny_luke_mlm

    documents: list = []
    for block in (shared_data / "conll2003" / "eng.testa").read_text().split("-DOCSTART- -X- O O")[1:7]:
        words, mentions = [], []
        for sentence in block.strip().split("\n\n"):
            rows = [line.split() for line in sentence.splitlines()]
            spans = tags_to_spans([row[-1] for row in rows], "iob1")
            mentions += [(len(words) + start, len(words) + end, kind) for (start, end), kind in spans.items()]
            words += [row[0] for row in rows]
        offsets = [0]
        for word in words:
            offsets.append(offsets[-1] + len(word) + 1)
        names = [(offsets[start], offsets[end] - 1, " ".join(words[start:end]), kind) for start, end, kind in mentions]
        documents.append(
            EdDocument(
                f"doc {len(documents)}",
                " ".join(words),
                [
                    EdMention(
                        s, e, f"{name} ({kind})", [(f"{name} ({t})", 0.25) for t in ("PER", "ORG", "LOC", "MISC")]
                    )
                    for s, e, name, kind in names
                ],
            )
        )
    write_benchmark(documents, tmp_path / "typed.csv")
    titles = sorted(
        {t for d in read_benchmark(tmp_path / "typed.csv") for m in d.mentions for t, _ in m.candidates}
    )  # normalised
    model_dir = write_tiny_luke_mlm(tmp_path / "model", ["[PAD]", "[UNK]", "[MASK]"] + titles)
    instances = list(
        LukeEntityDisambiguationReader(str(model_dir), max_seq_length=64).read(str(tmp_path / "typed.csv"))
    )
    torch.manual_seed(0)
    model = build_model(model_dir, inference="local", freeze_entity_embeddings=False)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    model.train()
    for _ in range(4):
        for start in range(0, len(instances), 8):
            loss = model(**Batch(instances[start : start + 8]).as_tensor_dict())["loss"]
            optimizer.zero_grad(), loss.backward(), optimizer.step()
    model.get_metrics(reset=True)
    model.eval()
    with torch.no_grad():
        for start in range(0, len(instances), 16):
            model(**Batch(instances[start : start + 16]).as_tensor_dict())
    metrics = model.get_metrics(reset=True)
    assert metrics["mentions"] > 150 and metrics["candidate_recall"] == 1.0, metrics
    assert metrics["prior_accuracy"] < 0.4 and metrics["accuracy"] > metrics["prior_accuracy"] + 0.3, metrics
