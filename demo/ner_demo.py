"""
The NER part of `make demo` (its first part, `pretraining_demo.py`, pretrains the LUKE this part fine-tunes),
offline, on data it ships, in a few minutes on 2 cores. Run alone, it starts from a random LUKE:

1. writes a small NER corpus in CoNLL-2003 format (IOB1, as the real files) from the templates and name
   lists below;
2. trains a byte-level BPE tokenizer on it and builds a tiny, randomly initialised LUKE checkpoint
   (or, with `--model DIR`, fine-tunes an existing checkpoint such as the pretraining demo's);
3. `allennlp train` with the real CoNLL-2003 config (configs/ner/conll2003.jsonnet; sizes overridden);
4. `allennlp evaluate`, with one prediction per sentence;
5. `allennlp predict` on a raw sentence.
"""

import argparse
import json
import os
import random
import re
import shlex
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from luke_allennlp.evaluation.ner_baselines import dictionary_baseline  # noqa: E402

FIRST = ["Peter", "Maria", "John", "Yuki", "Ahmed", "Sofia", "Lars", "Chen", "Fatima", "Carlos", "Anna", "Ikuya"]
LAST = ["Blackburn", "Schmidt", "Tanaka", "Rossi", "Okafor", "Larsen", "Novak", "Yamada", "Dubois", "Silva"]
ORG = [["Reuters"], ["United", "Nations"], ["Acme", "Corp"], ["European", "Commission"], ["Ford", "Motor"],
       ["Bayern", "Munich"], ["World", "Bank"], ["Toyota"], ["NATO"], ["Red", "Cross"]]  # fmt: skip
LOC = [["London"], ["Brussels"], ["New", "York"], ["Tokyo"], ["Germany"], ["Brazil"], ["South", "Africa"],
       ["Paris"], ["Lake", "Geneva"], ["Osaka"]]  # fmt: skip
MISC = [["German"], ["World", "Cup"], ["Olympic"], ["Japanese"], ["Euro", "2000"], ["French"], ["Tour", "de", "France"]]
DAYS = ["Monday", "Tuesday", "Friday", "Sunday", "yesterday"]
TEMPLATES = [
    "{PER} , a spokesman for {ORG} , said on {DAY} .",
    "{ORG} opened a new office in {LOC} .",
    "{PER} flew to {LOC} to watch the {MISC} final .",
    "The {MISC} team beat {ORG} in {LOC} on {DAY} .",
    "{PER} told {ORG} that prices in {LOC} would rise .",
    "Shares of {ORG} fell after {PER} resigned .",
    "{LOC} and {ORG} signed an agreement on {DAY} .",
    "{PER} won the {MISC} title for the second time .",
    "Police in {LOC} said {PER} was not hurt .",
    "{ORG} said it expects growth in {LOC} next year .",
]


def sentence(rng: random.Random):
    words, tags = [], []
    for piece in rng.choice(TEMPLATES).split():
        if piece.startswith("{") and piece.endswith("}"):
            kind = piece[1:-1]
            if kind == "DAY":
                words.append(rng.choice(DAYS)), tags.append("O")
                continue
            name = {"PER": lambda: [rng.choice(FIRST), rng.choice(LAST)], "ORG": lambda: rng.choice(ORG),
                    "LOC": lambda: rng.choice(LOC), "MISC": lambda: rng.choice(MISC)}[kind]()  # fmt: skip
            words += name
            tags += [f"I-{kind}"] * len(name)  # IOB1, as CoNLL-2003 ships
        else:
            words.append(piece), tags.append("O")
    return words, tags


def write_corpus(path: Path, documents: int, rng: random.Random) -> None:
    with path.open("w", encoding="utf-8") as f:
        for _ in range(documents):
            f.write("-DOCSTART- -X- -X- O\n\n")
            for _ in range(rng.randint(3, 6)):
                for word, tag in zip(*sentence(rng)):
                    f.write(f"{word} NN O {tag}\n")
                f.write("\n")


def build_tiny_luke(directory: Path, corpus: Path) -> None:
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    from luke_allennlp.modeling import LukeConfig, LukeEncoder
    from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB

    directory.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    words = [line.split()[0] for line in corpus.read_text().splitlines() if line and not line.startswith("-DOCSTART-")]
    special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator([" ".join(words)], vocab_size=600, min_frequency=1, special_tokens=special)
    bpe.save_model(str(directory))
    tokenizer = RobertaTokenizerFast(str(directory / "vocab.json"), str(directory / "merges.txt"))
    tokenizer.save_pretrained(str(directory))
    config = LukeConfig(
        vocab_size=len(tokenizer), entity_vocab_size=len(TASK_ENTITY_VOCAB), hidden_size=64, entity_emb_size=32,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=130,
        type_vocab_size=1, layer_norm_eps=1e-5,
    )  # fmt: skip
    LukeEncoder(config).save_pretrained(str(directory))


# Where each allennlp run logs (set by `main`s to OUTPUT/logs), and how often a running command reports.
LOGS = REPO / "output" / "demo" / "logs"
HEARTBEAT_SECONDS = 15
SHOWN_VARIABLES = ("MODEL_NAME", "TRAIN_DATA_PATH", "VALIDATION_DATA_PATH", "CORPUS")


def use_logs(directory: Path) -> None:
    """Logs of this run's allennlp commands go to `directory`, emptied first (so that they are numbered from 01)."""
    global LOGS
    shutil.rmtree(directory, ignore_errors=True)
    LOGS = directory


def shown_path(word: str) -> str:
    """A path under the repository as a relative one (the commands are shown to be pasted from its root)."""
    try:
        return str(Path(word).relative_to(REPO)) if os.path.isabs(word) else word
    except ValueError:
        return word


def start_allennlp(threads: int) -> None:
    """
    Imports allennlp, its plugins and this project once, before the first command: each command then runs in a
    process forked from this one (`allennlp`), which saves the ~7 CPU-seconds an `allennlp` executable spends
    importing (30 s and more of waiting when other jobs share the cores). torch computes with `threads` threads
    (OMP_NUM_THREADS for the children): the demo's tiny models gain little from a second thread on a quiet
    machine, and on a shared one every small operation waits for it (a pretraining epoch took 2 to 3 times as
    long with two threads as with one while other jobs ran).
    """
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    import allennlp.__main__  # noqa: F401  (the executable's logging set-up)
    from allennlp.commands import main  # noqa: F401
    from allennlp.common.plugins import import_plugins

    import_plugins()


def forked(function, log: Path, env: Optional[dict] = None) -> None:
    """
    Runs `function()` in a child process (fork) with its output (stdout and stderr) in `log`, from the repository
    root with `env` as its environment; prints every HEARTBEAT_SECONDS the time so far and the log's latest line
    (allennlp's progress bar while it trains), so that a slow machine is not silent for minutes. Exits with the
    end of the log if the child fails.
    """
    start = time.monotonic()
    sys.stdout.flush(), sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(output, 1), os.dup2(output, 2)
            # (new streams on them too, in case sys.stdout/stderr were not the descriptors, as under pytest)
            sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
            sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
            os.chdir(REPO)
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            function()
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os._exit(code)
    heartbeat = start + HEARTBEAT_SECONDS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.2)
        if time.monotonic() >= heartbeat:
            heartbeat += HEARTBEAT_SECONDS
            print(f"  {time.monotonic() - start:5.0f} s  {latest_line(log)}", flush=True)
    code = os.waitstatus_to_exitcode(status)
    if code:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:])
        sys.exit(f"{log.stem} failed (exit status {code}); the end of {log}:\n{tail}")
    print(f"  done in {time.monotonic() - start:.0f} s", flush=True)


def new_log(name: str) -> Path:
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{len(list(LOGS.glob('*.log'))) + 1:02d}-{name}.log"
    print(f"  log: {shown_path(str(log))}  (follow it with: tail -f {shown_path(str(log))})", flush=True)
    return log


def allennlp(*args: str, env: dict) -> None:
    """
    Runs an allennlp command from the repository root with its output in LOGS/NN-<command>.log (see `forked`),
    after printing it as it can be pasted into a shell. The command runs as the `allennlp` executable would run it,
    in a child of this process (see `start_allennlp`).
    """
    from allennlp.commands import main as allennlp_main

    executable = Path(sys.executable).with_name("allennlp")
    variables = [f"{name}={shlex.quote(shown_path(env[name]))}" for name in SHOWN_VARIABLES if env.get(name)]
    print("\n$ " + " ".join(variables + [shlex.quote(shown_path(str(executable)))] + [shlex.quote(shown_path(a)) for a in args]),
          flush=True)  # fmt: skip

    def command() -> None:
        sys.argv = [str(executable), *args]
        allennlp_main(prog="allennlp")

    forked(command, new_log(args[0]), env)


def latest_line(log: Path, width: int = 110) -> str:
    """
    What the log says now: while allennlp trains, the epoch, the batches done and the running loss of its
    progress bar (`epoch 4/30, batch 16/20, loss 4.653`); otherwise the last line (a bar redrawn after carriage
    returns counts as its latest state), without the logging prefix.
    """
    with log.open("rb") as f:
        f.seek(max(0, log.stat().st_size - 65536))
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", f.read().decode("utf-8", errors="replace"))  # tqdm's cursor moves
    pieces = [p.strip() for line in text.splitlines() for p in line.split("\r") if p.strip()]
    bars = [p for p in pieces if "||:" in p]  # allennlp's training and validation bars: "metrics ||: tqdm"
    if bars:
        metrics, _, bar = bars[-1].partition("||:")
        epochs = re.findall(r"Epoch (\d+)/(\d+)", text)
        batches, loss = re.search(r"(\d+/\d+) \[", bar), re.search(r"(?<!_)loss: ([\d.]+)", metrics)
        parts = [f"epoch {int(epochs[-1][0]) + 1}/{int(epochs[-1][1]) + 1}"] if epochs else []
        parts += [f"batch {batches.group(1)}"] if batches else []
        parts += [f"loss {loss.group(1)}"] if loss else []
        if parts:
            return ", ".join(parts)
    line = pieces[-1] if pieces else "(nothing logged yet)"
    line = re.sub(r"^\d{4}-\d\d-\d\d [\d:,]+ - \w+ - ", "", line)  # the logging prefix
    return line if len(line) <= width else line[: width - 3] + "..."


def read_sentences(path: Path):
    """(words, IOB1 tags) of each sentence of a CoNLL-format file."""
    sentences, words, tags = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        columns = line.split()
        if columns and columns[0] != "-DOCSTART-":
            words.append(columns[0]), tags.append(columns[-1])
        elif words:
            sentences.append((words, tags))
            words, tags = [], []
    return sentences


def offline_env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def write_corpora(directory: Path):
    """The demo's NER training and development files."""
    rng = random.Random(13)
    train, dev = directory / "train.txt", directory / "dev.txt"
    write_corpus(train, 60, rng)
    write_corpus(dev, 12, rng)
    return train, dev


def fine_tune(out: Path, model_dir: Path, train: Path, dev: Path, epochs: int, env: dict) -> None:
    """Trains, evaluates and runs the NER model from `model_dir` with the allennlp command."""
    env = {**env, "MODEL_NAME": str(model_dir), "TRAIN_DATA_PATH": str(train), "VALIDATION_DATA_PATH": str(dev)}
    # The paper's config, scaled to a tiny model: shorter windows, a larger learning rate.
    overrides = {"dataset_reader.max_seq_length": 64, "trainer.num_epochs": epochs, "data_loader.batch_sampler.batch_size": 16,
                 "trainer.optimizer.lr": 2e-3, "trainer.learning_rate_scheduler.warmup_ratio": 0.1}  # fmt: skip
    run = out / "ner-model"
    allennlp("train", "configs/ner/conll2003.jsonnet", "-s", str(run), "-f", "-o", json.dumps(overrides), env=env)
    metrics, predictions = out / "dev_metrics.json", out / "dev_predictions.jsonl"
    allennlp("evaluate", str(run / "model.tar.gz"), str(dev), "--output-file", str(metrics),
             "--predictions-output-file", str(predictions), env=env)  # fmt: skip
    raw = out / "raw_input.jsonl"
    raw.write_text(
        json.dumps({"sentence": "Maria Rossi , a spokesman for Toyota , said the Japanese market in Osaka grew ."})
        + "\n"
    )
    predicted = out / "raw_prediction.jsonl"
    allennlp("predict", str(run / "model.tar.gz"), str(raw), "--output-file", str(predicted), "--silent", env=env)

    scores = json.loads(metrics.read_text())
    dev_sentences = read_sentences(dev)
    lookup = dictionary_baseline(read_sentences(train), dev_sentences)
    print(f"\nNER on the dev file ({len(dev_sentences)} sentences), span-level scores:")
    print(f"  {'':<44} {'F1':>6} {'precision':>10} {'recall':>7}")
    for name, row in [("LUKE fine-tuned here", scores), ("baseline: the training names looked up", lookup),
                      ("baseline: everything O", {"f1": 0.0, "precision": 0.0, "recall": 0.0})]:  # fmt: skip
        print(f"  {name:<44} {row['f1']:6.3f} {row['precision']:10.3f} {row['recall']:7.3f}")
    print("  (the generated dev sentences reuse the training names, so the lookup is strong here; for a small LUKE")
    print("  without pretraining on real CoNLL-2003, against the same lookup, see benchmarks/ner_learning_check.py)")
    print(f"\ndata:              {shown_path(str(train))}, {shown_path(str(dev))}")
    print(f"LUKE checkpoint:   {shown_path(str(model_dir))}")
    print(f"trained model:     {shown_path(str(run / 'model.tar.gz'))}")
    print(f"dev metrics:       {shown_path(str(metrics))}")
    print(
        f"dev predictions:   {shown_path(str(predictions))}  (one JSON line per sentence: words, tags, gold_tags, entities)"
    )
    print(f"raw prediction:    {shown_path(str(predicted))}")
    print(predicted.read_text().strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=REPO / "output" / "demo")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--model", type=Path, help="a LUKE checkpoint to fine-tune (default: a new random tiny LUKE)")
    parser.add_argument("--threads", type=int, default=1, help="torch's threads (default 1: see start_allennlp)")
    args = parser.parse_args()
    out = args.output.resolve()
    (out / "data").mkdir(parents=True, exist_ok=True)
    use_logs(out / "logs")
    start_allennlp(args.threads)
    train, dev = write_corpora(out / "data")
    model_dir = args.model.resolve() if args.model else out / "tiny-luke"
    if args.model is None:
        print(
            f"\n# a byte-level BPE tokenizer trained on the NER corpus, a tiny random LUKE: {shown_path(str(model_dir))}"
        )
        forked(lambda: build_tiny_luke(model_dir, train), new_log("tiny-luke"))
    fine_tune(out, model_dir, train, dev, args.epochs, offline_env())


if __name__ == "__main__":
    main()
