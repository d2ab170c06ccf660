from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.data.inputs import InputCounts
from luke_allennlp.data.tags import entity_output, spans_to_iob2
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import ENTITIES, Head, Padding
from luke_allennlp.models.mentions import MentionClassifier
from luke_allennlp.training.metrics import SpanF1

Spans = Dict[Tuple[int, int], str]


def decode_spans(
    spans: np.ndarray, logits: torch.Tensor, labels: List[str], outside: int
) -> List[Tuple[int, int, str, float]]:
    """
    The paper's decoding: drop spans predicted `O`, then take spans by descending logit, skipping any that
    overlaps one already taken. Returns (start, end exclusive, type, probability) sorted by start. Of spans whose
    logits tie, the first in `spans` is taken first. `logits`: (spans, labels).
    """
    return decode_batch([spans], logits[None], labels, outside)[0]


def decode_batch(
    spans: Sequence[np.ndarray], logits: torch.Tensor, labels: List[str], outside: int
) -> List[List[Tuple[int, int, str, float]]]:
    """
    `decode_spans` of each sentence of a batch: `logits` (batch, padded spans, labels), on any device, sentence b's
    spans first in row b. The logits are copied to the host once (one device sync); the best label, its logit and
    its probability are computed there in numpy (torch's CPU operators would start their thread pool, which costs
    milliseconds on a busy machine); each sentence's greedy loop runs over its spans not predicted `O` only (a few of
    its hundreds, once the model has learnt anything), on Python values.
    """
    host = logits.detach().float().cpu().numpy()
    best = host.argmax(-1)  # (batch, spans); the first of tied maxima, as torch's max
    best_logit = np.take_along_axis(host, best[..., None], -1)[..., 0]
    probability = 1.0 / np.exp(host - best_logit[..., None]).sum(-1)  # the softmax at the best label
    decoded = []
    for b, sentence in enumerate(spans):
        n = len(sentence)
        candidates = np.flatnonzero(best[b, :n] != outside)
        chosen: List[Tuple[int, int, str, float]] = []
        if len(candidates):
            order = candidates[np.argsort(-best_logit[b, candidates], kind="stable")]
            taken = bytearray(int(sentence[order, 1].max()))  # 1 for the words of the spans taken
            for (start, end), label, p in zip(
                sentence[order].tolist(), best[b, order].tolist(), probability[b, order].tolist()
            ):
                if taken.find(1, start, end) < 0:
                    taken[start:end] = b"\x01" * (end - start)
                    chosen.append((start, end, labels[label], p))
        decoded.append(sorted(chosen))
    return decoded


def sentences(metadata: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """What the output keeps of each sentence: `id`, `words`, `spans` ((spans, 2) word start, end exclusive),
    `gold_spans`, `word_separator` (how entity texts join words)."""
    return {
        "id": [meta["id"] for meta in metadata],
        "words": [meta["words"] for meta in metadata],
        "spans": [meta["spans"] for meta in metadata],
        "gold_spans": [meta["gold_spans"] for meta in metadata],
        "word_separator": [meta.get("word_separator", " ") for meta in metadata],
    }


@Model.register("luke_span_ner")
class LukeSpanNer(MentionClassifier):
    """
    Span-based NER (paper §4.3): each candidate span is a `[MASK]` entity; its representation is the
    concatenation of the first word's, the last word's and the entity's final hidden states, followed by a
    linear classifier over the entity types and `O`, trained with cross-entropy.

    Instances come from `luke_conll2003`: one sentence each, its spans in chunks of `max_entities`; each
    chunk is one encoder pass over the sentence's words and that chunk's entities.

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A `luke` embedder (use `entity_vocab: "task"`), or for the word-only baseline any word embedder such as
        `pretrained_transformer` (then `feature` must be `"words"`).
    feature : `str`, optional (default = `"all"`)
        `"all"` (first word, last word, entity), `"words"` (first and last word: the RoBERTa baseline of
        Table 3) or `"entity"`.
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_span_ner"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        feature: str = "all",
        dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.labels = [
            vocab.get_token_from_index(i, label_namespace) for i in range(vocab.get_vocab_size(label_namespace))
        ]
        if "O" not in self.labels:
            raise ValueError(f'the "{label_namespace}" vocabulary has no "O" label')
        self.outside = self.labels.index("O")
        self.build_head(feature, dropout, label_namespace, SpanF1())
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_ids: torch.LongTensor,
        entity_attention_mask: torch.BoolTensor,
        entity_start_positions: torch.LongTensor,
        entity_end_positions: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask : (batch, words)
        entity_ids, entity_attention_mask, entity_start_positions, entity_end_positions : (batch, chunks, entities)
            One `[MASK]` entity per span; start/end are the positions of its first and last subword.
        labels : (batch, chunks, entities), -1 where there is no span
        """
        batch, chunks, per_chunk = entity_ids.shape
        # Spans fill each chunk from the front: the slots no chunk of this batch uses (most of a short sentence's
        # chunk) are cut before encoding, and come back as zero logits. How many, and which chunks hold spans, the
        # host knows from the metadata (the spans of each sentence), so it never waits for the device to count them.
        spans_per_sentence = [len(meta["spans"]) for meta in metadata]
        used = min(per_chunk, max(spans_per_sentence, default=0))
        entity_ids, entity_attention_mask, entity_start_positions, entity_end_positions = (
            t[..., :used] for t in (entity_ids, entity_attention_mask, entity_start_positions, entity_end_positions)
        )
        counts = InputCounts.of(metadata)
        passes = self.nonempty_rows(entity_attention_mask, sum(c.passes for c in counts))  # non-empty (sentence, chunk)
        starts, ends = self.select(entity_start_positions, passes), self.select(entity_end_positions, passes)
        gold = None if labels is None else self.select(labels[..., :used], passes)
        # Encoder, head and loss: one compiled graph where the embedder is compiled. (A word-only encoder's states do
        # not depend on the chunk: it encodes each sentence once.)
        logits, loss = self.encode_mentions_with_head(
            LukeFields.of(locals()),
            starts,
            ends,
            gold,
            passes=passes,
            longest_mention=max(c.longest_mention for c in counts),
            lengths=self.pass_lengths(counts, spans_per_sentence, per_chunk),
        )  # (passes, entities, labels)
        # Padding slots score 0, as the slots no pass uses (whatever the encoder gave their padded states: it skips
        # them on the CPU, `pass_lengths`).
        logits = logits * self.select(entity_attention_mask, passes)[..., None]
        span_logits = logits.new_zeros(batch, chunks, per_chunk, len(self.labels))
        span_logits[passes[0], passes[1], :used] = logits
        output = {"span_logits": span_logits.view(batch, chunks * per_chunk, -1), **sentences(metadata)}
        if loss is not None:
            output["loss"] = loss
            self.defer_metric(output)
        return output

    def defer_metric(self, output: Dict[str, Any]) -> None:
        """The metric of the batch's output, decoded on the host when the metric is read (a report), not now: the step
        does not wait for the logits."""
        logits, spans, golds = output["span_logits"].detach(), output["spans"], output["gold_spans"]
        self.metric.defer(
            lambda: self.metric([{(s, e): k for s, e, k, _ in p} for p in self._decode_batch(logits, spans)], golds)
        )

    @staticmethod
    def pass_lengths(
        counts: List[InputCounts], spans_per_sentence: List[int], per_chunk: int
    ) -> Tuple[List[int], List[int]]:
        """Each pass's real subwords and span entities (the reader's counts and spans), in the passes' order: the
        encoder skips the padding on the CPU."""
        words, entities = [], []
        for count, spans in zip(counts, spans_per_sentence):
            for chunk in range(count.passes):
                words.append(int(count.subwords))  # type: ignore[arg-type]
                entities.append(min(per_chunk, spans - chunk * per_chunk))
        return words, entities

    @property
    def head(self) -> Head:
        """`score` on each pass's spans (first and last subwords, gold labels: padded along the entities, the labels
        with -1, which the loss ignores), its logits cut to the entities."""
        return Head(self.score, (Padding(ENTITIES, 0), Padding(ENTITIES, 0), Padding(ENTITIES, -1)), (ENTITIES, None))

    def loss(self, logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.flatten(0, 1), gold.flatten(), ignore_index=-1)  # -1: no span

    def _decode_batch(
        self, span_logits: torch.Tensor, spans: Sequence[np.ndarray]
    ) -> List[List[Tuple[int, int, str, float]]]:
        """Each sentence's (start, end exclusive, type, probability), by `decode_batch`."""
        return decode_batch(spans, span_logits, self.labels, self.outside)

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per sentence: `words`, `tags` (IOB2, predicted: one per word the model saw; none for the words past
        `max_seq_length`), `truncated` (how many those are), `entities` ({start, end (exclusive), text, type, score: the
        softmax probability of the type over the types and `O` for that span}) and, with gold labels, `gold_tags`."""
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
        decoded = self._decode_batch(output_dict["span_logits"], output_dict["spans"])
        for chosen, spans, words, gold, separator in zip(
            decoded,
            output_dict["spans"],
            output_dict["words"],
            output_dict["gold_spans"],
            output_dict["word_separator"],
        ):
            seen = int(spans[:, 1].max()) if len(spans) else 0  # the reader's spans cover the words that fit
            result["tags"].append(spans_to_iob2({(s, e): k for s, e, k, _ in chosen}, seen))
            result["truncated"].append(len(words) - seen)
            result["entities"].append([entity_output(words, s, e, k, p, separator) for s, e, k, p in chosen])
            if with_gold:
                result["gold_tags"].append(spans_to_iob2(gold, len(words)))
        return result
