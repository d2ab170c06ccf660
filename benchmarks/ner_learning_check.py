"""
Learning check on real data: a small LUKE, randomly initialised (no pretrained weights can be downloaded
here), trained for a fixed budget with the real CoNLL-2003 config on the first documents of eng.train, scored
on the first documents of eng.testa, against two baselines: the trivial one (everything `O`, F1 0) and a
dictionary baseline (every training entity string, tagged with its most frequent type, longest match first).

    python benchmarks/ner_learning_check.py [--train-docs 120] [--dev-docs 30] [--epochs 6] [--threads 2]

Deterministic for a given code, thread count and CPU: allennlp's seeds are fixed (its defaults), the data loader
runs in the main process, and torch's thread count is pinned (`--threads`, default 2 as on the 2-core machine that
measured the figures; torch's default would follow the machine's cores, and a different count sums in a different
order, which changes the trajectory). A change of the code that reorders batches or initialisation changes it too.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from data_readers.luke_conll2003 import LukeConll2003Reader  # noqa: E402
from luke_allennlp.evaluation.ner_baselines import dictionary_baseline  # noqa: E402
from luke_allennlp.testing import SMALL, shared_data_dir, train_from_scratch, write_tiny_checkpoint  # noqa: E402


def first_documents(source: Path, count: int, target: Path) -> Path:
    lines = source.read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("-DOCSTART-")] + [len(lines)]
    target.write_text("\n".join(lines[: starts[count]]) + "\n")
    return target


def sentences(path: Path, reader: LukeConll2003Reader):
    return [(s.words, s.tags) for doc in reader.read_documents(str(path)) for s in doc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-docs", type=int, default=120)
    parser.add_argument("--dev-docs", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2, help="torch's threads (default 2: see above)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="ner-learning-"))
    data = shared_data_dir() / "conll2003"
    train = first_documents(data / "eng.train", args.train_docs, work / "train.txt")
    dev = first_documents(data / "eng.testa", args.dev_docs, work / "dev.txt")
    model_dir = write_tiny_checkpoint(work / "small-luke", "luke", **SMALL)
    start = time.time()
    metrics = train_from_scratch("configs/ner/conll2003.jsonnet", model_dir, train, dev, work / "run", args.epochs, 16)
    reader = LukeConll2003Reader(str(model_dir))
    baseline = dictionary_baseline(sentences(train, reader), sentences(dev, reader))["f1"]
    print(
        f"\ntrain: first {args.train_docs} documents of eng.train ({len(sentences(train, reader))} sentences); dev: first {args.dev_docs} of eng.testa"
    )
    print(
        f"small LUKE from scratch (hidden 128, 2 layers), {args.epochs} epochs, {args.threads} threads, {time.time() - start:.0f} s"
    )
    print(
        f"dev span F1: model {metrics['best_validation_f1']:.3f} (precision {metrics['best_validation_precision']:.3f}, "
        f"recall {metrics['best_validation_recall']:.3f}); dictionary baseline {baseline:.3f}; trivial baseline 0.000"
    )


if __name__ == "__main__":
    main()
