"""
Where a NER-sized training step spends its time: `LukeEncoder` against `transformers.LukeModel` of the same
("small") size, forward + backward on one batch (8 sentences of 48 subwords, 64 span entities), the CPU
profiler's self time of the aten operators grouped by kind. It explains the NER throughput ratio of
`trainer_throughput.py`: what the project's encoder saves is in the attention, which at this size is a small
share of the step.

    python benchmarks/ner_step_profile.py
"""

import collections
import time

import torch
import transformers
from torch.profiler import ProfilerActivity, profile

from luke_allennlp.modeling import LukeConfig, LukeEncoder

SIZE = dict(
    vocab_size=50265,
    entity_vocab_size=4,
    hidden_size=256,
    entity_emb_size=256,
    num_hidden_layers=4,
    num_attention_heads=4,
    intermediate_size=1024,
    max_position_embeddings=514,
    use_entity_aware_attention=True,
)
BATCH, WORDS, ENTITIES, MENTION = 8, 48, 64, 30
KINDS = [
    ("attention (scores, softmax, context)", ("bmm", "softmax", "scaled_dot", "attention")),
    ("dense layers", ("addmm", "aten::mm", "matmul", "linear")),
    ("layer norm, GELU, dropout", ("layer_norm", "gelu", "dropout", "bernoulli")),
    ("embeddings, indexing", ("embedding", "index", "gather", "scatter")),
]


def kind(name: str) -> str:
    return next(
        (label for label, keys in KINDS if any(key in name.lower() for key in keys)), "other (copies, sums, masks)"
    )


def inputs() -> dict:
    starts = torch.randint(1, WORDS - 4, (BATCH, ENTITIES))
    positions = torch.full((BATCH, ENTITIES, MENTION), -1)
    positions[..., 0], positions[..., 1] = starts, starts + 1
    return dict(
        input_ids=torch.randint(5, 50000, (BATCH, WORDS)),
        attention_mask=torch.ones(BATCH, WORDS, dtype=torch.long),
        entity_ids=torch.full((BATCH, ENTITIES), 2),
        entity_attention_mask=torch.ones(BATCH, ENTITIES, dtype=torch.long),
        entity_position_ids=positions,
    )


def step(model, batch: dict) -> None:
    out = model(**batch)
    (out.last_hidden_state.sum() + out.entity_last_hidden_state.sum()).backward()


def main() -> None:
    torch.manual_seed(0)
    batch = inputs()
    models = {
        "LukeEncoder": LukeEncoder(LukeConfig(**SIZE)),
        "transformers.LukeModel": transformers.LukeModel(transformers.LukeConfig(**SIZE)),
    }
    for name, model in models.items():
        for _ in range(2):
            step(model, batch)
        start = time.perf_counter()
        for _ in range(3):
            step(model, batch)
        wall = (time.perf_counter() - start) / 3
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            step(model, batch)
        totals: collections.Counter = collections.Counter()
        for event in profiler.key_averages():
            if event.key.startswith("aten::"):
                totals[kind(event.key)] += event.self_cpu_time_total
        total = sum(totals.values())
        print(f"{name}: {wall * 1000:.0f} ms per forward + backward")
        for label, value in totals.most_common():
            print(f"  {label:40s} {100 * value / total:5.1f}%")


if __name__ == "__main__":
    main()
