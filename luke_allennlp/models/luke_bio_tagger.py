from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules import ConditionalRandomField
from allennlp.modules.conditional_random_field import allowed_transitions
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import sequence_cross_entropy_with_logits

from luke_allennlp.data.tags import entity_output, spans_to_iob2, tags_to_spans
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import WORD_SLOTS, Head, Like, Padding
from luke_allennlp.models.luke_task_model import LukeTaskModel
from luke_allennlp.training.metrics import SpanF1


def sentences(metadata: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """What the output keeps of each sentence: `id`, `words`, `gold_spans`, `word_separator` (how entity texts join
    words)."""
    return {
        "id": [m["id"] for m in metadata],
        "words": [m["words"] for m in metadata],
        "gold_spans": [m["gold_spans"] for m in metadata],
        "word_separator": [m.get("word_separator", " ") for m in metadata],
    }


@Model.register("luke_bio_tagger")
class LukeBioTagger(LukeTaskModel):
    """
    The classic NER baseline beside `luke_span_ner`: each word's first-subword state is classified into BIO
    tags (IOB2), optionally with a CRF (Viterbi decoding, transitions restricted to valid BIO sequences).

    It reads the same `luke_conll2003` instances: the word positions are those of the one-word spans, the
    gold tags come from the gold spans, and the tag set is `O` plus `B-X`/`I-X` for each type X of the
    reader's label vocabulary. Entity inputs are ignored (a `luke` embedder runs on the words alone).

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A word encoder: `pretrained_transformer`, or `luke` (without entities).
    use_crf : `bool`, optional (default = `True`)
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
        The reader's span label namespace, from which the types are taken.
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_span_ner"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        use_crf: bool = True,
        dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.metric = SpanF1()
        types = sorted(t for t in vocab.get_token_to_index_vocabulary(label_namespace) if t != "O")
        self.tags = ["O"] + [f"{prefix}-{kind}" for kind in types for prefix in ("B", "I")]
        self.tag_index = {tag: i for i, tag in enumerate(self.tags)}
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(embedder.get_output_dim(), len(self.tags))
        self.crf = (
            ConditionalRandomField(len(self.tags), allowed_transitions("BIO", dict(enumerate(self.tags))))
            if use_crf
            else None
        )
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_start_positions: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        labels: Optional[torch.LongTensor] = None,
        **entity_fields: torch.Tensor,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask : (batch, subwords)
        entity_start_positions : (batch, chunks, entities): the first subword of each span (the one-word spans
            give each word's)
        labels : the span labels; their presence says gold spans are available in `metadata`
        """
        index, mask, kept = self.word_spans(metadata, word_ids.device)  # (batch, words) each; kept: words per row
        positions = entity_start_positions.flatten(1).gather(1, index) * mask  # (batch, words); 0 past the end
        gold = None if labels is None else self.gold_tags(metadata, kept, mask)
        # Encoder, head and loss: one compiled graph where the embedder is compiled.
        fields = LukeFields(word_ids, word_attention_mask)
        logits, loss = self.encode_with_head(fields, self.head, positions, mask, gold)  # (batch, words, tags)
        output: Dict[str, Any] = {"logits": logits, "mask": mask, **sentences(metadata)}
        if loss is not None:
            output["loss"] = loss
            self.defer_metric(output)
        return output

    def word_spans(
        self, metadata: List[Dict[str, Any]], device: torch.device
    ) -> Tuple[torch.Tensor, torch.Tensor, List[int]]:
        """Each word's one-word span (spans in word order), found on the host, and the mask of the words: one copy to
        the device, no sync; and how many words each sentence has."""
        one_word = [np.flatnonzero(m["spans"][:, 1] - m["spans"][:, 0] == 1) for m in metadata]
        kept = [len(spans) for spans in one_word]
        index = np.zeros((len(metadata), max(kept, default=0)), dtype=np.int64)
        for b, spans in enumerate(one_word):
            index[b, : len(spans)] = spans
        index_mask = np.stack([index, np.arange(index.shape[1]) < np.array(kept)[:, None]])
        index, mask = self.host_to_device(index_mask, device).unbind(0)
        return index, mask.bool(), kept

    def gold_tags(self, metadata: List[Dict[str, Any]], kept: List[int], mask: torch.Tensor) -> torch.Tensor:
        """(batch, words) each word's gold tag index, from the gold spans (0 past the sentence's words)."""
        gold_tags = np.zeros(mask.shape, dtype=np.int64)
        for b, meta in enumerate(metadata):
            tags = spans_to_iob2(meta["gold_spans"], len(meta["words"]))[: kept[b]]
            gold_tags[b, : len(tags)] = [self.tag_index.get(t, 0) for t in tags]
        return self.host_to_device(gold_tags, mask.device)

    @property
    def head(self) -> Head:
        """`tag` on each sentence's words (first subwords, mask and gold tags: padded to the padded subwords, as
        words the mask leaves out), its logits cut to the words."""
        return Head(
            self.tag, (Padding(WORD_SLOTS, 0), Padding(WORD_SLOTS, False), Padding(WORD_SLOTS, 0)), (Like(0), None)
        )

    def tag(
        self,
        word_states: torch.Tensor,
        entity_states: Optional[torch.Tensor],
        positions: torch.Tensor,
        mask: torch.Tensor,
        gold: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The head: each word's tag logits (batch, words, tags) from the state of its first subword (`positions`),
        and with `gold` the loss: the CRF's negative log-likelihood per sentence, or the tags' cross-entropy."""
        states = word_states.gather(1, positions[..., None].expand(-1, -1, word_states.size(-1)))
        logits = self.classifier(self.dropout(states))  # (batch, words, tags)
        if gold is None:
            return logits, None
        if self.crf is not None:
            return logits, -self.crf(logits, gold, mask) / logits.size(0)  # (the batch: a copied row counts once)
        return logits, sequence_cross_entropy_with_logits(logits, gold, mask)

    def defer_metric(self, output: Dict[str, Any]) -> None:
        """The metric of the batch's tags, decoded when the metric is read (a report), not now: the step does not wait
        for the logits."""
        held, mask, golds = output["logits"].detach(), output["mask"], output["gold_spans"]
        self.metric.defer(
            lambda: self.metric([tags_to_spans(tags, "iob2") for tags in self._decode(held, mask)], golds)
        )

    def _decode(self, logits: torch.Tensor, mask: torch.Tensor) -> List[List[str]]:
        if self.crf is not None:
            paths = [path for path, _ in self.crf.viterbi_tags(logits, mask)]
        else:
            paths = [row[:n] for row, n in zip(logits.argmax(-1).tolist(), mask.sum(-1).tolist())]
        return [[self.tags[i] for i in path] for path in paths]

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per sentence, as `luke_span_ner`: `words`, `tags` (IOB2, predicted; none for the words the model did
        not see), `truncated`, `entities` ({start, end, text, type, score: the mean probability of the span's tags})
        and, with gold labels, `gold_tags`."""
        probabilities = F.softmax(output_dict["logits"].detach().float(), dim=-1).cpu()  # read span by span
        result: Dict[str, List] = {
            "id": output_dict["id"],
            "words": output_dict["words"],
            "tags": [],
            "entities": [],
            "truncated": [],
        }
        with_gold = all(gold is not None for gold in output_dict["gold_spans"])
        if with_gold:
            result["gold_tags"] = []
        for b, tags in enumerate(self._decode(output_dict["logits"], output_dict["mask"])):
            words = output_dict["words"][b]
            spans = tags_to_spans(tags, "iob2")
            entities = []
            for (start, end), kind in sorted(spans.items()):
                ids = [self.tag_index[tags[i]] for i in range(start, end)]
                score = float(probabilities[b, torch.arange(start, end), ids].mean())
                entities.append(entity_output(words, start, end, kind, score, output_dict["word_separator"][b]))
            result["tags"].append(tags)  # none for the words cut by max_seq_length
            result["truncated"].append(len(words) - len(tags))
            result["entities"].append(entities)
            if with_gold:
                result["gold_tags"].append(spans_to_iob2(output_dict["gold_spans"][b], len(words)))
        return result
