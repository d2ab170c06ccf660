"""
Learning check for JSTS (sentence-pair regression) and JCommonsenseQA (multiple choice) on the real JGLUE v1.3 files:
a small LUKE without pretraining (random init, hidden 128, 2 layers) over the tiny Japanese checkpoint's SentencePiece
model (trained on JGLUE's training text), trained with configs/jglue for a fixed budget on the training files
(subsampled with --jsts-train / --jcqa-train), evaluated on the whole valid files, next to baselines computed on the
same valid files: chance, the majority / constant prediction, and a character-overlap heuristic (no learning).

    nice python benchmarks/jglue_learning_check.py [--jsts-train 4000] [--jcqa-train 3000] [--epochs 3]
        [--tasks jsts,jcqa] [--seeds 0,1,2] [--lr 1e-3] [--entities]

With several seeds (each its own random initialisation and data order), each figure is their mean ± standard
deviation. `--entities` also trains JSTS with entity inputs (configs/jglue/jsts_entities.jsonnet) over the same seeds,
with the mention dictionary built by the pipeline from the Japanese dump the tests write from real Japanese Wikipedia
text (tests/wikipedia/japanese_dump.py; or `--mention-dictionary FILE`, e.g. one built from a jawiki dump), and prints
how many valid sentences get entities.
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

from luke_allennlp.data.inputs import tokenize  # noqa: E402
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


def spread(values) -> str:
    import numpy as np

    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f}" if len(values) == 1 else f"{values.mean():.3f} ± {values.std(ddof=1):.3f}"


def japanese_mention_dictionary(work: Path, jglue: Path):
    """(mention dictionary, entity vocabulary for the reader) from the tests' Japanese dump: the pipeline's SQLite
    file, its entities numbered after the checkpoint's special ones (within SMALL's entity table of JSQuAD titles)."""
    from luke_allennlp.resources.mentions.store import MentionStore
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_store
    from tests.wikipedia.japanese_dump import write_japanese_dump

    write_japanese_dump(work / "jawiki.xml", jglue)
    path = work / "jawiki-mentions.sqlite"
    build_mention_store(work / "jawiki.xml", path, include_missing_pages=True)
    titles = [t for (t,) in MentionStore(path).connection.execute("SELECT title FROM titles ORDER BY id")]
    vocab = work / "jawiki-entity-vocab.json"
    vocab.write_text(
        json.dumps({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[MASK]", *titles])}, ensure_ascii=False)
    )
    return path, vocab


def entity_coverage(model: Path, valid: Path, dictionary: Path, vocab: Path) -> str:
    """How many sentences of a JSTS file get at least one entity, and entities per sentence (the reader's settings)."""
    from data_readers import LukeSentenceClassificationReader

    reader = LukeSentenceClassificationReader(
        str(model),
        regression=True,
        id_field="sentence_pair_id",
        mention_dictionary=str(dictionary),
        entity_vocab=str(vocab),
    )
    per_sentence = [
        len(reader.linker.find(reader.linker.text_matcher(), tokenize(reader.tokenizer, text)).entities)
        for line in lines_of(valid)
        for text in (line["sentence1"], line["sentence2"])
    ]
    with_entities = sum(n > 0 for n in per_sentence)
    return (
        f"{with_entities:,} of {len(per_sentence):,} sentences of {valid.name} ({with_entities / len(per_sentence):.1%}) "
        f"get ≥1 entity; {sum(per_sentence) / len(per_sentence):.3f} entities per sentence"
    )


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jsts-train", type=int, default=4000, help="training pairs (the file has 12,451)")
    parser.add_argument("--jcqa-train", type=int, default=3000, help="training questions (the file has 8,939)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--tasks", default="jsts,jcqa", help="comma-separated: jsts, jcqa")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds: initialisation and data order")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden-size", type=int, default=SMALL["hidden_size"])
    parser.add_argument("--layers", type=int, default=SMALL["num_hidden_layers"])
    parser.add_argument("--entities", action="store_true", help="JSTS with entity inputs too")
    parser.add_argument("--entities-only", action="store_true", help="with --entities: skip JSTS without them")
    parser.add_argument("--mention-dictionary", type=Path, help="with --entities (default: the tests' Japanese dump)")
    parser.add_argument("--entity-vocab", type=Path, help="with --mention-dictionary: the reader's entity_vocab")
    args = parser.parse_args()
    tasks, seeds = args.tasks.split(","), [int(s) for s in args.seeds.split(",")]
    work = Path(tempfile.mkdtemp(prefix="jglue-check-"))
    jglue = shared_data_dir() / "jglue"
    sizes = {k: v for k, v in SMALL.items() if k != "entity_vocab_size"}
    sizes.update(hidden_size=args.hidden_size, num_hidden_layers=args.layers, intermediate_size=2 * args.hidden_size)
    models = {}
    for seed in seeds:  # one SentencePiece model (the first checkpoint's), a random initialisation per seed
        first = models[seeds[0]] if models else None
        models[seed] = write_tiny_checkpoint(
            work / f"small-luke-japanese-{seed}", "luke-japanese", seed, first, **sizes
        )

    def overrides(seed: int) -> dict:
        return {"trainer.optimizer.lr": args.lr, "random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}

    setting = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}, {args.epochs} epochs, lr {args.lr:g}"
    rows, notes = [], []

    def train(config, subset, valid, name, extra=None):
        results, start = [], time.time()
        for seed in seeds:
            metrics = train_from_scratch(
                config,
                models[seed],
                subset,
                valid,
                work / f"{name}-{seed}",
                args.epochs,
                args.batch_size,
                {**overrides(seed), **(extra or {})},
            )
            results.append(metrics)
        return results, f"{setting} ({(time.time() - start) / len(seeds):.0f} s a run)"

    def subset_of(path: Path, lines: int) -> Path:
        subset = work / path.name.replace("-v1.3", f"-{path.parent.name}-{lines}")
        subset.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:lines]) + "\n", encoding="utf-8")
        return subset

    if "jsts" in tasks:  # the first --jsts-train training pairs; the whole valid split
        valid = jglue / "jsts-v1.3" / "valid-v1.3.json"
        subset = subset_of(jglue / "jsts-v1.3" / "train-v1.3.json", args.jsts_train)
        gold = np.array([x["label"] for x in lines_of(valid)])
        chance = correlations(np.random.RandomState(0).uniform(0, 5, len(gold)), gold)
        char = correlations(np.array([overlap(x["sentence1"], x["sentence2"]) for x in lines_of(valid)]), gold)
        runs = [] if args.entities and args.entities_only else [("", "configs/jglue/jsts.jsonnet", None)]
        if args.entities:
            dictionary, vocab = args.mention_dictionary, args.entity_vocab
            if dictionary is None:
                dictionary, vocab = japanese_mention_dictionary(work, jglue)
            os.environ["MENTION_DICTIONARY"] = str(dictionary)
            extra = {"dataset_reader.entity_vocab": str(vocab)} if vocab else {}
            runs.append((", entity inputs", "configs/jglue/jsts_entities.jsonnet", extra))
            notes.append(f"entity inputs ({dictionary}): {entity_coverage(models[seeds[0]], valid, dictionary, vocab)}")
        for label, config, extra in runs:
            results, time_note = train(config, subset, valid, "jsts-entities" if extra is not None else "jsts", extra)
            pearson_ = spread([m["best_validation_pearson"] for m in results])
            spearman_ = spread([m["best_validation_spearman"] for m in results])
            rows.append(
                (
                    f"JSTS{label} (Pearson / Spearman)",
                    f"{args.jsts_train:,} of 12,451 train / 1,457 valid",
                    time_note,
                    f"{pearson_} / {spearman_}",
                    f"{chance[0]:.3f} / {chance[1]:.3f}",
                    "undefined (a constant has no correlation)",
                    f"{char[0]:.3f} / {char[1]:.3f}",
                )
            )

    if "jcqa" in tasks:  # the first --jcqa-train training questions; the whole valid split
        valid = jglue / "jcommonsenseqa-v1.3" / "valid-v1.3.json"
        subset = subset_of(jglue / "jcommonsenseqa-v1.3" / "train-v1.3.json", args.jcqa_train)
        results, time_note = train("configs/jglue/jcommonsenseqa.jsonnet", subset, valid, "jcqa")
        questions = lines_of(valid)
        majority = Counter(x["label"] for x in lines_of(subset)).most_common(1)[0][0]
        majority_accuracy = sum(x["label"] == majority for x in questions) / len(questions)
        random.seed(0)
        chance = sum(x["label"] == random.randrange(5) for x in questions) / len(questions)

        def by_overlap(x):  # the choice sharing most characters with the question (the first on a tie)
            return max(range(5), key=lambda i: (overlap(x["question"], x[f"choice{i}"]), -i))

        char = sum(x["label"] == by_overlap(x) for x in questions) / len(questions)
        rows.append(
            (
                "JCommonsenseQA (accuracy)",
                f"{args.jcqa_train:,} of 8,939 train / 1,119 valid",
                time_note,
                spread([m["best_validation_accuracy"] for m in results]),
                f"0.200 (drawn: {chance:.3f})",
                f"{majority_accuracy:.3f} (always choice {majority})",
                f"{char:.3f}",
            )
        )

    print(f"model: hidden {args.hidden_size}, {args.layers} layers; batch {args.batch_size}")
    print(f"load average before the end: {os.getloadavg()[0]:.1f}")
    for note in notes:
        print(note)
    print(
        "| task | data | setting (time) | small LUKE, no pretraining (best valid) | chance | majority / constant "
        "| character overlap |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
