"""
What every model shares, on the model side of the reader-model seam: the metric report (`ReportsMetrics`),
and for the task models an embedder and one way to encode the readers' inputs, stacked or not
(`LukeTaskModel`). A new task is a reader (parse the file into examples, then `luke_allennlp.data.inputs`)
and a `LukeTaskModel` subclass with a head.
"""

from typing import Any, Callable, Dict, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.training.metrics import Metric

from luke_allennlp.modeling.encoder import Lengths, span_position_ids
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder

Passes = Tuple[torch.Tensor, ...]  # index tensors of the stacked rows (windows, chunks) to encode
FEW_ENTITIES = 4  # entities per row up to which the words bound the mention length (see `entity_inputs`)


class ReportsMetrics:
    """
    `get_metrics` for a model whose `metric` is one allennlp `Metric` that returns a dict of values, or a dict of
    name -> `Metric`: a metric's dict is reported with the name as prefix (`{"masked_lm": m}` gives
    `masked_lm_accuracy`, ...), a single value under the name (`{"accuracy": Accuracy()}`). Values
    are Python floats.
    """

    metric: Union[Metric, Dict[str, Metric]]

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self.metric if isinstance(self.metric, dict) else {"": self.metric}
        report: Dict[str, float] = {}
        for prefix, metric in metrics.items():
            values = metric.get_metric(reset)
            if not isinstance(values, dict):
                values = {"": values}
            report.update({"_".join(filter(None, (prefix, name))): float(value) for name, value in values.items()})
        return report


class Encoded(NamedTuple):
    words: torch.Tensor  # (passes, words, hidden)
    entities: Optional[torch.Tensor]  # (passes, entities, hidden); None without entity inputs


class LukeTaskModel(ReportsMetrics, Model):
    """
    A task model: an `embedder` (the `luke` embedder, or a word-only one such as allennlp's
    `pretrained_transformer` for the RoBERTa/BERT/XLNet baselines), a `metric` (which the subclass sets, and
    `get_metrics` reports), and `encode`, which runs the embedder over the readers' inputs.

    Readers may stack several encoder inputs per instance: windows of a long passage, each with its words
    (`(batch, windows, words)`), or chunks of entities over one sentence (`(batch, chunks, entities)` with
    words `(batch, words)`). Models encode only the rows that hold something (`nonempty_rows`), as "passes".

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
    """

    def __init__(self, vocab: Vocabulary, embedder: TokenEmbedder, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self.embedder = embedder

    @property
    def has_entity_states(self) -> bool:
        """Whether the embedder gives entity states (the `luke` embedder); a word-only one does not."""
        return isinstance(self.embedder, LukeEmbedder)

    def require_entity_states(self, what: str) -> None:
        if not self.has_entity_states:
            raise ValueError(f'{what} needs entity states: use the "luke" embedder')

    @staticmethod
    def host_to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
        """A host array on `device` without making the host wait: pinned and copied `non_blocking` to a GPU; copied
        on the CPU too, so that the sync audit tells it from the host array there (as on a GPU)."""
        tensor = torch.from_numpy(np.ascontiguousarray(array))
        if device.type == "cuda":
            return tensor.pin_memory().to(device, non_blocking=True)
        return tensor.to(device, non_blocking=True, copy=True)

    @staticmethod
    def nonempty_rows(mask: torch.Tensor, count: Optional[int] = None) -> Passes:
        """The (instance, window or chunk) indices of the stacked rows whose `mask` (..., positions) has any True.
        `count`: their number, where the caller knows it on the host (else the host waits for the device to count
        them)."""
        rows = mask.any(-1)
        if count is None:
            return rows.nonzero(as_tuple=True)
        return torch.unravel_index(torch.nonzero_static(rows.flatten(), size=count)[:, 0], rows.shape)

    def entity_inputs(
        self,
        entity_ids: torch.Tensor,
        starts: torch.Tensor,
        ends: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        type_ids: Optional[torch.Tensor] = None,
        longest_mention: Optional[int] = None,
        words: Optional[int] = None,
    ) -> Dict[str, Optional[torch.Tensor]]:
        """The `luke` embedder's entity arguments for entities over subwords start..end (inclusive); an entity's
        positions are the first `max_mention_length` of its mention's (the embedder's). `longest_mention` (see
        `span_position_ids`) where the caller knows it; else, for rows of at most `FEW_ENTITIES` entities, the number
        of `words` bounds it (entities x words position ids cost little, and the padding positions add exact zeros);
        else it is read from the device."""
        if longest_mention is None and words is not None and entity_ids.size(-1) <= FEW_ENTITIES:
            longest_mention = words
        positions = span_position_ids(starts, ends, longest_mention, getattr(self.embedder, "max_mention_length", None))
        return dict(
            entity_ids=entity_ids,
            entity_position_ids=positions,
            entity_attention_mask=attention_mask,
            entity_token_type_ids=type_ids,
        )

    @staticmethod
    def select(tensor: torch.Tensor, passes: Optional[Passes]) -> torch.Tensor:
        """The rows of `tensor` (*stacked, positions) that `passes` encode (the leading indices it has)."""
        return tensor if passes is None else tensor[passes[: tensor.dim() - 1]]

    def encode(
        self,
        word_ids: torch.Tensor,
        word_attention_mask: torch.Tensor,
        word_type_ids: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.Tensor] = None,
        entity_start_positions: Optional[torch.Tensor] = None,
        entity_end_positions: Optional[torch.Tensor] = None,
        entity_attention_mask: Optional[torch.Tensor] = None,
        entity_type_ids: Optional[torch.Tensor] = None,
        passes: Optional[Passes] = None,
        longest_mention: Optional[int] = None,
    ) -> Encoded:
        """
        Word states and, given entity inputs, the states of entities over subwords start..end (inclusive) of the
        words. `passes` selects the stacked rows to encode (each tensor is indexed by as many of its indices
        as it has stacked dimensions); `None` encodes every row of (batch, words) inputs. Entity inputs need
        the `luke` embedder; without them, a word encoder that the passes would repeat (chunks over one
        sentence) runs once per sentence. `longest_mention`: see `span_position_ids`.
        """
        words, entities, repeat = self._embedder_inputs(
            word_ids,
            word_attention_mask,
            word_type_ids,
            entity_ids,
            entity_start_positions,
            entity_end_positions,
            entity_attention_mask,
            entity_type_ids,
            passes,
            longest_mention,
        )
        return self._run_embedder(words, entities, repeat)

    def encode_with_head(
        self,
        head: Callable[..., Any],
        head_inputs: Sequence[Tuple[Optional[torch.Tensor], str, Any]],
        word_ids: torch.Tensor,
        word_attention_mask: torch.Tensor,
        word_type_ids: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.Tensor] = None,
        entity_start_positions: Optional[torch.Tensor] = None,
        entity_end_positions: Optional[torch.Tensor] = None,
        entity_attention_mask: Optional[torch.Tensor] = None,
        entity_type_ids: Optional[torch.Tensor] = None,
        passes: Optional[Passes] = None,
        longest_mention: Optional[int] = None,
        lengths: Optional[Lengths] = None,
    ) -> Tuple[Any, Tuple[int, int, Optional[int]]]:
        """
        `head(word_states, entity_states, *head tensors)` on `encode`'s states of the inputs (`encode`'s
        arguments), and the sizes `(rows, words, entities or None)` of what was encoded. `lengths`: each encoded
        row's real words and entities, known on the host, for a head that reads no padding position (the `luke`
        embedder then computes the real tokens alone on the CPU: `LukeEncoder.forward`). `head_inputs`: the head's
        tensors (rows as encoded) as `(tensor or None, kind, padding value)` (`luke_allennlp.modeling.static_shapes`;
        a padding value that the head's loss ignores). Where the `luke` embedder is compiled, encoder, head and loss
        are one compiled graph per bucket (`LukeEncoder.forward_with_head`): the head's outputs then hold the
        bucket's padding, which the caller cuts to the sizes. (A word-only embedder's head runs eagerly.)
        """
        arguments = (word_type_ids, entity_ids, entity_start_positions, entity_end_positions, entity_attention_mask)
        words, entities, repeat = self._embedder_inputs(
            word_ids, word_attention_mask, *arguments, entity_type_ids, passes, longest_mention
        )
        if entities is None or repeat is not None:
            word_states, entity_states = self._run_embedder(words, entities, repeat)
            sizes = (*word_states.shape[:2], None if entity_states is None else entity_states.size(1))
            return head(word_states, entity_states, *(t for t, _, _ in head_inputs)), sizes
        return self.embedder.encode_with_head(head, head_inputs, **words, **entities, lengths=lengths)

    def _run_embedder(
        self,
        words: Dict[str, torch.Tensor],
        entities: Optional[Dict[str, Optional[torch.Tensor]]],
        repeat: Optional[Passes],
    ) -> Encoded:
        """The embedder on `_embedder_inputs`' arguments, the word states of sentences encoded once repeated for
        their passes (`repeat`: the sentence of each pass)."""
        if entities is not None:
            out = self.embedder.encode(**words, **entities)
            word_states, entity_states = out.last_hidden_state, out.entity_last_hidden_state
        else:
            word_states, entity_states = self.embedder(**words), None  # (rows, words, hidden)
        if repeat is not None:  # (sentences, words, hidden) -> (passes, words, hidden)
            word_states = word_states[repeat]
        return Encoded(word_states, entity_states)

    def _embedder_inputs(
        self,
        word_ids: torch.Tensor,
        word_attention_mask: torch.Tensor,
        word_type_ids: Optional[torch.Tensor],
        entity_ids: Optional[torch.Tensor],
        entity_start_positions: Optional[torch.Tensor],
        entity_end_positions: Optional[torch.Tensor],
        entity_attention_mask: Optional[torch.Tensor],
        entity_type_ids: Optional[torch.Tensor],
        passes: Optional[Passes],
        longest_mention: Optional[int],
    ) -> Tuple[Dict[str, torch.Tensor], Optional[Dict[str, Optional[torch.Tensor]]], Optional[Passes]]:
        """`encode`'s arguments of the embedder: the word inputs of the rows to encode, the entity inputs (None for
        a word-only embedder; empty without entity inputs), and where the words are encoded once per sentence for
        passes that would repeat them (chunks over one sentence, without entities), each pass's sentence."""
        with_entities = entity_ids is not None
        if with_entities and not self.has_entity_states:
            raise ValueError('the reader gives entity inputs but the embedder is not "luke"')
        repeat = None
        if not with_entities and passes is not None and word_ids.dim() - 1 < len(passes):
            repeat = passes[: word_ids.dim() - 1]
        rows = None if repeat is not None else passes
        words = dict(token_ids=self.select(word_ids, rows), mask=self.select(word_attention_mask, rows))
        if word_type_ids is not None:
            words["type_ids"] = self.select(word_type_ids, rows)
        if not self.has_entity_states:
            return words, None, repeat
        entities: Dict[str, Optional[torch.Tensor]] = {}
        if with_entities:
            optional = [None if t is None else self.select(t, rows) for t in (entity_attention_mask, entity_type_ids)]
            entities = self.entity_inputs(
                self.select(entity_ids, rows),  # type: ignore[arg-type]
                self.select(entity_start_positions, rows),  # type: ignore[arg-type]
                self.select(entity_end_positions, rows),  # type: ignore[arg-type]
                *optional,
                longest_mention=longest_mention,
                words=word_ids.size(-1),
            )
        return words, entities, repeat
