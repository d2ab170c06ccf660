"""
The entity input embedding (entity table, the mean of the mention's position embeddings, type embedding, layer norm)
against transformers' `LukeEntityEmbeddings` with the same weights, forward + backward, at the shape of a LUKE base
NER step (14 passes of 128 span entities, mentions of up to 30 subwords, hidden 768; most mentions short, as spans
of 1 to 16 words are). transformers gathers a (batch, entities, mention length, hidden) tensor and sums it; ours
is one weighted `embedding_bag` (eagerly; under `torch.compile` inductor fuses the gather and the sum).

    python benchmarks/entity_embeddings_speed.py            # the NER base shape: seconds on a CPU
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import transformers
from transformers.models.luke import modeling_luke

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from luke_allennlp.modeling.configuration import LukeConfig  # noqa: E402
from luke_allennlp.modeling.encoder import LukeEntityEmbeddings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=14, help="encoder passes (sentence chunks) a step")
    parser.add_argument("--entities", type=int, default=128)
    parser.add_argument("--mention", type=int, default=30, help="the longest mention, in subwords")
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    sizes = dict(
        vocab_size=50265,
        entity_vocab_size=4,
        hidden_size=args.hidden,
        num_attention_heads=args.hidden // 64,
        entity_emb_size=256,
        max_position_embeddings=514,
        hidden_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    theirs = modeling_luke.LukeEntityEmbeddings(transformers.LukeConfig(**sizes))
    ours = LukeEntityEmbeddings(LukeConfig(**sizes))
    ours.load_state_dict(theirs.state_dict())
    g = torch.Generator().manual_seed(0)
    shape = (args.rows, args.entities)
    starts = torch.randint(0, 512 - args.mention, shape, generator=g)
    lengths = torch.randint(1, args.mention + 1, (*shape, 1), generator=g) // torch.randint(
        1, 4, (*shape, 1), generator=g
    )
    positions = starts[..., None] + torch.arange(args.mention)
    positions = positions.masked_fill(torch.arange(args.mention) >= lengths.clamp(min=1), -1)
    entity_ids = torch.randint(1, 4, shape, generator=g)
    types = torch.zeros_like(entity_ids)

    def step(model) -> torch.Tensor:
        model.zero_grad()
        out = model(entity_ids, positions, types)
        out.square().mean().backward()
        return out

    expected, actual = step(theirs), step(ours)
    difference = (expected - actual).abs().max().item()
    grads = max(
        (p.grad - q.grad).abs().max().item()
        for p, q in zip(theirs.parameters(), ours.parameters())
        if p.grad is not None
    )
    times = {"transformers": [], "ours": []}
    for _ in range(args.repeats):  # alternated, so that both see the same machine
        for name, model in (("transformers", theirs), ("ours", ours)):
            start = time.perf_counter()
            step(model)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    print(
        f"{args.rows} x {args.entities} entities, mentions of up to {args.mention} subwords, hidden {args.hidden}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    print(f"outputs differ by at most {difference:.1e}, gradients by {grads:.1e}")
    for name, ms in medians.items():
        print(f"{name}: {ms:.1f} ms a forward + backward (median of {args.repeats})")
    print(f"ours / transformers speed: {medians['transformers'] / medians['ours']:.1f}x")


if __name__ == "__main__":
    main()
