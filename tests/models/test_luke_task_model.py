import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from allennlp.training.metrics import CategoricalAccuracy

from luke_allennlp.modeling.inputs import LukeFields, span_position_ids
from luke_allennlp.modeling.static_shapes import ENTITIES, WORDS, Head
from luke_allennlp.models import LukeTaskModel, ReportsMetrics
from luke_allennlp.modules.token_embedders import LukeEmbedder
from luke_allennlp.training.metrics import SpanF1


def stacked_inputs():
    """Two instances of two windows (the second instance's second window is padding), two entities per window."""
    word_ids = torch.tensor([[[0, 31414, 232, 2], [0, 232, 2, 1]], [[0, 100, 2, 1], [1, 1, 1, 1]]])
    word_mask = word_ids != 1
    entity_ids = torch.tensor([[[1, 2], [1, 0]], [[3, 0], [0, 0]]])
    starts = torch.tensor([[[1, 2], [1, 0]], [[1, 0], [0, 0]]])
    ends = torch.tensor([[[2, 2], [1, 0]], [[1, 0], [0, 0]]])
    return word_ids, word_mask, entity_ids, entity_ids != 0, starts, ends


def test_encode_runs_the_nonempty_windows(tiny_luke_dir):
    model = LukeTaskModel(Vocabulary(), LukeEmbedder(str(tiny_luke_dir), entity_vocab="task")).eval()
    word_ids, word_mask, entity_ids, entity_mask, starts, ends = stacked_inputs()
    passes = model.nonempty_rows(word_mask)
    assert [p.tolist() for p in passes] == [[0, 0, 1], [0, 1, 0]]
    fields = LukeFields(
        word_ids,
        word_mask,
        entity_ids=entity_ids,
        entity_start_positions=starts,
        entity_end_positions=ends,
        entity_attention_mask=entity_mask,
    )
    encoded = model.encode(fields, passes)
    for row, (i, w) in enumerate(zip(*passes)):
        expected = model.embedder.luke(
            word_ids[i, w][None],
            attention_mask=word_mask[i, w][None],
            entity_ids=entity_ids[i, w][None],
            entity_position_ids=span_position_ids(starts[i, w][None], ends[i, w][None]),
            entity_attention_mask=entity_mask[i, w][None],
        )
        assert torch.allclose(
            encoded.words[row][word_mask[i, w]], expected.last_hidden_state[0][word_mask[i, w]], atol=1e-5
        )
        assert torch.allclose(
            encoded.entities[row][entity_mask[i, w]], expected.entity_last_hidden_state[0][entity_mask[i, w]], atol=1e-5
        )


def test_a_word_encoder_runs_each_sentence_once_for_its_chunks(tiny_roberta_dir):
    model = LukeTaskModel(Vocabulary(), PretrainedTransformerEmbedder(str(tiny_roberta_dir))).eval()
    word_ids, word_mask, entity_ids, entity_mask, starts, ends = stacked_inputs()
    sentences, sentence_mask = word_ids[:, 0], word_mask[:, 0]  # (batch, words); the entities stay (batch, chunks, n)
    passes = model.nonempty_rows(entity_mask)
    calls = []
    model.embedder.register_forward_hook(lambda module, args, kwargs_out: calls.append(1))
    words, entities = model.encode_with_head(
        LukeFields(sentences, sentence_mask), Head(lambda w, e: (w, e), outputs=(WORDS, ENTITIES)), passes=passes
    )
    assert len(calls) == 1 and entities is None and words.shape[:2] == (len(passes[0]), sentences.size(1))
    assert torch.equal(words, model.embedder(sentences, sentence_mask)[passes[0]])
    with pytest.raises(ValueError, match='entity inputs but the embedder is not "luke"'):
        model.encode(
            LukeFields(
                sentences,
                sentence_mask,
                entity_ids=entity_ids,
                entity_start_positions=starts,
                entity_end_positions=ends,
            )
        )
    with pytest.raises(ValueError, match='feature "entity" needs entity states: use the "luke" embedder'):
        model.require_entity_states('feature "entity"')


def test_metrics_are_reported_as_floats_with_prefixes():
    class TwoMetrics(ReportsMetrics):
        def __init__(self):
            self.metric = {"words_accuracy": CategoricalAccuracy(), "spans": SpanF1()}

    model = TwoMetrics()
    model.metric["words_accuracy"](torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([1, 1]))
    model.metric["spans"]([{(0, 1): "PER"}], [{(0, 1): "PER", (2, 3): "LOC"}])
    assert model.get_metrics(reset=True) == {
        "words_accuracy": 0.5,
        "spans_precision-PER": 1.0,
        "spans_recall-PER": 1.0,
        "spans_f1-PER": 1.0,
        "spans_precision-LOC": 0.0,
        "spans_recall-LOC": 0.0,
        "spans_f1-LOC": 0.0,
        "spans_precision": 1.0,
        "spans_recall": 0.5,
        "spans_f1": pytest.approx(2 / 3),
    }
    assert all(isinstance(v, float) for v in model.get_metrics().values())
