"""
`make demo`, first stage: pretraining LUKE from a Wikipedia dump, offline, then fine-tuning it for NER.

1. `allennlp build-tokenizer`: a byte-level BPE tokenizer trained on the text of the project's own sample dump
   (`demo/data/demo-pages-articles.xml.bz2`, see `make_demo_dump.py`) and of the NER demo's corpus; a tiny
   randomly initialised RoBERTa with it (the stand-in for `roberta-base`, which is not downloadable here);
2. `allennlp build-entity-vocab` and `allennlp build-pretraining-corpus` on the dump;
3. `allennlp train configs/pretraining/luke_base.jsonnet` (sizes and steps scaled down): masked language
   modelling + masked entity prediction;
4. `allennlp export-luke`: a transformers `LukeForMaskedLM` directory;
5. the NER demo (`ner_demo.py`) fine-tunes that checkpoint with `configs/ner/conll2003.jsonnet`.
"""

import argparse
import json
import random
import shutil
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "demo"))

import ner_demo  # noqa: E402

DUMP = REPO / "demo" / "data" / "demo-pages-articles.xml.bz2"
TINY_ROBERTA = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                    max_position_embeddings=130, type_vocab_size=1, layer_norm_eps=1e-5)  # fmt: skip


def entity_baselines(corpus: Path):
    """Masked-entity accuracy of guessing uniformly among the corpus's entities, and of always guessing its most
    frequent one (the share of its mentions; [PAD] and [UNK] are never targets)."""
    import datasets

    counts = Counter(e for row in datasets.load_from_disk(str(corpus))["entity_ids"] for e in row if e > 2)
    return 1 / len(counts), max(counts.values()) / sum(counts.values())


def build_tiny_roberta(directory: Path, tokenizer_dir: Path) -> None:
    """A random RobertaForMaskedLM of the tiny sizes over the tokenizer of `tokenizer_dir`, saved with it."""
    import torch
    from transformers import AutoTokenizer, RobertaConfig, RobertaForMaskedLM

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    tokenizer.save_pretrained(str(directory))
    torch.manual_seed(0)
    RobertaForMaskedLM(RobertaConfig(vocab_size=len(tokenizer), **TINY_ROBERTA)).save_pretrained(str(directory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=REPO / "output" / "demo")
    parser.add_argument("--epochs", type=int, default=5, help="pretraining epochs of 20 steps")
    parser.add_argument("--ner-epochs", type=int, default=10)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch's threads (default 1: see ner_demo.start_allennlp)"
    )
    args = parser.parse_args()
    out = args.output.resolve()
    (out / "data").mkdir(parents=True, exist_ok=True)
    env = ner_demo.offline_env()
    ner_demo.use_logs(out / "logs")
    ner_demo.start_allennlp(args.threads)

    ner_train, ner_dev = ner_demo.write_corpora(out / "data")
    ner_words = [
        line.split()[0] for line in ner_train.read_text().splitlines() if line and not line.startswith("-DOCSTART-")
    ]
    (out / "data" / "ner-words.txt").write_text(" ".join(ner_words) + "\n", encoding="utf-8")
    tokenizer = out / "tokenizer"
    shutil.rmtree(tokenizer, ignore_errors=True)  # the command writes only into an empty directory
    ner_demo.allennlp("build-tokenizer", str(DUMP), str(out / "data" / "ner-words.txt"), str(tokenizer),
                      "--model", "bpe", "--vocab-size", "800", "--num-workers", "1", env=env)  # fmt: skip
    print(f"\n# a tiny random RoBERTa over that tokenizer: {ner_demo.shown_path(str(out / 'tiny-roberta'))}")
    ner_demo.forked(lambda: build_tiny_roberta(out / "tiny-roberta", tokenizer), ner_demo.new_log("tiny-roberta"))

    vocab, corpus = out / "entity_vocab.jsonl", out / "pretraining-corpus"
    shutil.rmtree(corpus, ignore_errors=True)  # the command builds a new corpus only into an empty directory
    ner_demo.allennlp("build-entity-vocab", str(DUMP), str(vocab), env=env)
    ner_demo.allennlp("build-pretraining-corpus", str(DUMP), str(out / "tiny-roberta"), str(vocab), str(corpus),
                      "--max-seq-length", "128", "--num-workers", "1", env=env)  # fmt: skip

    # The paper's recipe scaled to a tiny model from scratch: one process, small batches, a larger learning rate.
    overrides = {"distributed": None, "trainer.num_gradient_accumulation_steps": 1,
                 "data_loader.batch_size": 16, "data_loader.batches_per_epoch": 20, "data_loader.num_workers": 0,
                 "trainer.num_epochs": args.epochs, "trainer.optimizer.lr": 5e-3,
                 "trainer.learning_rate_scheduler.warmup_steps": 20}  # fmt: skip
    run = out / "pretraining"
    ner_demo.allennlp("train", "configs/pretraining/luke_base.jsonnet", "-s", str(run), "-f", "-o", json.dumps(overrides),
                      env={**env, "MODEL_NAME": str(out / "tiny-roberta"), "CORPUS": str(corpus)})  # fmt: skip
    exported = out / "luke-pretrained"
    ner_demo.allennlp("export-luke", str(run / "model.tar.gz"), str(exported), env=env)

    pretraining = json.loads((run / "metrics.json").read_text())
    first = json.loads((run / "metrics_epoch_0.json").read_text())
    corpus_counts = json.loads((corpus / "metadata.json").read_text())
    print(f"\npretraining corpus: {corpus}  ({corpus_counts['sequences']} sequences, {corpus_counts['words']} subwords, "
          f"{corpus_counts['entities']} entities of {corpus_counts['entity_vocab_size']})")  # fmt: skip
    for name in ("masked_entity_accuracy", "masked_lm_accuracy"):
        print(
            f"training {name}: {first['training_' + name]:.3f} (epoch 1) -> {pretraining['training_' + name]:.3f} (last)"
        )
    chance, frequent = entity_baselines(corpus)
    print(
        f"  masked-entity baselines: chance {chance:.3f}, always the most frequent entity {frequent:.3f} "
        "(accuracy on the training rows, with new masks every pass: a check that the pipeline learns)"
    )
    print(f"exported LUKE:      {exported}\n")
    ner_demo.fine_tune(out, exported, ner_train, ner_dev, args.ner_epochs, env)


if __name__ == "__main__":
    random.seed(0)
    main()
