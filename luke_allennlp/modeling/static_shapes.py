"""
Running a model under `torch.compile` with few, static shapes: each batch's words and entities are padded (masked
out) to the next multiple of a word / entity bucket size (at least one), so that e.g. 8 word lengths cover every input
up to 512 subwords, each compiled once, and CUDA graphs (`mode="reduce-overhead"`) can replay a step. The batch size
and the mention length stay dynamic; a batch of one row and mentions of one position are padded to two, since dynamo
specialises sizes 0 and 1 (each would compile every bucket again; in training the copied row draws its own dropout,
so such a step averages two dropout samples of its row). (Symbolic sequence lengths are avoided on purpose:
inductor in torch 2.13 fails on the backward pass of attention dropout over the concatenated word + entity sequence.)

The compiled graphs are one per (word bucket, entity bucket or none, training, gradient mode) seen: a new one is
logged, and a warning says when dynamo compiles again for a bucket already compiled or, past its recompile limit,
runs a new bucket uncompiled. `LukeEncoder.compile` compiles the encoder so; `LukeForPretraining.compile` the whole
model, heads and loss included, for batches whose masked positions come at a static size.
"""

import logging
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from luke_allennlp.modeling.inputs import ENTITIES, MENTIONS, PADDING, ROWS, WORDS, LukeInputs, padding_value

logger = logging.getLogger(__name__)

__all__ = ["ENTITIES", "MENTIONS", "ROWS", "WORDS", "StaticShapes", "runs_compiled"]

# A head's input: a tensor (or None), how it is padded (`kind`: one of WORDS, ENTITIES, MENTIONS, ROWS) and with what.
HeadInput = Tuple[Optional[torch.Tensor], str, Any]


class StaticShapes:
    """
    `function` compiled (`torch.compile(function, dynamic=False, **compile_kwargs)`) and called on inputs padded to
    the buckets: the encoder's `LukeInputs` (each field as `PADDING` declares) and a head's tensors, each given with
    how it is padded (`HeadInput`). Returns `function`'s output on the padded inputs and the sizes before padding,
    `(batch, words, entities or None)`, to which the caller cuts the output back.

    # Parameters

    function : `Callable`
        Takes the padded `LukeInputs`, then the head's padded tensors (or None), positionally.
    what : `str`
        What is compiled, for the log ("the encoder").
    word_multiple, entity_multiple : `int`
        The bucket sizes.
    pad_token_id : `int`
        The word ids' padding.
    """

    def __init__(
        self,
        function: Callable,
        what: str,
        word_multiple: int,
        entity_multiple: int,
        pad_token_id: int,
        **compile_kwargs: Any,
    ) -> None:
        import torch._dynamo

        # One graph per bucket: allow more than dynamo's default of 8 per function (8 word x 8 entity buckets, and
        # none, in training and in evaluation, fit).
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 256)
        self.compiled = torch.compile(function, dynamic=False, **compile_kwargs)
        self.compile_kwargs = compile_kwargs
        self.what = what
        self.word_multiple, self.entity_multiple = word_multiple, entity_multiple
        self.pad_token_id = pad_token_id
        self.buckets: Dict[tuple, int] = {}  # bucket -> the frames dynamo compiled for it

    def with_function(self, function: Callable, what: str) -> "StaticShapes":
        """Another function compiled with the same buckets and settings."""
        return StaticShapes(
            function, what, self.word_multiple, self.entity_multiple, self.pad_token_id, **self.compile_kwargs
        )

    def __call__(
        self, inputs: LukeInputs, head_inputs: Sequence[HeadInput], training: bool
    ) -> Tuple[Any, Tuple[int, int, Optional[int]]]:
        """`function`'s output on the padded inputs, and the sizes before padding; `training`: the module's mode (a
        graph of its own)."""
        batch, num_words, num_entities = inputs.sizes()
        pad_words = _padding(num_words, self.word_multiple)
        pad_entities = 0 if num_entities is None else _padding(num_entities, self.entity_multiple)

        def pad(tensor: Optional[torch.Tensor], kind: str, value: Any) -> Optional[torch.Tensor]:
            if tensor is None:
                return None
            if batch == 1:  # a copy of the row (real tokens: an all-padding row would give NaN attention)
                tensor = torch.cat([tensor, tensor])
            if kind == WORDS:
                tensor = F.pad(tensor, (0, pad_words), value=value)
            elif kind == ENTITIES:
                tensor = F.pad(tensor, (0, pad_entities), value=value)
            elif kind == MENTIONS:
                tensor = F.pad(tensor, (0, max(0, 2 - tensor.size(2)), 0, pad_entities), value=value)
                torch._dynamo.maybe_mark_dynamic(tensor, 2)  # the longest mention of the batch
            torch._dynamo.maybe_mark_dynamic(tensor, 0)
            return tensor

        padded = LukeInputs(
            *(
                pad(tensor, padding.kind, padding_value(padding.value, self.pad_token_id))
                for tensor, padding in zip(inputs, PADDING)
            )
        )
        padded_head: List[Optional[torch.Tensor]] = [pad(*head_input) for head_input in head_inputs]
        entities = None if num_entities is None else num_entities + pad_entities
        bucket = (training, torch.is_grad_enabled(), num_words + pad_words, entities)
        frames = dict(torch._dynamo.utils.counters["frames"])
        out = self.compiled(padded, *padded_head)
        now = torch._dynamo.utils.counters["frames"]
        # Dynamo converts a frame (`total`) where no graph it holds fits, and compiles it (`ok`) unless it gives up
        # (its recompile limit); it converts nothing where one fits, e.g. one compiled for another model instance.
        tried, compiled = now["total"] - frames.get("total", 0), now["ok"] - frames.get("ok", 0)
        self._check(bucket, compiled, tried)
        return out, (batch, num_words, num_entities)

    def _check(self, bucket: tuple, compiled: int, tried: int) -> None:
        """Logs each bucket's compilation (or its reuse of a graph dynamo holds already); warns where dynamo compiles a
        bucket again, or gives up compiling a new one."""
        training, grad, words, entities = bucket
        where = (
            f"{words} words, {entities or 'no'} entities{', training' if training else ''}{'' if grad else ', no grad'}"
        )
        if bucket not in self.buckets:
            self.buckets[bucket] = compiled
            if compiled:
                logger.info("torch.compile: graph %d of %s, for %s", len(self.buckets), self.what, where)
            elif not tried:
                logger.info(
                    "torch.compile: %s reuses a graph compiled before (another instance), for %s", self.what, where
                )
            else:
                logger.warning(
                    "torch.compile: dynamo did not compile %s for %s (recompile limit %d reached?): "
                    "inputs of this size run uncompiled",
                    self.what,
                    where,
                    torch._dynamo.config.recompile_limit,
                )
        elif compiled:
            self.buckets[bucket] += compiled
            logger.warning(
                "torch.compile: %s was compiled again for %s (%d times): an input shape is not bounded by the buckets",
                self.what,
                where,
                self.buckets[bucket],
            )


def runs_compiled(module: torch.nn.Module) -> bool:
    """Whether any part of `module` runs under `torch.compile` by `StaticShapes` (an encoder's or a model's
    `compile`)."""
    return any(isinstance(getattr(m, "_compiled", None), StaticShapes) for m in module.modules())


def _padding(length: int, multiple: int) -> int:
    """What pads `length` to the next multiple of `multiple` (one bucket for an empty sequence)."""
    return -length % multiple + (multiple if length == 0 else 0)
