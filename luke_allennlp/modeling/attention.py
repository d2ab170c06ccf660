"""
Entity-aware self-attention (paper §3.2): the query matrix depends on the (query type, key type) pair — `query`
(word to word), `w2e_query`, `e2w_query`, `e2e_query` — keys and values are shared. Two exact formulations, chosen
by device:

- **widened** (GPUs, `torch.compile`, autocast): one `scaled_dot_product_attention` call per layer. Each token's
  query is the per-head concatenation [query for word keys ; query for entity keys] (2 x head_dim), word keys are
  [k ; 0] and entity keys [0 ; k], so every dot product picks the right query half. On the GPU the fused kernels
  take it whole (1.28-1.45x transformers' four score blocks, `benchmarks/RESULTS.md`).
- **blocks** (the CPU, eagerly): the scores of queries against word keys and against entity keys are two matrix
  products written into one score matrix (no widened or zero-padded operands, which cost the CPU twice the
  arithmetic and its fused kernel, which needs equal query and value widths), then the softmax in place, dropout
  drawn in cache-sized chunks (`modeling.dropout`), and a backward pass written out (`_BlockAttention`) that keeps
  the probabilities and the dropped probabilities (8 bytes a score; 4 without dropout) where autograd would keep
  three float copies. Where an example has few entities, the words' queries for entity keys are not computed: their
  scores are the word states times `w2e_query`'s weight folded into the entity keys,
  `x (W_h^T k_h) + b_h . k_h` for each head h, a (hidden, heads x entities) matrix per example instead of a
  (hidden, hidden) projection of every word (`_folded_scores`; it pays below about 40 entities in 128 words, 57 in
  512 at base size, and saves a thirteenth of the words' matrix arithmetic at one or two entities).

Hidden states are laid out by type, `(batch * words + batch * entities, hidden)`: each type's rows are one
contiguous matrix, so their projections are single `addmm`s, and the position-wise layers see one matrix. The
projection weights are used fused without copying them (`modeling.fused_linears`): stored as `w2e_query`, `query`,
`key`, `value`, `e2w_query`, `e2e_query` back to back, the word rows take the first four as one (4 x hidden, hidden)
matrix (or, with the scores folded, the three after `w2e_query`) and the entity rows the last four.
"""

import math
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from luke_allennlp.modeling.configuration import LukeConfig
from luke_allennlp.modeling.dropout import keep
from luke_allennlp.modeling.fused_linears import autocast_enabled, by_type, fuse, fused
from luke_allennlp.modeling.packed_linear import linear, packing_applies


class Shape(NamedTuple):
    """The sizes of a batch laid out by type: its rows are the words of every example, then their entities. Padded:
    `batch * words` word rows and `batch * entities` entity rows. Packed (`word_lengths` and `entity_lengths` given,
    the CPU's formulation only): the real tokens alone, example by example, `word_lengths[b]` words and
    `entity_lengths[b]` entities of example b (each a prefix of its padded row), padding neither computed nor
    attended to."""

    batch: int
    words: int  # per example, padded
    entities: int  # per example, padded; 0 without entity inputs
    word_lengths: Optional[Tuple[int, ...]] = None
    entity_lengths: Optional[Tuple[int, ...]] = None

    @property
    def packed(self) -> bool:
        return self.word_lengths is not None

    @property
    def word_rows(self) -> int:
        return sum(self.word_lengths) if self.word_lengths is not None else self.batch * self.words

    def groups(self) -> List[Tuple["Shape", int, int]]:
        """What the block formulation attends over at once, with its first word row and first entity row: the
        whole padded batch, or each packed example."""
        if self.word_lengths is None:
            return [(self, 0, 0)]
        entity_lengths = self.entity_lengths or (0,) * self.batch
        groups, word_row, entity_row = [], 0, 0
        for words, entities in zip(self.word_lengths, entity_lengths):
            groups.append((Shape(1, words, entities), word_row, entity_row))
            word_row, entity_row = word_row + words, entity_row + entities
        return groups


class AttentionMask:
    """Which keys each example attends to, (batch, words + entities) bool, in the forms the formulations take."""

    def __init__(self, mask: torch.Tensor):
        self.mask = mask
        self._additive: Optional[torch.Tensor] = None

    @property
    def keys(self) -> torch.Tensor:
        return self.mask[:, None, None, :]  # (batch, 1, 1, words + entities): every query sees the same keys

    def additive(self, dtype: torch.dtype) -> torch.Tensor:
        """(batch, 1, words + entities): 0 for a key attended to, the dtype's lowest value for padding (as in
        transformers' LUKE: a row without any key attended to averages them all, where -inf would give NaN)."""
        if self._additive is None:
            bias = torch.zeros(self.mask.shape, dtype=dtype, device=self.mask.device)
            self._additive = bias.masked_fill_(~self.mask, torch.finfo(dtype).min)[:, None, :]
        return self._additive


class _Layout(NamedTuple):
    """Where a block attention's inputs are: the word rows' and entity rows' projection columns of each query (one
    per key type, or one for all), the key and the value."""

    shape: Shape
    heads: int
    head_dim: int
    word_columns: Tuple[int, ...]  # (query columns..., key column, value column); -1: not computed (folded scores)
    entity_columns: Tuple[int, ...]
    scale: float

    @property
    def folded(self) -> bool:
        """Whether the words' scores against entity keys come from `_folded_scores`, not from word queries."""
        return len(self.word_columns) == 4 and self.word_columns[1] < 0


def _heads(rows: torch.Tensor, column: int, batch: int, length: int, heads: int, head_dim: int) -> torch.Tensor:
    """Columns `column:column + hidden` of (batch * length, width) rows as (batch, heads, length, head_dim) (a view)."""
    return rows[:, column : column + heads * head_dim].view(batch, length, heads, head_dim).transpose(1, 2)


def _to_heads(words: torch.Tensor, entities: torch.Tensor, layout: _Layout, which: int, out: torch.Tensor) -> None:
    """Copies column group `which` of the word and entity rows into `out` (batch, heads, words + entities, head_dim)."""
    (batch, num_words, num_entities), heads, head_dim = layout.shape[:3], layout.heads, layout.head_dim
    if layout.word_columns[which] >= 0:
        out[:, :, :num_words].copy_(_heads(words, layout.word_columns[which], batch, num_words, heads, head_dim))
    if num_entities:
        out[:, :, num_words:].copy_(
            _heads(entities, layout.entity_columns[which], batch, num_entities, heads, head_dim)
        )


def _from_heads(x: torch.Tensor, layout: _Layout, words: torch.Tensor, entities: torch.Tensor, which: int) -> None:
    """The inverse of `_to_heads`: `x` (batch * heads, words + entities, head_dim) into column group `which`."""
    (batch, num_words, num_entities), heads, head_dim = layout.shape[:3], layout.heads, layout.head_dim
    x = x.view(batch, heads, num_words + num_entities, head_dim)
    if layout.word_columns[which] >= 0:
        _heads(words, layout.word_columns[which], batch, num_words, heads, head_dim).copy_(x[:, :, :num_words])
    if num_entities:
        _heads(entities, layout.entity_columns[which], batch, num_entities, heads, head_dim).copy_(x[:, :, num_words:])


def _key_blocks(num_queries: int, num_words: int, length: int) -> List[slice]:
    """The key columns each query group scores: word keys and entity keys, or all keys for one query."""
    return [slice(0, num_words), slice(num_words, length)] if num_queries == 2 else [slice(0, length)]


def _attend(
    words: torch.Tensor,
    entities: torch.Tensor,
    bias: Optional[torch.Tensor],
    layout: _Layout,
    dropout_p: float,
    folded: Optional[torch.Tensor],
) -> Tuple[torch.Tensor, tuple]:
    """The block formulation over one group (`Shape.groups`): the context (batch * heads, length, head_dim) and what
    its backward pass needs. `folded`: the words' scores against entity keys, unscaled (batch * heads, words,
    entities), where `layout.folded`."""
    (batch, num_words, num_entities), heads, head_dim = layout.shape[:3], layout.heads, layout.head_dim
    length, groups = num_words + num_entities, len(layout.word_columns) - 2
    q = words.new_empty(groups, batch, heads, length, head_dim)
    k, v = words.new_empty(batch, heads, length, head_dim), words.new_empty(batch, heads, length, head_dim)
    for group in range(groups):
        _to_heads(words, entities, layout, group, q[group])
    _to_heads(words, entities, layout, groups, k)
    _to_heads(words, entities, layout, groups + 1, v)
    q, k, v = q.view(groups, batch * heads, length, head_dim), k.flatten(0, 1), v.flatten(0, 1)

    probs = words.new_empty(batch * heads, length, length)  # scores, then probabilities, in place
    for group, keys in enumerate(_key_blocks(groups, num_words, length)):
        queries = _query_rows(layout, group, num_words)
        out = probs[:, queries, keys]
        torch.baddbmm(out, q[group][:, queries], k[:, keys].transpose(1, 2), beta=0, alpha=layout.scale, out=out)
    if layout.folded and num_entities:
        torch.mul(folded, layout.scale, out=probs[:, :num_words, num_words:])
    if bias is not None:  # (a padded batch: always added, whether any key is padding is on the device)
        probs.view(batch, heads * length, length).add_(bias)
    torch.softmax(probs, -1, out=probs)
    if dropout_p > 0:
        dropped = keep(torch.empty_like(probs), dropout_p, times=probs)  # probabilities kept, others 0 (unscaled)
        context = torch.bmm(dropped, v).mul_(1.0 / (1.0 - dropout_p))
    else:
        dropped = None
        context = torch.bmm(probs, v)  # (batch * heads, length, head_dim)
    return context, (q, k, v, probs, dropped)


def _query_rows(layout: _Layout, group: int, num_words: int) -> slice:
    """The rows of query group `group` computed: all, or the entities' alone where the words' are folded."""
    return slice(num_words, None) if group == 1 and layout.folded else slice(None)


def _attend_backward(
    d_context: torch.Tensor, saved: tuple, layout: _Layout, dropout_p: float
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """The gradients of one group's queries, keys and values, from that of its context, and of its folded scores
    (unscaled, as `_attend` takes them; None unless `layout.folded`)."""
    q, k, v, probs, dropped = saved
    num_words, length = layout.shape[1], probs.size(-1)
    d_scores = torch.bmm(d_context, v.transpose(1, 2))  # (batch * heads, length, length)
    alpha = layout.scale
    if dropped is not None:
        # context = s * dropped @ v with dropped = probs * keep, s = 1 / (1 - p): with G the gradient of
        # `dropped @ v`, the scores' gradient is s * (G * dropped - probs * rowsum(G * dropped)); no mask needed.
        scale = 1.0 / (1.0 - dropout_p)
        d_v = torch.bmm(dropped.transpose(1, 2), d_context).mul_(scale)
        d_scores.mul_(dropped)
        d_scores.addcmul_(probs, d_scores.sum(-1, keepdim=True), value=-1.0)
        alpha *= scale
    else:
        d_v = torch.bmm(probs.transpose(1, 2), d_context)
        torch._softmax_backward_data(d_scores, probs, -1, probs.dtype, grad_input=d_scores)
    d_q, d_k = torch.empty_like(q), torch.empty_like(k)
    for group, keys in enumerate(_key_blocks(q.size(0), num_words, length)):
        queries = _query_rows(layout, group, num_words)
        block = d_scores[:, queries, keys]
        out = d_q[group][:, queries]
        torch.baddbmm(out, block, k[:, keys], beta=0, alpha=alpha, out=out)
        out = d_k[:, keys]
        torch.baddbmm(out, block.transpose(1, 2), q[group][:, queries], beta=0, alpha=alpha, out=out)
    d_folded = None
    if layout.folded:
        d_folded = d_scores[:, :num_words, num_words:].mul(alpha)
    return d_q, d_k, d_v, d_folded


class _BlockAttention(torch.autograd.Function):
    """
    Attention over (word rows, entity rows) projections laid out as `_Layout` says, to a (rows, hidden) context laid
    out by type, group by group (`Shape.groups`). Queries: (query groups, batch * heads, length, head_dim); with two
    query groups (entity-aware), the first scores the word keys and the second the entity keys. `folded`
    (`layout.folded`): the words' scores against entity keys, every group's (batch, heads, words, entities) flattened
    one after the other (`_folded_scores`). The forward pass keeps the probabilities (and the dropped
    probabilities); the backward pass writes the gradients of the projections in their columns.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        words: torch.Tensor,
        entities: torch.Tensor,
        bias: Optional[torch.Tensor],
        layout: _Layout,
        dropout_p: float,
        folded: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        heads, head_dim = layout.heads, layout.head_dim
        out = words.new_empty(words.size(0) + entities.size(0), heads * head_dim)
        out_words, out_entities = _split(out, layout.shape)
        saved = []
        folded_blocks = _folded_blocks(folded, layout)
        for (shape, word_row, entity_row), scores in zip(layout.shape.groups(), folded_blocks):
            group = layout._replace(shape=shape)
            rows = _group_rows(words, entities, shape, word_row, entity_row)
            context, tensors = _attend(*rows, bias, group, dropout_p, scores)
            saved.extend(tensors)
            context_layout = _Layout(shape, heads, head_dim, (0,), (0,), 1.0)
            _from_heads(context, context_layout, *_group_rows(out_words, out_entities, shape, word_row, entity_row), 0)
        ctx.save_for_backward(*saved)
        ctx.layout, ctx.dropout_p = layout, dropout_p
        ctx.widths = (words.size(1), entities.size(1))
        ctx.folded = folded is not None
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:  # type: ignore[override]
        saved, layout = ctx.saved_tensors, ctx.layout
        heads, head_dim = layout.heads, layout.head_dim
        grad_words, grad_entities = _split(grad.contiguous(), layout.shape)
        covered = head_dim * heads * (len(layout.word_columns))
        d_words, d_entities = (
            (grad.new_zeros if width > covered else grad.new_empty)(n, width)
            for n, width in zip((grad_words.size(0), grad_entities.size(0)), ctx.widths)
        )
        d_folded = []
        for index, (shape, word_row, entity_row) in enumerate(layout.shape.groups()):
            group = layout._replace(shape=shape)
            d_context = grad.new_empty(shape.batch, heads, shape.words + shape.entities, head_dim)
            context_layout = _Layout(shape, heads, head_dim, (0,), (0,), 1.0)
            _to_heads(
                *_group_rows(grad_words, grad_entities, shape, word_row, entity_row), context_layout, 0, d_context
            )
            d_q, d_k, d_v, d_scores = _attend_backward(
                d_context.flatten(0, 1), saved[5 * index : 5 * index + 5], group, ctx.dropout_p
            )
            if d_scores is not None:
                d_folded.append(d_scores.reshape(-1))
            rows = _group_rows(d_words, d_entities, shape, word_row, entity_row)
            for query_group in range(d_q.size(0)):
                _from_heads(d_q[query_group], group, *rows, query_group)
            _from_heads(d_k, group, *rows, d_q.size(0))
            _from_heads(d_v, group, *rows, d_q.size(0) + 1)
        return d_words, d_entities, None, None, None, torch.cat(d_folded) if ctx.folded else None


def _folded_blocks(folded: Optional[torch.Tensor], layout: _Layout) -> List[Optional[torch.Tensor]]:
    """Each group's folded scores, (batch * heads, words, entities) views of `folded` (None each without)."""
    groups = layout.shape.groups()
    if folded is None:
        return [None] * len(groups)
    sizes = [shape.batch * layout.heads * shape.words * shape.entities for shape, _, _ in groups]
    return [
        block.view(shape.batch * layout.heads, shape.words, shape.entities)
        for block, (shape, _, _) in zip(folded.split(sizes), groups)
    ]


def _folded_scores(
    words: torch.Tensor, entities: torch.Tensor, layout: _Layout, weight: torch.Tensor, bias: torch.Tensor
) -> torch.Tensor:
    """
    The words' scores against the entity keys, unscaled, without the words' queries for entity keys: for each head
    h, with the query layer's weight rows `W_h` (head_dim, hidden) and bias `b_h`, `x . (W_h^T k) + b_h . k` for a
    word state x and an entity key k. `words`: the layer's input word rows (rows, hidden); `entities`: the entity
    rows' projections (their key at `layout.entity_columns[2]`). Every group's (batch, heads, words, entities),
    flattened one after the other (as `_BlockAttention` takes them). Autograd differentiates it. The products are
    batched over heads: in training with the weight in its own layout (its gradient one product, without a
    transposing copy), without gradients in the layout the scores' product takes.
    """
    heads, head_dim = layout.heads, layout.head_dim
    weight = weight.view(heads, head_dim, -1)  # (heads, head_dim, hidden)
    bias = bias.view(heads, head_dim, 1)
    key, blocks = layout.entity_columns[2], []
    for shape, word_row, entity_row in layout.shape.groups():
        batch, num_words, num_entities = shape.batch, shape.words, shape.entities
        if not num_entities:
            continue
        x = _rows(words, word_row, batch * num_words).view(batch, num_words, -1)
        k = _rows(entities, entity_row, batch * num_entities)[:, key : key + heads * head_dim]
        k = k.view(batch * num_entities, heads, head_dim).transpose(0, 1)  # (heads, batch * entities, head_dim)
        if torch.is_grad_enabled() and weight.requires_grad:
            # (heads, batch * entities, hidden), W_h^T k for each entity key: the weight's gradient comes out of
            # its product in the weight's own layout
            folded = torch.bmm(k, weight).view(heads, batch, num_entities, -1).permute(1, 3, 0, 2)
        else:
            # (heads, hidden, batch * entities): rearranged into the scores' operand in runs of entities, not of
            # single numbers
            folded = torch.bmm(weight.transpose(1, 2), k.transpose(1, 2))
            folded = folded.view(heads, -1, batch, num_entities).permute(2, 1, 0, 3)
        folded = folded.reshape(batch, -1, heads * num_entities)  # (batch, hidden, heads * entities)
        offsets = torch.bmm(k, bias)  # (heads, batch * entities, 1): b_h . k
        offsets = offsets.view(heads, batch, num_entities).transpose(0, 1).reshape(batch, 1, heads * num_entities)
        scores = torch.baddbmm(offsets, x, folded)  # (batch, words, heads * entities)
        scores = scores.view(batch, num_words, heads, num_entities).transpose(1, 2)
        blocks.append(scores.reshape(-1))  # (batch * heads * words * entities,)
    return torch.cat(blocks) if len(blocks) > 1 else blocks[0] if blocks else words.new_empty(0)


def _rows(x: torch.Tensor, start: int, count: int) -> torch.Tensor:
    """Rows `[start, start + count)` of `x`: `x` itself where that is all of them (a slice's backward pass would
    fill a zero matrix and copy into it)."""
    return x if start == 0 and count == x.size(0) else x[start : start + count]


def _group_rows(
    words: torch.Tensor, entities: torch.Tensor, shape: Shape, word_row: int, entity_row: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    """A group's word rows and entity rows (views)."""
    return (
        words[word_row : word_row + shape.batch * shape.words],
        entities[entity_row : entity_row + shape.batch * shape.entities],
    )


def _split(rows: torch.Tensor, shape: Shape) -> Tuple[torch.Tensor, torch.Tensor]:
    """(word rows, entity rows) of rows laid out by type (by `split`, whose backward pass is one concatenation where
    slices' would each fill a zero matrix)."""
    words = shape.word_rows
    return tuple(rows.split([words, rows.size(0) - words]))  # type: ignore[return-value]


def blocks_apply(x: torch.Tensor) -> bool:
    """Whether the block formulation runs for `x`: on the CPU, eagerly, without autocast (and so packed batches)."""
    return x.device.type == "cpu" and not torch.compiler.is_compiling() and not autocast_enabled("cpu")


def _fuse_after_loading(module: "LukeSelfAttention", incompatible_keys: Any) -> None:
    fuse(module._linears())  # (`load_state_dict(assign=True)` replaces the parameters)


class LukeSelfAttention(nn.Module):
    """
    Multi-head attention over the words and entities of each example (rows laid out by type, see `Shape`), with the
    query matrix chosen by the (query type, key type) pair when `use_entity_aware_attention`. The scale is
    1 / sqrt(head_dim). `formulation` says which exact formulation runs (see the module's docstring).
    """

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.head_dim
        self.use_entity_aware_attention = config.use_entity_aware_attention
        self.dropout_prob = config.attention_probs_dropout_prob
        hidden = config.hidden_size
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        if self.use_entity_aware_attention:
            self.w2e_query = nn.Linear(hidden, hidden)
            self.e2w_query = nn.Linear(hidden, hidden)
            self.e2e_query = nn.Linear(hidden, hidden)
        fuse(self._linears())
        self.register_load_state_dict_post_hook(_fuse_after_loading)

    def _linears(self) -> Sequence[nn.Linear]:
        """The projections in their storage order: the word rows use the first four (or, their scores against
        entity keys folded, the three after `w2e_query`), the entity rows the last four."""
        if hasattr(self, "w2e_query"):
            return [self.w2e_query, self.query, self.key, self.value, self.e2w_query, self.e2e_query]
        return [self.query, self.key, self.value]

    def _apply(self, fn: Any, recurse: bool = True) -> "LukeSelfAttention":  # type: ignore[override]
        super()._apply(fn, recurse)
        fuse(self._linears())  # `.to()`, `.half()` ... gave each parameter a storage of its own
        return self

    def __setstate__(self, state: dict) -> None:  # (copy.deepcopy, pickle: each parameter copied on its own)
        super().__setstate__(state)
        fuse(self._linears())

    def formulation(self, hidden_states: torch.Tensor) -> str:
        """`"blocks"` on the CPU, eagerly, without autocast; `"widened"` elsewhere (see the module's docstring)."""
        return "blocks" if blocks_apply(hidden_states) else "widened"

    def _fused_kernel_needs_equal_head_dims(self, v: torch.Tensor) -> bool:
        # The widened formulation on the CPU (compiled, or under autocast): the CPU's fused kernel needs values as wide
        # as queries and runs only without dropout (with dropout the CPU takes the unfused path, which needs no
        # padding); CUDA's memory-efficient kernel takes a narrower value.
        return v.device.type == "cpu" and not (self.training and self.dropout_prob > 0)

    def _projections(
        self, hidden_states: torch.Tensor, shape: Shape, entity_aware: bool, fold: bool
    ) -> Tuple[Any, Any]:
        """The word rows' and entity rows' projections, and the column of each query, the key and the value in
        them: `[w2e q, q, k, v]` (`[q, k, v]` with `fold`) for words and `[k, v, e2w q, e2e q]` for entities when
        entity-aware, `[q, k, v]` for both otherwise."""
        hidden = self.num_heads * self.head_dim
        words, entities = _split(hidden_states, shape)
        linears = self._linears()
        if not entity_aware:
            plain = linears[1:4] if len(linears) == 6 else linears  # (w2e unused: the ablation switched at run time)
            projected = self._project("plain", hidden_states, plain)  # (rows, 3 * hidden)
            columns = (0, hidden, 2 * hidden)
            return _split(projected, shape), (columns, columns)
        if fold:
            word_linears, word_columns = linears[1:4], (0, -1, hidden, 2 * hidden)
        else:
            word_linears, word_columns = linears[:4], (hidden, 0, 2 * hidden, 3 * hidden)
        if packing_applies(self, hidden_states, self.query.weight):
            key = "words without w2e" if fold else "words"
            projected_words = self._project(key, words, word_linears)  # (batch * words, 3 or 4 * hidden)
            projected_entities = self._project("entities", entities, linears[2:])  # (batch * entities, 4 * hidden)
        else:
            projected_words, projected_entities = by_type(
                hidden_states, shape.word_rows, linears[-len(word_linears) - 2 :]
            )
        return (projected_words, projected_entities), (word_columns, (2 * hidden, 3 * hidden, 0, hidden))

    def _fold_pays(self, shape: Shape) -> bool:
        """Whether folding `w2e_query` into the entity keys (`_folded_scores`) costs less arithmetic than the words'
        queries for entity keys: per example, entities x (hidden + words x heads) against words x hidden."""
        hidden = self.num_heads * self.head_dim
        return shape.entities * (hidden + shape.words * self.num_heads) < shape.words * hidden

    def _project(self, key: str, x: torch.Tensor, linears: Sequence[nn.Linear]) -> torch.Tensor:
        """`x` times the layers' weights stacked, plus their biases (one matrix product)."""
        weight, bias = fused(linears)
        return linear(
            self, key, x, weight, bias, params=[lin.weight for lin in linears] + [lin.bias for lin in linears]
        )

    def forward(self, hidden_states: torch.Tensor, shape: Shape, mask: Optional[AttentionMask]) -> torch.Tensor:
        # hidden_states: (word rows + entity rows, hidden), laid out by type (see `Shape`); `mask` None when packed
        entity_aware = self.use_entity_aware_attention and shape.entities > 0
        blocks = shape.packed or self.formulation(hidden_states) == "blocks"
        fold = entity_aware and blocks and self._fold_pays(shape)
        (words, entities), (word_columns, entity_columns) = self._projections(hidden_states, shape, entity_aware, fold)
        layout = _Layout(shape, self.num_heads, self.head_dim, word_columns, entity_columns, self.head_dim**-0.5)
        dropout = self.dropout_prob if self.training else 0.0
        if not blocks:
            return self._widened(words, entities, layout, mask, dropout)
        folded = None
        if fold:  # (the layer's input word rows: `_folded_scores` multiplies them by the folded weight)
            word_states = _split(hidden_states, shape)[0]
            folded = _folded_scores(word_states, entities, layout, self.w2e_query.weight, self.w2e_query.bias)
        bias = None if shape.packed else mask.additive(words.dtype)  # (packed: no padding, nothing to mask)
        return _BlockAttention.apply(words, entities, bias, layout, dropout, folded)

    def _widened(
        self, words: torch.Tensor, entities: torch.Tensor, layout: _Layout, mask: AttentionMask, dropout: float
    ) -> torch.Tensor:
        """One `scaled_dot_product_attention` call: queries [q for word keys ; q for entity keys] per head, keys
        [k ; 0] for words and [0 ; k] for entities (values zero-padded where the fused kernel needs equal widths)."""
        (batch, num_words, num_entities), nh, hd = layout.shape[:3], self.num_heads, self.head_dim
        groups = len(layout.word_columns) - 2

        def sequence(which: int) -> torch.Tensor:  # (batch, heads, words + entities, head_dim)
            parts = [_heads(words, layout.word_columns[which], batch, num_words, nh, hd)]
            if num_entities:
                parts.append(_heads(entities, layout.entity_columns[which], batch, num_entities, nh, hd))
            return torch.cat(parts, dim=2) if len(parts) > 1 else parts[0]

        k, v = sequence(groups), sequence(groups + 1)
        if groups == 2:
            q = torch.cat([sequence(0), sequence(1)], dim=-1)  # (batch, heads, length, 2 * head_dim)
            k = torch.cat([F.pad(k[:, :, :num_words], (0, hd)), F.pad(k[:, :, num_words:], (hd, 0))], dim=2)
            if self._fused_kernel_needs_equal_head_dims(v):
                v = F.pad(v, (0, hd))  # (batch, heads, length, 2 * head_dim)
        else:
            q = sequence(0)
        context = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask.keys, dropout_p=dropout, scale=1.0 / math.sqrt(hd)
        )  # (batch, heads, length, head_dim), or 2 * head_dim with padded values
        context = context[..., :hd].transpose(1, 2)  # (batch, length, heads, head_dim)
        word_context = context[:, :num_words].reshape(batch * num_words, nh * hd)
        if not num_entities:
            return word_context
        return torch.cat([word_context, context[:, num_words:].reshape(batch * num_entities, nh * hd)])
