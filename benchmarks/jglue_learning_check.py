"""
Learning check for JSTS (sentence-pair regression) and JCommonsenseQA (multiple choice) on the real JGLUE v1.3 files:
a small LUKE without pretraining (random init, hidden 128, 2 layers) over the tiny Japanese checkpoint's SentencePiece
model (trained on JGLUE's training text), trained with configs/jglue for a fixed budget on the training files
(subsampled with --jsts-train / --jcqa-train), evaluated on the whole valid files, next to baselines computed on the
same valid files: chance, the majority / constant prediction, and a character-overlap heuristic (no learning).

    nice python benchmarks/jglue_learning_check.py [--jsts-train 4000] [--jcqa-train 3000] [--epochs 3]
"""

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from luke_allennlp.testing import SMALL, shared_data_dir, train_from_scratch, write_tiny_checkpoint  # noqa: E402
from luke_allennlp.training.metrics.correlation import pearson, ranks  # noqa: E402


def lines_of(path: Path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def overlap(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' character sets (punctuation included)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 0.0


def correlations(predicted, gold):
    return pearson(predicted, gold), pearson(ranks(predicted), ranks(gold))


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jsts-train", type=int, default=4000, help="training pairs (the file has 12,451)")
    parser.add_argument("--jcqa-train", type=int, default=3000, help="training questions (the file has 8,939)")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jglue-check-"))
    jglue = shared_data_dir() / "jglue"
    sizes = {k: v for k, v in SMALL.items() if k != "entity_vocab_size"}
    model = write_tiny_checkpoint(work / "small-luke-japanese", "luke-japanese", **sizes)
    rows = []

    # JSTS: the first --jsts-train training pairs; the whole valid split.
    train, valid = jglue / "jsts-v1.3" / "train-v1.3.json", jglue / "jsts-v1.3" / "valid-v1.3.json"
    subset = work / "jsts_train.json"
    subset.write_text(
        "\n".join(train.read_text(encoding="utf-8").splitlines()[: args.jsts_train]) + "\n", encoding="utf-8"
    )
    start = time.time()
    metrics = train_from_scratch("configs/jglue/jsts.jsonnet", model, subset, valid, work / "jsts", args.epochs, 32)
    seconds = time.time() - start
    gold = np.array([x["label"] for x in lines_of(valid)])
    rng = np.random.RandomState(0)
    chance = correlations(rng.uniform(0, 5, len(gold)), gold)
    char = correlations(np.array([overlap(x["sentence1"], x["sentence2"]) for x in lines_of(valid)]), gold)
    rows.append(("JSTS (Pearson / Spearman)", f"{args.jsts_train:,} of 12,451 train / 1,457 valid",
                 f"{args.epochs} ({seconds:.0f} s)",
                 f"{metrics['best_validation_pearson']:.3f} / {metrics['best_validation_spearman']:.3f}",
                 f"{chance[0]:.3f} / {chance[1]:.3f}", "undefined (a constant has no correlation)",
                 f"{char[0]:.3f} / {char[1]:.3f}"))  # fmt: skip

    # JCommonsenseQA: the first --jcqa-train training questions; the whole valid split.
    train, valid = jglue / "jcommonsenseqa-v1.3" / "train-v1.3.json", jglue / "jcommonsenseqa-v1.3" / "valid-v1.3.json"
    subset = work / "jcqa_train.json"
    subset.write_text(
        "\n".join(train.read_text(encoding="utf-8").splitlines()[: args.jcqa_train]) + "\n", encoding="utf-8"
    )
    start = time.time()
    metrics = train_from_scratch(
        "configs/jglue/jcommonsenseqa.jsonnet", model, subset, valid, work / "jcqa", args.epochs, 32
    )
    seconds = time.time() - start
    questions = lines_of(valid)
    majority = Counter(x["label"] for x in lines_of(subset)).most_common(1)[0][0]
    majority_accuracy = sum(x["label"] == majority for x in questions) / len(questions)
    random.seed(0)
    chance = sum(x["label"] == random.randrange(5) for x in questions) / len(questions)

    def by_overlap(x):  # the choice sharing most characters with the question (the first on a tie)
        return max(range(5), key=lambda i: (overlap(x["question"], x[f"choice{i}"]), -i))

    char = sum(x["label"] == by_overlap(x) for x in questions) / len(questions)
    rows.append(("JCommonsenseQA (accuracy)", f"{args.jcqa_train:,} of 8,939 train / 1,119 valid",
                 f"{args.epochs} ({seconds:.0f} s)", f"{metrics['best_validation_accuracy']:.3f}",
                 f"0.200 (drawn: {chance:.3f})", f"{majority_accuracy:.3f} (always choice {majority})",
                 f"{char:.3f}"))  # fmt: skip

    print(f"load average before the end: {os.getloadavg()[0]:.1f}")
    print(
        "| task | data | epochs (time) | small LUKE, no pretraining (best valid) | chance | majority / constant "
        "| character overlap |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
