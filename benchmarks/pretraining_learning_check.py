"""
Pretraining on the real 206-page Wikipedia dump of the shared data, end to end with the allennlp commands:

1. `allennlp build-entity-vocab` (titles linked at least `--min-count` times; the dump holds few of the pages
   it links to, so missing pages count as entities too) and `allennlp build-pretraining-corpus` with the
   RoBERTa tokenizer (sequences of up to 128 subwords);
2. the corpus is split by page: every `--holdout`-th page is held out for validation (masked once, fixed);
3. `allennlp train configs/pretraining/luke_base.jsonnet` from a small, randomly initialised RoBERTa (no
   pretrained weights can be downloaded here), one process;
4. prints the vocabulary's top entities, the corpus counts, and masked-entity and masked-word accuracy per
   epoch on the training and held-out pages, against chance and the most frequent entity.

    python benchmarks/pretraining_learning_check.py [--epochs 12] [--init-seed 0] [--output output/pretraining_check]

How fast the entity side starts to memorise depends much on the random initial weights: `--init-seed` sets them.
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from luke_allennlp.testing import ROBERTA_VOCAB_SIZE, SMALL, save_roberta_tokenizer, shared_data_dir  # noqa: E402

ALLENNLP = str(Path(sys.executable).with_name("allennlp"))


def allennlp(*args: str, env: dict) -> None:
    print("$ allennlp", " ".join(args), flush=True)
    subprocess.run([ALLENNLP, *args], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)


def write_small_roberta(directory: Path, seed: int = 0) -> None:
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(seed)
    sizes = {
        k: v
        for k, v in SMALL.items()
        if k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
    }
    config = RobertaConfig(vocab_size=ROBERTA_VOCAB_SIZE, max_position_embeddings=514, type_vocab_size=1, **sizes)
    RobertaForMaskedLM(config).save_pretrained(str(directory))
    save_roberta_tokenizer(directory)


def split_by_page(corpus: Path, train: Path, held_out: Path, every: int) -> None:
    """Two corpus directories: the rows of every `every`-th page (by page id order) and the rest."""
    import datasets

    rows = datasets.load_from_disk(str(corpus))
    pages = sorted(set(rows["page_id"]))
    held = set(pages[::every])
    for directory, keep in ((train, lambda r: r["page_id"] not in held), (held_out, lambda r: r["page_id"] in held)):
        rows.filter(keep).save_to_disk(str(directory))
        for name in ("metadata.json", "tokenizer", "entity_vocab.jsonl"):
            source = corpus / name
            (shutil.copytree if source.is_dir() else shutil.copy)(source, directory / name)


def entity_counts(corpus: Path) -> collections.Counter:
    import datasets

    return collections.Counter(e for row in datasets.load_from_disk(str(corpus))["entity_ids"] for e in row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=REPO / "output" / "pretraining_check")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--steps-per-epoch", type=int, default=60)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--holdout", type=int, default=10)
    parser.add_argument("--init-seed", type=int, default=0, help="the seed of the small RoBERTa's random weights")
    args = parser.parse_args()
    out = args.output.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    dump = shared_data_dir() / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"

    write_small_roberta(out / "small-roberta", args.init_seed)
    vocab, corpus = out / "entity_vocab.jsonl", out / "corpus"
    allennlp(
        "build-entity-vocab",
        str(dump),
        str(vocab),
        "--include-missing-pages",
        "--min-count",
        str(args.min_count),
        env=env,
    )
    allennlp(
        "build-pretraining-corpus",
        str(dump),
        str(out / "small-roberta"),
        str(vocab),
        str(corpus),
        "--max-seq-length",
        "128",
        "--num-workers",
        "2",
        env=env,
    )
    train, held_out = out / "corpus-train", out / "corpus-held-out"
    split_by_page(corpus, train, held_out, args.holdout)

    overrides = {
        "distributed": None,
        "trainer.num_gradient_accumulation_steps": 1,
        "data_loader.batch_size": 16,
        "data_loader.batches_per_epoch": args.steps_per_epoch,
        "data_loader.num_workers": 0,
        "trainer.num_epochs": args.epochs,
        "trainer.optimizer.lr": 2e-3,
        "trainer.learning_rate_scheduler.warmup_steps": 40,
        "validation_data_path": str(held_out),
        "validation_data_loader": {"batch_size": 32},
        "validation_dataset_reader": {
            "type": "luke_pretraining",
            "dynamic_masking": False,
            "shuffle": False,
            "seed": 1,
        },
    }
    run = out / "run"
    allennlp(
        "train",
        "configs/pretraining/luke_base.jsonnet",
        "-s",
        str(run),
        "-o",
        json.dumps(overrides),
        env={**env, "MODEL_NAME": str(out / "small-roberta"), "CORPUS": str(train)},
    )

    lines = [json.loads(line) for line in vocab.read_text().splitlines()]
    print("\ntop entities:", ", ".join(f"{e['entities'][0][0]} ({e['count']})" for e in lines[3:13]))
    metadata = json.loads((corpus / "metadata.json").read_text())
    print(
        "corpus:",
        {k: metadata[k] for k in ("pages", "sentences", "sequences", "words", "entities", "entity_vocab_size")},
    )
    counts, held_counts = entity_counts(train), entity_counts(held_out)
    top, top_count = counts.most_common(1)[0]
    print(
        f"held-out pages: {len(set(__import__('datasets').load_from_disk(str(held_out))['page_id']))}, "
        f"entities {sum(held_counts.values())}; chance 1/{metadata['entity_vocab_size']} = {1 / metadata['entity_vocab_size']:.4f}; "
        f"most frequent training entity ({lines[top]['entities'][0][0]}): {top_count / sum(counts.values()):.4f} of training "
        f"and {held_counts[top] / sum(held_counts.values()):.4f} of held-out entities"
    )
    print("\nepoch  train_entity_acc  held_out_entity_acc  train_word_acc  held_out_word_acc  held_out_entity_ppl")
    for epoch in range(args.epochs):
        m = json.loads((run / f"metrics_epoch_{epoch}.json").read_text())
        print(
            f"{epoch + 1:5d}  {m['training_masked_entity_accuracy']:16.3f}  {m['validation_masked_entity_accuracy']:19.3f}  "
            f"{m['training_masked_lm_accuracy']:14.3f}  {m['validation_masked_lm_accuracy']:17.3f}  "
            f"{m['validation_masked_entity_perplexity']:19.1f}"
        )
    print(f"training took {json.loads((run / 'metrics.json').read_text())['training_duration']}")


if __name__ == "__main__":
    main()
