"""
What `SyncAudit` (the trainer's `audit_host_syncs`) adds to a training step: the same `LukeForPretraining` step
(forward, backward, AdamW) with and without the audit, at LUKE base's depth (12 layers) but a tiny width, so that
the step is all operator dispatch and its time is what the host spends launching, as in an eager GPU step. Also the
aten operations a step runs, to give the audit's cost per operation.

    python benchmarks/sync_audit_overhead.py            # 12 layers, hidden 64: seconds on a CPU

The peer is the step without the audit; the figure to read is "audit adds ... ms a step" against the eager GPU
loop's gap to its bare step (the gpu_check rows, benchmarks/RESULTS.md).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from luke_allennlp.modeling import LukeConfig, LukeForPretraining  # noqa: E402
from luke_allennlp.training.trainers.sync_audit import SyncAudit  # noqa: E402


class CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def inputs(batch: int, words: int, entities: int, vocab: int, entity_vocab: int) -> dict:
    g = torch.Generator().manual_seed(0)
    starts = torch.randint(1, words - 4, (batch, entities), generator=g)
    positions = torch.stack([starts, starts + 1], -1)
    positions = torch.cat([positions, torch.full((batch, entities, 28), -1)], -1)  # max_mention_length 30
    labels = torch.full((batch, words), -100)
    labels[:, 1:4] = 7
    entity_labels = torch.full((batch, entities), -100)
    entity_labels[:, 0] = 5
    return dict(
        input_ids=torch.randint(3, vocab, (batch, words), generator=g),
        attention_mask=torch.ones(batch, words, dtype=torch.long),
        entity_ids=torch.randint(3, entity_vocab, (batch, entities), generator=g),
        entity_position_ids=positions,
        entity_attention_mask=torch.ones(batch, entities, dtype=torch.long),
        labels=labels,
        entity_labels=entity_labels,
        masked_counts=(3 * batch, batch),  # known on the host, as the reader's batches have them
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = LukeConfig(
        vocab_size=1000,
        entity_vocab_size=1000,
        hidden_size=args.hidden,
        entity_emb_size=32,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=130,
        type_vocab_size=1,
    )
    model = LukeForPretraining(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = inputs(2, 64, 8, 1000, 1000)

    def step() -> None:
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()

    with CountOps() as counter:
        step()
    times = {"plain": [], "audited": []}
    for _ in range(3):
        step()
    for _ in range(args.repeats):  # alternating, medians
        for kind in times:
            start = time.perf_counter()
            if kind == "audited":
                with SyncAudit(torch.device("cpu")) as audit:
                    step()
                assert audit.count == 0, audit.events
            else:
                step()
            times[kind].append(time.perf_counter() - start)
    plain, audited = (statistics.median(times[k]) for k in ("plain", "audited"))
    print(f"torch {torch.__version__}, {args.layers} layers, hidden {args.hidden}, one thread")
    print(f"aten operations a step: {counter.count:,}")
    print(f"step without the audit: {plain * 1e3:.1f} ms; with it: {audited * 1e3:.1f} ms ({audited / plain:.2f}x)")
    added = audited - plain
    print(f"audit adds {added * 1e3:.1f} ms a step, {added / counter.count * 1e6:.1f} us an operation")


if __name__ == "__main__":
    main()
