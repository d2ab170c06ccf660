"""
What `luke_span_ner` spends per training step decoding spans for its metric (`LukeSpanNer._decode_batch`: the
paper's greedy decoding over the spans of each sentence; on a checkout without it, `_decode` sentence by sentence,
so that the two can be compared), for real
CoNLL-2003 sentences read with `luke_conll2003` as configs/ner/conll2003.jsonnet reads them (every span of up to
16 words, chunks of 128), 8 sentences a step. The logits are random, in two regimes: "untrained" (standard normal
over the 4 types and `O`: about 4 spans in 5 predicted as an entity) and "trained" (`O` raised by 4: about 1 span
in 100 predicted as an entity, nearer what a model that has learnt something predicts).

    python benchmarks/ner_decode_speed.py [--data ../shared/data/conll2003/eng.train] [--sentences 800]
"""

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_readers.luke_conll2003 import LukeConll2003Reader  # noqa: E402
from luke_allennlp.models.luke_span_ner import LukeSpanNer  # noqa: E402
from luke_allennlp.testing import shared_data_dir, write_tiny_checkpoint  # noqa: E402

LABELS = ["O", "PER", "ORG", "LOC", "MISC"]
BATCH = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--sentences", type=int, default=800, help="the first N sentences of the file")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = args.data or shared_data_dir() / "conll2003" / "eng.train"
    reader = LukeConll2003Reader(
        str(write_tiny_checkpoint(tempfile.mkdtemp(), "luke")), max_span_words=16, max_entities=128
    )
    instances = list(itertools.islice(reader.read(str(data)), args.sentences))
    spans = [instance["metadata"]["spans"] for instance in instances]
    per_chunk = instances[0]["entity_ids"].tensor.shape[1]
    model = SimpleNamespace(labels=LABELS, outside=LABELS.index("O"))  # what decoding reads of the model
    print(
        f"{len(spans)} sentences of {data.name}, {BATCH} a step: {statistics.mean(map(len, spans)):.0f} spans a "
        f"sentence on average (max {max(map(len, spans))})"
    )
    generator = torch.Generator().manual_seed(0)
    for regime, shift in (("untrained", 0.0), ("trained", 4.0)):
        steps = []
        for b in range(0, len(spans), BATCH):
            batch = spans[b : b + BATCH]
            width = max(-(-len(s) // per_chunk) for s in batch) * per_chunk  # the model's (batch, chunks * per_chunk)
            logits = torch.randn(len(batch), width, len(LABELS), generator=generator)
            logits[..., model.outside] += shift
            steps.append((logits, batch))
        entities = sum(
            int((logits[i, : len(s)].argmax(-1) != model.outside).sum()) for logits, b in steps for i, s in enumerate(b)
        )
        times = []  # seconds, per step
        for _ in range(args.repeats):
            for logits, batch in steps:
                start = time.perf_counter()
                if hasattr(LukeSpanNer, "_decode_batch"):
                    LukeSpanNer._decode_batch(model, logits, batch)
                else:  # a checkout without `_decode_batch`: `_decode` a sentence at a time
                    [LukeSpanNer._decode(model, row, s) for row, s in zip(logits, batch)]
                times.append(time.perf_counter() - start)
        print(
            f"{regime:9s} ({entities / sum(map(len, spans)):5.1%} of spans not O): "
            f"{statistics.median(times) * 1e3:7.2f} ms a step (median of {len(times)}: {len(steps)} steps x "
            f"{args.repeats}; mean {statistics.mean(times) * 1e3:.2f})"
        )


if __name__ == "__main__":
    main()
