"""
What every model shares, on the model side of the reader-model seam: the metric report (`ReportsMetrics`),
and for the task models an embedder and one way to encode the readers' inputs, stacked or not
(`LukeTaskModel`). A new task is a reader (parse the file into examples, then `luke_allennlp.data.inputs`)
and a `LukeTaskModel` subclass with a head.
"""

from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

import numpy as np
import torch
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.training.metrics import Metric

from luke_allennlp.modeling.inputs import Lengths, LukeFields, LukeInputs
from luke_allennlp.modeling.static_shapes import Head
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

    @staticmethod
    def select(tensor: torch.Tensor, passes: Optional[Passes]) -> torch.Tensor:
        """The rows of `tensor` (*stacked, positions) that `passes` encode (the leading indices it has)."""
        return tensor if passes is None else tensor[passes[: tensor.dim() - 1]]

    def encode(
        self, fields: LukeFields, passes: Optional[Passes] = None, longest_mention: Optional[int] = None
    ) -> Encoded:
        """
        Word states and, given entity inputs, the states of entities over subwords start..end (inclusive) of the
        words. `passes` selects the stacked rows to encode (`LukeFields.select`); `None` encodes every row of
        (batch, words) inputs. Entity inputs need the `luke` embedder; without them, a word encoder that the passes
        would repeat (chunks over one sentence) runs once per sentence. `longest_mention`: see `span_position_ids`.
        """
        return self._states(*self.luke_inputs(fields, passes, longest_mention))

    def _states(self, inputs: LukeInputs, repeat: Optional[Passes]) -> Encoded:
        """The embedder's states of `luke_inputs`, the word states of sentences encoded once repeated for their
        passes (`repeat`: the sentence of each pass)."""
        if self.has_entity_states:
            out = self.embedder.encode(inputs)
            word_states, entity_states = out.last_hidden_state, out.entity_last_hidden_state
        else:
            word_states, entity_states = self._encode_words(inputs), None  # (rows, words, hidden)
        if repeat is not None:  # (sentences, words, hidden) -> (passes, words, hidden)
            word_states = word_states[repeat]
        return Encoded(word_states, entity_states)

    def encode_with_head(
        self,
        fields: LukeFields,
        head: Head,
        *tensors: Optional[torch.Tensor],
        passes: Optional[Passes] = None,
        longest_mention: Optional[int] = None,
        lengths: Optional[Lengths] = None,
    ) -> Any:
        """
        The `head`'s outputs on `encode`'s states of the fields (`encode`'s arguments) and the head's `tensors` (rows
        as encoded). Through the `luke` embedder's runner (`static_shapes.Runner`): where it is compiled, encoder,
        head and loss are one compiled graph per bucket, the outputs cut back to the sizes of what was encoded.
        `lengths`: each encoded row's real words and entities, known on the host, for a head that reads no padding
        position (the `luke` embedder then computes the real tokens alone on the CPU: `LukeEncoder.forward`). (A
        word-only embedder's head runs eagerly.)
        """
        inputs, repeat = self.luke_inputs(fields, passes, longest_mention)
        if self.has_entity_states and repeat is None:
            return self.embedder.runner(inputs, head, *tensors, lengths=lengths)
        word_states, entity_states = self._states(inputs, repeat)
        return head.function(word_states, entity_states, *tensors)

    def luke_inputs(
        self, fields: LukeFields, passes: Optional[Passes], longest_mention: Optional[int]
    ) -> Tuple[LukeInputs, Optional[Passes]]:
        """The encoder's inputs of the rows to encode, and where the words are encoded once per sentence for passes
        that would repeat them (chunks over one sentence, without entities), each pass's sentence. An entity's
        positions are the first `position_cap` of its mention's (the embedder's, in subwords). `longest_mention` (see
        `span_position_ids`) where the caller knows it; else, for rows of at most `FEW_ENTITIES` entities, the number
        of words bounds it (entities x words position ids cost little, and the padding positions add exact zeros);
        else it is read from the device."""
        if fields.entity_ids is not None:
            if not self.has_entity_states:
                raise ValueError('the reader gives entity inputs but the embedder is not "luke"')
            if longest_mention is None and fields.entity_ids.size(-1) <= FEW_ENTITIES:
                longest_mention = fields.word_ids.size(-1)
        repeat = None
        if fields.entity_ids is None and passes is not None and fields.word_ids.dim() - 1 < len(passes):
            repeat = passes[: fields.word_ids.dim() - 1]
        rows = fields.select(None if repeat is not None else passes)
        # (entity inputs need the `luke` embedder: its cap on an entity's positions, in subwords)
        cap = self.embedder.position_cap if isinstance(self.embedder, LukeEmbedder) else None
        return rows.luke_inputs(longest_mention, cap), repeat

    def _encode_words(self, inputs: LukeInputs) -> torch.Tensor:
        """A word-only embedder's states (an allennlp `TokenEmbedder`'s arguments) of the word inputs."""
        words = dict(token_ids=inputs.input_ids, mask=inputs.attention_mask)
        if inputs.token_type_ids is not None:
            words["type_ids"] = inputs.token_type_ids
        return self.embedder(**words)
