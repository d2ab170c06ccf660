"""
Learning check for relation classification (SemEval-2010 Task 8) and entity typing (Open Entity) on real
data: a small LUKE without pretraining (random init, RoBERTa tokenizer), trained with the real configs for a
fixed budget, against the majority-class baseline of each task.

    python benchmarks/entity_tasks_learning_check.py [--train-examples 2000] [--epochs 4]
"""

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from luke_allennlp.testing import SMALL, shared_data_dir, train_from_scratch, write_tiny_checkpoint  # noqa: E402
from luke_allennlp.training.metrics import MultiLabelF1, RelationF1  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-examples", type=int, default=2000)
    parser.add_argument("--dev-examples", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="entity-tasks-"))
    model = write_tiny_checkpoint(work / "small-luke", "luke", **SMALL)
    data = shared_data_dir()

    # SemEval: blocks of 4 lines; the official test file as dev.
    train_lines = (data / "semeval2010_task8" / "TRAIN_FILE.TXT").read_text().splitlines()
    test_lines = (data / "semeval2010_task8" / "TEST_FILE_FULL.TXT").read_text().splitlines()
    (work / "semeval_train.txt").write_text("\n".join(train_lines[: 4 * args.train_examples]) + "\n")
    (work / "semeval_dev.txt").write_text("\n".join(test_lines[: 4 * args.dev_examples]) + "\n")
    start = time.time()
    rc = train_from_scratch(
        "configs/relation_classification/semeval.jsonnet",
        model,
        work / "semeval_train.txt",
        work / "semeval_dev.txt",
        work / "rc",
        args.epochs,
        32,
    )
    rc_time = time.time() - start
    dev_labels = [line.strip() for line in test_lines[1 : 4 * args.dev_examples : 4]]
    majority = Counter(line.strip() for line in train_lines[1 : 4 * args.train_examples : 4]).most_common(1)[0][0]
    baseline = RelationF1()
    baseline([majority] * len(dev_labels), dev_labels)
    rc_base = baseline.get_metric()

    # Open Entity: the paper-format train split, its dev split.
    start = time.time()
    train_examples = json.loads((data / "open_entity" / "train.json").read_text())
    dev_examples = json.loads((data / "open_entity" / "dev.json").read_text())[: args.dev_examples]
    (work / "oe_dev.json").write_text(json.dumps(dev_examples))
    et = train_from_scratch(
        "configs/entity_typing/open_entity.jsonnet",
        model,
        data / "open_entity" / "train.json",
        work / "oe_dev.json",
        work / "et",
        args.epochs,
        16,
    )
    et_time = time.time() - start
    top = Counter(label for e in train_examples for label in e["labels"]).most_common(1)[0][0]
    import torch

    types = sorted({label for e in train_examples + dev_examples for label in e["labels"]})
    gold = torch.tensor([[t in e["labels"] for t in types] for e in dev_examples])
    always = torch.zeros_like(gold)
    always[:, types.index(top)] = True
    et_baseline = MultiLabelF1()
    et_baseline(always, gold)

    print(
        f"\nSemEval-2010 Task 8, {args.train_examples} training / {args.dev_examples} test examples, {args.epochs} epochs, {rc_time:.0f} s:"
    )
    print(
        f"  small LUKE from scratch: macro-F1 {rc['best_validation_macro_f1']:.3f}, micro-F1 {rc['best_validation_f1']:.3f}; "
        f"majority class ({majority}): macro-F1 {rc_base['macro_f1']:.3f}, micro-F1 {rc_base['f1']:.3f}"
    )
    print(f"Open Entity, 1998 training / {len(dev_examples)} dev examples, {args.epochs} epochs, {et_time:.0f} s:")
    print(
        f"  small LUKE from scratch: loose micro-F1 {et['best_validation_f1']:.3f}; always '{top}': {et_baseline.get_metric()['f1']:.3f}"
    )


if __name__ == "__main__":
    main()
