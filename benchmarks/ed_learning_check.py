"""
Entity disambiguation and linking learned from the real 206-page Wikipedia dump, evaluated on held-out pages:

1. the dump's articles are split by page id: every `--holdout`-th is held out; two dumps are written, the
   training pages (with every redirect and other page) and the held-out ones;
2. from the training dump only: the entity vocabulary (`build-entity-vocab --include-missing-pages`, every linked
   title, since the dump lacks most pages), the mention dictionary (`build-mention-dictionary`, p(entity | name)
   over the training pages: the candidates) and the training corpus (`build-pretraining-corpus`); the held-out
   corpus with the same vocabulary, links outside it kept as [UNK] (they count as wrong);
3. `allennlp train configs/entity_disambiguation/wikipedia.jsonnet` from a small random LUKE (no pretrained weights
   can be downloaded here; so the entity table is trained too, `freeze_entity_embeddings: false`);
4. `allennlp evaluate` on the held-out pages' links with global and local inference: in-KB accuracy against the
   p(e|m) prior on the same mentions, candidate recall, and both on the mentions whose gold entity is a candidate
   and on those of them with at least two candidates;
5. end-to-end linking of the held-out articles' text (names found with the dictionary, `mention_detection`), span +
   entity P/R/F1 against their links, against linking every found name to its most probable candidate.

    python benchmarks/ed_learning_check.py [--epochs 4] [--output output/ed_check]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from luke_allennlp.testing import SMALL, shared_data_dir  # noqa: E402

ALLENNLP = str(Path(sys.executable).with_name("allennlp"))
CONFIG = "configs/entity_disambiguation/wikipedia.jsonnet"


def allennlp(*args: str, env: dict) -> None:
    print("$ allennlp", " ".join(args)[:300], flush=True)
    subprocess.run(
        [ALLENNLP, *args], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def split_dump(dump: Path, out: Path, every: int):
    """(training dump, held-out dump, held-out page ids): every `every`-th article (by page id) is held out."""
    from luke_allennlp.wikipedia.dump import WikiDump, write_dump

    pages = list(WikiDump(dump))
    articles = sorted(p.page_id for p in pages if p.is_article and p.text.strip())
    held = set(articles[::every])
    write_dump(out / "train.xml.bz2", [p for p in pages if p.page_id not in held])
    write_dump(out / "held_out.xml.bz2", [p for p in pages if p.page_id in held or not p.is_article])
    return out / "train.xml.bz2", out / "held_out.xml.bz2", held


def evaluate(archive: Path, data: Path, out: Path, env: dict, overrides: dict) -> dict:
    allennlp(
        "evaluate",
        str(archive),
        str(data),
        "--output-file",
        str(out.with_suffix(".json")),
        "--predictions-output-file",
        str(out.with_suffix(".jsonl")),
        "-o",
        json.dumps(overrides),
        env=env,
    )
    return json.loads(out.with_suffix(".json").read_text())


def subset_accuracy(predictions: Path, reader, data: Path) -> dict:
    """
    Accuracy of the model and of the prior on the mentions whose gold entity is a candidate ("answerable"), and on
    those of them with at least two candidates ("ambiguous"; with one, both are right by construction).
    """
    counts: collections.Counter = collections.Counter()
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    instances = list(reader.read(str(data)))
    assert len(lines) == len(instances)
    for line, instance in zip(lines, instances):
        for predicted, meta in zip(line["mentions"], instance["metadata"]["mentions"]):
            if meta["gold"] not in meta["candidates"]:
                continue
            for subset in ("answerable", "ambiguous") if len(meta["candidates"]) >= 2 else ("answerable",):
                counts[subset] += 1
                counts[subset, "model"] += predicted.get("entity") == meta["gold"]
                counts[subset, "prior"] += meta["candidates"][0] == meta["gold"]
    return {
        subset: {
            "mentions": counts[subset],
            "model": counts[subset, "model"] / max(counts[subset], 1),
            "prior": counts[subset, "prior"] / max(counts[subset], 1),
        }
        for subset in ("answerable", "ambiguous")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=REPO / "output" / "ed_check")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--holdout", type=int, default=10)
    parser.add_argument("--max-seq-length", type=int, default=256)
    parser.add_argument("--min-link-probability", type=float, default=0.01, help="for finding names in raw text")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep what an earlier (interrupted) run of the same --output wrote: the data if its corpora "
        "exist, the training if run/model.tar.gz exists",
    )
    args = parser.parse_args()
    out = args.output.resolve()
    if not args.reuse:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    started = time.time()

    from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader
    from luke_allennlp.resources.entity_disambiguation import write_benchmark
    from luke_allennlp.resources.entity_vocab import EntityVocab
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
    from luke_allennlp.testing import save_roberta_tokenizer, write_tiny_luke_mlm
    from luke_allennlp.training.metrics import EntityLinkingF1
    from luke_allennlp.wikipedia.linked_documents import linked_documents

    train_dump, held_dump, held = split_dump(
        shared_data_dir() / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2", out, args.holdout
    )
    if not (args.reuse and (out / "corpus-held-out" / "metadata.json").exists()):
        save_roberta_tokenizer(out / "tokenizer")
        allennlp(
            "build-entity-vocab", str(train_dump), str(out / "entity_vocab.jsonl"), "--include-missing-pages", env=env
        )
        allennlp(
            "build-mention-dictionary",
            str(train_dump),
            str(out / "mentions.json"),
            "--include-missing-pages",
            "--min-link-probability",
            "0",
            "--num-workers",
            "2",
            env=env,
        )
        for name, dump, unknown in (("corpus-train", train_dump, "drop"), ("corpus-held-out", held_dump, "unk")):
            allennlp(
                "build-pretraining-corpus",
                str(dump),
                str(out / "tokenizer"),
                str(out / "entity_vocab.jsonl"),
                str(out / name),
                "--max-seq-length",
                str(args.max_seq_length),
                "--unknown-entities",
                unknown,
                "--num-workers",
                "2",
                env=env,
            )
    vocab = EntityVocab.from_file(out / "entity_vocab.jsonl")
    sizes = {k: v for k, v in SMALL.items() if k != "entity_vocab_size"}
    model = write_tiny_luke_mlm(out / "small-luke", list(vocab), **sizes)
    prepared = time.time() - started

    overrides = {
        "train_data_path": str(out / "corpus-train"),
        "validation_data_path": str(out / "corpus-held-out"),
        "dataset_reader.pages": "all",
        "validation_dataset_reader.pages": "all",
        "dataset_reader.max_seq_length": args.max_seq_length,
        "validation_dataset_reader.max_seq_length": args.max_seq_length,
        "model.freeze_entity_embeddings": False,
        "model.inference": "local",
        "trainer.num_epochs": args.epochs,
        "trainer.optimizer.lr": args.lr,
    }
    run = out / "run"
    train_env = {
        **env,
        "MODEL_NAME": str(model),
        "MENTION_DICTIONARY": str(out / "mentions.json"),
        "TRAIN_DATA_PATH": "unused",
        "VALIDATION_DATA_PATH": "unused",
    }
    started_training = time.time()
    if not (args.reuse and (run / "model.tar.gz").exists()):
        shutil.rmtree(run, ignore_errors=True)
        allennlp("train", CONFIG, "-s", str(run), "-o", json.dumps(overrides), env=train_env)
    training = time.time() - started_training

    archive = run / "model.tar.gz"
    results = {}
    for inference in ("global", "local"):
        started_eval = time.time()
        results[inference] = evaluate(
            archive, out / "corpus-held-out", out / f"eval_{inference}", env, {"model.inference": inference}
        )
        results[inference]["seconds"] = time.time() - started_eval
    reader = LukeEntityDisambiguationReader(
        str(model), mention_dictionary=str(out / "mentions.json"), max_seq_length=args.max_seq_length
    )
    subsets = {
        inference: subset_accuracy(out / f"eval_{inference}.jsonl", reader, out / "corpus-held-out")
        for inference in results
    }

    # End-to-end linking of the held-out articles, in the benchmarks' format.
    dictionary = MentionDictionary.from_file(out / "mentions.json")
    documents_stats = collections.Counter()
    documents = list(
        linked_documents(str(held_dump), dictionary, page_ids=held, include_missing_pages=True, stats=documents_stats)
    )
    write_benchmark(documents, out / "held_out.csv")
    linking_overrides = {
        "model.inference": "global",
        "validation_dataset_reader.mention_detection": True,
        "validation_dataset_reader.min_link_probability": args.min_link_probability,
    }
    linking = evaluate(archive, out / "held_out.csv", out / "linking", env, linking_overrides)
    detector = LukeEntityDisambiguationReader(
        str(model),
        mention_dictionary=str(out / "mentions.json"),
        mention_detection=True,
        min_link_probability=args.min_link_probability,
        max_seq_length=args.max_seq_length,
    )
    prior_linker = EntityLinkingF1()
    for instance in detector.read(str(out / "held_out.csv")):
        meta = instance["metadata"]
        predicted = [(m["start"], m["end"], m["candidates"][0]) for m in meta["mentions"] if m["candidates"]]
        prior_linker([predicted], [[tuple(link) for link in meta["gold_links"]]])

    metadata = {
        name: json.loads((out / name / "metadata.json").read_text()) for name in ("corpus-train", "corpus-held-out")
    }
    epochs = [json.loads((run / f"metrics_epoch_{e}.json").read_text()) for e in range(args.epochs)]
    print(
        f"\nheld-out pages: {len(held)} of {len(held) * args.holdout} articles; entity vocabulary {len(vocab)} (training pages' links)"
    )
    for name, m in metadata.items():
        print(
            f"{name}: {m['pages']} pages, {m['sequences']} sequences of <= {args.max_seq_length} subwords, {m['entities']} entity mentions"
            f" ({m.get('unk_entities', 0)} [UNK])"
        )
    print("\nepoch  training loss  training acc. (masked)  held-out acc. (local)  held-out prior")
    for e, m in enumerate(epochs):
        print(
            f"{e + 1:5d}  {m['training_loss']:13.3f}  {m['training_accuracy']:22.3f}  {m['validation_accuracy']:21.3f}  {m['validation_prior_accuracy']:14.3f}"
        )
    print(
        "\nheld-out links (in-KB accuracy over every gold mention; no candidate / gold outside vocabulary or candidates = wrong)"
    )
    for inference, r in results.items():
        print(
            f"  {inference}: accuracy {r['accuracy']:.4f}, prior {r['prior_accuracy']:.4f}, candidate recall {r['candidate_recall']:.4f}, "
            f"mentions {int(r['mentions'])}, without candidates {int(r['mentions_without_candidates'])}, "
            f"gold outside vocabulary {int(r['gold_outside_vocabulary'])}; {r['seconds']:.0f} s"
        )
        for subset, a in subsets[inference].items():
            print(f"    {subset} ({a['mentions']} mentions): model {a['model']:.4f}, prior {a['prior']:.4f}")
    prior = prior_linker.get_metric()
    print(
        f"\nend-to-end linking of the {len(documents)} held-out articles ({documents_stats['mentions']} gold links; names with "
        f"link probability >= {args.min_link_probability}):"
    )
    print(
        f"  model (global): P {linking['linking_precision']:.4f} R {linking['linking_recall']:.4f} F1 {linking['linking_f1']:.4f}"
    )
    print(f"  prior (most probable candidate): P {prior['precision']:.4f} R {prior['recall']:.4f} F1 {prior['f1']:.4f}")
    print(
        f"\ndata {prepared:.0f} s, training {training:.0f} s ({args.epochs} epochs), all {time.time() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
