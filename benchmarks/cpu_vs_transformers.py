"""
Where users run LUKE today, the CPU: this project against transformers' LUKE classes (what a user would pick instead),
every ratio of issue 41 in one run. Same weights, same inputs, fp32, one thread; the two sides alternate round by
round, their order reversed every other round (`wording.paired`), and each figure is the median with the min-max over
the rounds, of the thread's CPU time (what the machine's other processes took is left out; wall time is printed
too). Ratios are transformers / ours: above 1, ours is faster (or smaller).

1. `encoder`: `LukeEncoder` against `transformers.LukeModel`, a training step (forward + backward, dropout 0.1) and
   inference (`torch.inference_mode`), at the paper's task shapes: relation classification (128 words, 2 entities),
   entity typing (128 words, 1 entity), an NER pass (512 words, 128 span entities), pretraining (512 words, 32
   entities). Goal: >= 1.2 at base width.
2. `ner`: the span model's training step (forward, backward, AdamW) of `configs/ner/conll2003.jsonnet` at its own
   settings (512 subwords, 128 spans a pass, batches of 8 sentences) on real eng.train sentences, against
   `transformers.LukeForEntitySpanClassification` with the same weights on the same passes, and the peak memory of a
   step of each (peak RSS, each side in a process of its own). Goal: >= 1.5, no more memory.
3. `predict`: real CoNLL-2003 sentences (eng.testa, `{"words": [...]}` lines), `allennlp predict`'s loop (the NER
   predictor; batches by length) against a transformers script doing the same tokenisation (`LukeTokenizer` with every
   span of up to 16 words, 128 a pass), forward passes and greedy decoding, each at its best batch size. Goal: >= 1.5.
4. `startup`: time to the first prediction: a fresh `allennlp predict` of one sentence on a model archive (its
   extraction cached; also the first run, which extracts it) against a fresh Python that loads the same weights
   exported for transformers (`allennlp export-luke`), tokenizes and predicts that sentence. Goal: <= 1.2 (time).

    python benchmarks/cpu_vs_transformers.py --size base    # every ratio; about an hour on a quiet 2-core machine
    python benchmarks/cpu_vs_transformers.py --quick        # tiny sizes, one round of each: seconds (CI)
    python benchmarks/cpu_vs_transformers.py --size base --sections encoder --rounds 7

The checkpoints are random (`build-tiny-checkpoint --size base` shapes; nothing is downloaded); the work files (a
checkpoint, an NER archive and its transformers export) go to `--work-dir` and are reused by later runs.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import encoder_speed  # noqa: E402
import startup  # noqa: E402
import torch  # noqa: E402
from transformers_ner import TransformersNer  # noqa: E402
from wording import median, paired, progress, spread  # noqa: E402

SIZES = {
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128),
}
# (name, batch, words, entities) at base; --quick: a tenth of the words and entities
ENCODER_SHAPES = [
    ("relation classification", 4, 128, 2),
    ("entity typing", 4, 128, 1),
    ("NER pass", 2, 512, 128),
    ("pretraining", 2, 512, 32),
]
GOALS = {"encoder": 1.2, "ner": 1.5, "predict": 1.5, "startup": 1 / 1.2}


class Report:
    """The ratio lines, printed as they come and again together at the end."""

    def __init__(self) -> None:
        self.lines: List[str] = []

    def ratio(self, what: str, reference: Sequence[tuple], ours: Sequence[tuple], goal: float, unit: str = "") -> float:
        value = median(reference) / median(ours)
        met = "goal met" if value >= goal else "GOAL NOT MET"
        line = (
            f"{what}: transformers / ours = {value:.2f} (CPU time; wall {median(reference, 0) / median(ours, 0):.2f}; "
            f"goal {'>=' if goal >= 1 else '<='} {goal if goal >= 1 else 1 / goal:.2f}{unit}: {met}) | transformers "
            f"{spread(reference)}, ours {spread(ours)} [median (min-max) of {len(ours)} rounds]"
        )
        self.lines.append(line)
        print(line, flush=True)
        return value

    def note(self, line: str) -> None:
        self.lines.append(line)
        print(line, flush=True)


# --- 1. the encoder ---------------------------------------------------------------------------------------------


def encoder_section(args: argparse.Namespace, report: Report) -> None:
    sizes = SIZES[args.size]
    for name, batch, words, entities in ENCODER_SHAPES:
        if args.quick:
            batch, words, entities = 2, max(8, words // 16), max(1, entities // 16)
        shape = argparse.Namespace(
            entity_vocab_size=1000,
            hidden=sizes["hidden_size"],
            layers=sizes["num_hidden_layers"],
            heads=sizes["num_attention_heads"],
            dropout=0.1,
            batch=batch,
            words=words,
            entities=entities,
            max_mention_length=16,
        )
        reference, ours = encoder_speed.build_models(shape, torch.device("cpu"))
        inputs = encoder_speed.make_inputs(shape, torch.device("cpu"))
        difference = encoder_speed.check_equal(reference, ours, inputs)
        what = f"encoder, {name}: {batch} x ({words} words + {entities} entities)"
        report.note(f"{what}: max |ours - transformers| of the outputs {difference:.1e} (fp32, evaluation mode)")

        def train(model: torch.nn.Module, inputs: Dict[str, torch.Tensor] = inputs) -> Callable[[], None]:
            def step() -> None:
                model.train()
                model.zero_grad(set_to_none=True)
                encoder_speed.step(model, inputs, None)

            return step

        def infer(model: torch.nn.Module, inputs: Dict[str, torch.Tensor] = inputs) -> Callable[[], None]:
            def run() -> None:
                model.eval()
                with torch.inference_mode():
                    model(**inputs)

            return run

        for mode, side, warmup in (("training step", train, 1), ("inference", infer, 2)):
            # (inference: two untimed calls, as ours packs its weights at their second use)
            samples = paired(
                {"transformers": side(reference), "ours": side(ours)}, args.rounds, warmup, label=f"{what}, {mode}"
            )
            report.ratio(f"{what}, {mode}", samples["transformers"], samples["ours"], GOALS["encoder"])
        del reference, ours


# --- shared set-up: a checkpoint, the NER config's model and batches, an archive and its transformers export -------


def work_files(args: argparse.Namespace) -> Dict[str, Path]:
    """A random LUKE checkpoint of the size (RoBERTa's tokenizer), an untrained NER archive of the config over it,
    and that archive exported for transformers; made once per work directory and size."""
    from luke_allennlp.testing import write_tiny_checkpoint

    work = Path(args.work_dir) / args.size
    paths = {"luke": work / "luke", "archive": work / "ner" / "model.tar.gz", "exported": work / "ner-transformers"}
    if not (paths["luke"] / "config.json").is_file():
        progress(f"writing a random {args.size} LUKE checkpoint to {paths['luke']}")
        write_tiny_checkpoint(
            paths["luke"], "luke", entity_emb_size=256 if args.size == "base" else 32, **SIZES[args.size]
        )
    if not paths["archive"].is_file():
        progress(f"archiving the NER config's model (untrained) to {paths['archive']}")
        write_ner_archive(args, paths["luke"], paths["archive"].parent)
    if not (paths["exported"] / "config.json").is_file():
        from luke_allennlp.archival.export_luke import export_luke

        progress(f"exporting {paths['archive']} for transformers to {paths['exported']}")
        export_luke(str(paths["archive"]), str(paths["exported"]))
    return paths


def write_ner_archive(args: argparse.Namespace, checkpoint: Path, directory: Path) -> None:
    """The NER config's model, untrained (its weights as built from the checkpoint), archived as `allennlp train`
    would (`model.tar.gz`, bundling the checkpoint)."""
    from luke_allennlp.archival import archive_model

    model, _, _ = ner_model_and_batches(checkpoint, args)
    directory.mkdir(parents=True, exist_ok=True)
    config = ner_params(checkpoint, args, {}).as_dict(quiet=True)
    config["dataset_reader"].pop("max_instances", None)
    (directory / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    model.vocab.save_to_files(str(directory / "vocabulary"))
    torch.save(model.state_dict(), directory / "best.th")
    archive_model(directory)


def ner_params(checkpoint: Path, args: argparse.Namespace, overrides: Dict[str, Any]):
    from allennlp.common import Params

    os.environ.update(
        MODEL_NAME=str(checkpoint),
        TRAIN_DATA_PATH=str(conll("eng.train")),
        VALIDATION_DATA_PATH=str(conll("eng.testa")),
    )
    defaults = {
        "validation_data_path": None,
        "dataset_reader.max_instances": args.ner_sentences,
        "data_loader.batch_sampler.batch_size": getattr(args, "ner_batch_size", 8),
    }
    if args.quick:
        defaults["dataset_reader.max_seq_length"] = 64
    return Params.from_file(str(REPO / "configs" / "ner" / "conll2003.jsonnet"), json.dumps({**defaults, **overrides}))


def conll(name: str) -> Path:
    from luke_allennlp.testing import shared_data_dir

    return shared_data_dir() / "conll2003" / name


def ner_model_and_batches(checkpoint: Path, args: argparse.Namespace):
    """The config's model and optimizer (seeded), and its data loader's first batches of eng.train (seeded order)."""
    import random

    import numpy as np
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    import data_readers  # noqa: F401  (registers the readers and, through luke_allennlp.plugin, every component)

    params = ner_params(checkpoint, args, {})
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader = DataLoader.from_params(
        params=params.pop("data_loader"), reader=reader, data_path=params["train_data_path"]
    )
    vocab = Vocabulary.from_instances(loader.iter_instances())
    loader.index_with(vocab)
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    batches = []
    for batch in loader:
        batches.append(batch)
        if len(batches) == args.ner_batches:
            break
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    parameters = [[n, p] for n, p in model.named_parameters() if p.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=parameters, params=params["trainer"]["optimizer"].duplicate())
    return model, optimizer, batches


def transformers_ner(model) -> Tuple[torch.nn.Module, torch.optim.Optimizer]:
    """`LukeForEntitySpanClassification` holding the span model's weights (same entity table, classifier), and the
    config's AdamW settings."""
    import transformers

    config = model.embedder.luke.config
    keys = {k: v for k, v in config.to_dict().items() if k not in ("architectures", "model_type")}
    reference = transformers.LukeForEntitySpanClassification(
        transformers.LukeConfig(**keys, num_labels=model.classifier.out_features)
    )
    state = {f"luke.{k}": v for k, v in model.embedder.luke.state_dict().items()}
    state.update({f"classifier.{k}": v for k, v in model.classifier.state_dict().items()})
    missing, unexpected = reference.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith("luke.pooler") for k in missing), (missing, unexpected)
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-5, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    return reference, optimizer


def transformers_passes(batch: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """What the span model encodes of a batch, as `LukeForEntitySpanClassification`'s inputs: a row per (sentence,
    chunk of spans) with spans, the span slots no chunk uses cut (as the model does), padding labels ignored."""
    from luke_allennlp.data.inputs import InputCounts
    from luke_allennlp.modeling.inputs import span_position_ids

    used = max(1, int(batch["entity_attention_mask"].sum(-1).max()))
    rows = batch["entity_attention_mask"].any(-1).nonzero()
    sentence, chunk = rows[:, 0], rows[:, 1]
    take = lambda t: t[sentence, chunk, :used]  # noqa: E731
    starts, ends = take(batch["entity_start_positions"]), take(batch["entity_end_positions"])
    longest = max(counts.longest_mention for counts in InputCounts.of(batch["metadata"]))
    return dict(
        input_ids=batch["word_ids"][sentence],
        attention_mask=batch["word_attention_mask"][sentence].long(),
        entity_ids=take(batch["entity_ids"]),
        entity_attention_mask=take(batch["entity_attention_mask"]).long(),
        entity_position_ids=span_position_ids(starts, ends, longest, 30),
        entity_start_positions=starts,
        entity_end_positions=ends,
        labels=take(batch["labels"]).masked_fill(take(batch["labels"]) < 0, -100),
    )


def ner_step(model, optimizer, inputs: Dict[str, Any], reference: bool) -> float:
    optimizer.zero_grad(set_to_none=True)
    loss = model(**inputs).loss if reference else model(**inputs)["loss"]
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def passes_of(batch: Dict[str, Any]) -> Tuple[int, int, int]:
    """(passes, real tokens, padded tokens) of a batch as the span model encodes it."""
    mask = batch["entity_attention_mask"]
    used = int(mask.sum(-1).max())
    rows = mask.any(-1).nonzero()
    words = batch["word_attention_mask"][rows[:, 0]].sum()
    real = int(words + mask.sum())
    return len(rows), real, len(rows) * (batch["word_ids"].size(1) + used)


# --- 2. the NER training step -----------------------------------------------------------------------------------


def ner_section(args: argparse.Namespace, report: Report, paths: Dict[str, Path]) -> None:
    """Each side in a process of its own (`ner_side`), driven round by round, the two alternating: its steps timed,
    its peak RSS read, and its data capped (`--ner-memory-cap`), so that a step too big for the machine fails in its
    process (reported) instead of making the system kill whatever else runs."""
    cap = args.ner_memory_cap or available_memory() / 2**30 - 5  # (one side steps at a time; the other idles in ~3)
    sides = {side: NerSide(args, side, cap) for side in ("transformers", "ours")}
    for line in sides["ours"].header:
        report.note(line)
    losses = {side: process.loss for side, process in sides.items()}
    report.note(
        f"NER: loss of the first batch, ours {losses['ours']:.6f}, transformers {losses['transformers']:.6f} "
        "(evaluation mode: no dropout)"
    )
    samples: Dict[str, list] = {side: [] for side in sides}
    for round_ in range(args.ner_rounds + 1):  # (the first round warms up, untimed)
        for side in ("transformers", "ours") if round_ % 2 == 0 else ("ours", "transformers"):
            progress(f"NER training steps: round {round_ + 1} of {args.ner_rounds + 1}, {side}")
            result = sides[side].round()
            if result is not None and round_ > 0:
                samples[side].append(result)
    for process in sides.values():
        process.close()
    batches = f"{args.ner_batches} batches of real eng.train sentences a round, batch size {args.ner_batch_size}"
    failed = [side for side, process in sides.items() if process.failure]
    for side in failed:
        report.note(f"NER, {side}: a step did not fit in {cap:.1f} GiB ({sides[side].failure})")
    if not failed:
        report.ratio(f"NER training step ({batches})", samples["transformers"], samples["ours"], GOALS["ner"])
    for side, process in sides.items():
        if process.peak:
            report.note(
                f"NER step memory, {side}: peak RSS {process.peak / 2**30:.2f} GiB ({(process.peak - process.before) / 2**30:.2f} "
                f"GiB above the process before its first step)"
            )
    (ours, theirs) = sides["ours"], sides["transformers"]
    if ours.failure:
        report.note(f"NER step memory: ours did not fit in {cap:.1f} GiB: GOAL NOT MET")
    elif theirs.failure:
        report.note(
            f"NER step memory: transformers / ours > {cap * 2**30 / ours.peak:.2f} (transformers did not fit): goal met"
        )
    else:
        met = "goal met" if ours.peak <= theirs.peak else "GOAL NOT MET"
        report.note(
            f"NER step memory: transformers / ours = {theirs.peak / ours.peak:.2f} (peak RSS; the steps' own "
            f"{(theirs.peak - theirs.before) / max(1, ours.peak - ours.before):.2f}; goal: no more than transformers: "
            f"{met})"
        )


class NerSide:
    """A process running one side's NER steps (`ner_side`): `round()` runs its batches once and returns (wall, CPU)
    seconds, or None once a step failed (`failure`); `peak` is its peak RSS, `before` its RSS before the first step."""

    def __init__(self, args: argparse.Namespace, side: str, cap: float) -> None:
        progress(f"NER: starting the {side} process (its data capped at {cap:.1f} GiB)")

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_DATA, (int(cap * 2**30), int(cap * 2**30)))

        argv = [sys.executable, __file__, *sys.argv[1:], "--ner-side", side]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, preexec_fn=limit, bufsize=1
        )
        self.side, self.failure, self.peak, self.header = side, "", 0, []
        ready = self._read()
        self.loss, self.before = float(ready["loss"]), int(ready["rss"])
        self.header = ready["header"]

    def _read(self) -> Dict[str, Any]:
        line = self.process.stdout.readline()
        if not line.startswith("NER_SIDE "):
            self.process.wait()
            raise SystemExit(f"the {self.side} NER process failed (exit status {self.process.returncode})")
        return json.loads(line[len("NER_SIDE ") :])

    def round(self) -> Optional[Tuple[float, float]]:
        if self.failure:
            return None
        self.process.stdin.write("step\n")
        reply = self._read()
        self.peak = max(self.peak, reply.get("peak", 0))
        if "failure" in reply:
            self.failure = reply["failure"]
            return None
        return reply["wall"], reply["cpu"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
        self.process.wait()


def ner_side(args: argparse.Namespace, side: str) -> None:
    """The side process: the config's model (or transformers' with its weights) and batches; a round of steps per
    `step` line read, each answered with a JSON line on stdout."""
    import time

    def say(**fields: Any) -> None:
        print("NER_SIDE " + json.dumps(fields), flush=True)

    model, optimizer, batches = ner_model_and_batches(Path(args.work_dir) / args.size / "luke", args)
    header = []
    for batch in batches:
        count, real, padded = passes_of(batch)
        header.append(
            f"NER batch of {len(batch['metadata'])} sentences: {count} passes of {batch['word_ids'].size(1)} words + up "
            f"to {int(batch['entity_attention_mask'].sum(-1).max())} spans; {real:,} real tokens of {padded:,}"
        )
    reference = side == "transformers"
    if reference:
        model, optimizer = transformers_ner(model)
        batches = [transformers_passes(batch) for batch in batches]
    model.eval()
    with torch.no_grad():
        loss = float(model(**batches[0]).loss if reference else model(**batches[0])["loss"])
    model.train()
    say(loss=loss, rss=current_rss(), header=header)
    for command in sys.stdin:
        if command.strip() != "step":
            return
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            for batch in batches:
                ner_step(model, optimizer, batch, reference=reference)
        except (MemoryError, RuntimeError) as error:
            if not isinstance(error, MemoryError) and "alloc" not in str(error):
                raise
            say(failure=f"{type(error).__name__}: {str(error)[:200]}", peak=peak_rss())
            return
        say(wall=time.perf_counter() - wall, cpu=time.thread_time() - cpu, peak=peak_rss())


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def available_memory() -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))


# --- 3. prediction throughput -----------------------------------------------------------------------------------


def sentences(count: int) -> List[List[str]]:
    """The first `count` sentences of eng.testa, as words."""
    found, words = [], []
    for line in conll("eng.testa").read_text(encoding="utf-8").splitlines():
        columns = line.split()
        if not columns or columns[0] == "-DOCSTART-":
            if words:
                found.append(words)
                words = []
            if len(found) == count:
                break
        else:
            words.append(columns[0])
    return found[:count]


def predict_section(args: argparse.Namespace, report: Report, paths: Dict[str, Path]) -> None:
    from allennlp.commands.predict import _PredictManager
    from allennlp.predictors import Predictor

    import luke_allennlp.plugin  # noqa: F401  (allennlp's commands repaired, as the `allennlp` command has them)

    words = sentences(args.predict_sentences)
    work = Path(tempfile.mkdtemp(prefix="luke-predict-"))
    source = work / "in.jsonl"
    source.write_text("".join(json.dumps({"words": w}) + "\n" for w in words), encoding="utf-8")
    predictor = Predictor.from_path(str(paths["archive"]), "luke_span_ner")
    theirs = TransformersNer(str(paths["exported"]))
    sizes = [int(size) for size in args.predict_batch_sizes.split(",")]

    def ours(size: int) -> Callable[[], None]:
        return lambda: _PredictManager(predictor, str(source), str(work / "out.jsonl"), size, False, False).run()

    def reference(size: int) -> Callable[[], None]:
        def run() -> None:
            for start in range(0, len(words), size):  # in the file's order, as a script reads it
                theirs.predict(words[start : start + size])

        return run

    best: Dict[str, Tuple[int, list]] = {}
    for size in sizes:
        samples = paired(
            {"transformers": reference(size), "ours": ours(size)},
            args.predict_rounds,
            0,
            label=f"predict, batch {size}",
        )
        for side, runs in samples.items():
            report.note(f"predict, {len(words)} sentences, batch {size}, {side}: {spread(runs)}")
            if side not in best or median(runs) < median(best[side][1]):
                best[side] = (size, runs)
    (their_size, their_runs), (our_size, our_runs) = best["transformers"], best["ours"]
    report.ratio(
        f"predict {len(words)} eng.testa sentences, each side at its best batch size (transformers {their_size}, ours "
        f"{our_size}; sentences/s {len(words) / median(their_runs):.1f} and {len(words) / median(our_runs):.1f})",
        their_runs,
        our_runs,
        GOALS["predict"],
    )


# --- 4. start-up --------------------------------------------------------------------------------------------------

OURS_STARTUP = """
import sys
sys.argv = ["allennlp", "predict", {archive!r}, {source!r}, "--silent", "--output-file", {output!r}]
from allennlp.__main__ import run
try:
    run()
except SystemExit as exit:
    if exit.code:
        raise
"""

THEIRS_STARTUP = """
import runpy, sys
sys.argv = ["transformers_ner.py", {exported!r}, *{words!r}]
runpy.run_path({script!r}, run_name="__main__")
"""


def startup_section(args: argparse.Namespace, report: Report, paths: Dict[str, Path]) -> None:
    work = Path(tempfile.mkdtemp(prefix="luke-startup-"))
    words = sentences(1)[0]
    source = work / "in.jsonl"
    source.write_text(json.dumps({"words": words}) + "\n", encoding="utf-8")
    os.environ["OMP_NUM_THREADS"] = "1"
    if args.quick:  # (the cold run fills the cache the rounds use)
        args.startup_rounds = 1
    ours_code = OURS_STARTUP.format(archive=str(paths["archive"]), source=str(source), output=str(work / "out.jsonl"))
    script = str(REPO / "benchmarks" / "transformers_ner.py")
    theirs_code = THEIRS_STARTUP.format(script=script, exported=str(paths["exported"]), words=words)

    def child(code: str) -> Tuple[float, float]:
        cpu, wall, result = startup.run_child(code)
        if result.returncode != 0:
            raise SystemExit(f"start-up run failed:\n{result.stderr.decode()[-3000:]}")
        return wall, cpu

    cold = []
    for _ in range(args.startup_rounds):  # the first run of an archive: its extraction is not cached yet
        os.environ["LUKE_ARCHIVE_CACHE"] = tempfile.mkdtemp(dir=work)
        cold.append(child(ours_code))
    # (the last cold run filled its cache; the rounds below find the extraction there)
    if not args.quick:
        child(ours_code), child(theirs_code)  # bytecode written, files in the page cache
    samples: Dict[str, list] = {"transformers": [], "ours": []}
    for round_ in range(args.startup_rounds):
        order = [("ours", ours_code), ("transformers", theirs_code)]
        for side, code in order if round_ % 2 else order[::-1]:
            progress(f"start-up: round {round_ + 1} of {args.startup_rounds}, {side}")
            samples[side].append(child(code))
    report.note(f"start-up, ours with the extraction not yet cached (first run of an archive): {spread(cold, 0)} wall")
    # (time to the first prediction: wall time; below 1 the target of ours / transformers <= 1.2 is met)
    value = median(samples["ours"], 0) / median(samples["transformers"], 0)
    met = "goal met" if value <= 1.2 else "GOAL NOT MET"
    report.note(
        f"start-up to the first prediction: ours / transformers = {value:.2f} wall (CPU "
        f"{median(samples['ours']) / median(samples['transformers']):.2f}; goal <= 1.20: {met}) | transformers "
        f"{spread(samples['transformers'], 0)}, ours {spread(samples['ours'], 0)} wall [median (min-max) of "
        f"{args.startup_rounds} rounds; CPU s: transformers {spread(samples['transformers'])}, ours {spread(samples['ours'])}]"
    )


# --- main ---------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default="base")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and one round of everything (CI)")
    parser.add_argument("--sections", nargs="+", default=["encoder", "ner", "predict", "startup"])
    parser.add_argument("--rounds", type=int, default=5, help="encoder rounds (default 5)")
    parser.add_argument("--ner-rounds", type=int, default=3)
    parser.add_argument("--ner-batches", type=int, default=2, help="NER batches a round (default 2)")
    parser.add_argument("--ner-sentences", type=int, default=1000, help="eng.train sentences the loader batches")
    parser.add_argument("--predict-sentences", type=int, default=500)
    parser.add_argument("--predict-batch-sizes", default="8,32")
    parser.add_argument("--predict-rounds", type=int, default=1)
    parser.add_argument("--startup-rounds", type=int, default=3)
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "luke-cpu-vs-transformers"))
    parser.add_argument("--ner-batch-size", type=int, default=8, help="sentences a batch (the config's: 8)")
    parser.add_argument(
        "--ner-memory-cap",
        type=float,
        help="GiB each NER process may take (default: half the memory available, less 2)",
    )
    parser.add_argument("--ner-side", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.size = "tiny"
        args.rounds = args.ner_rounds = args.predict_rounds = 1
        args.startup_rounds, args.ner_batches, args.ner_sentences, args.predict_sentences = 1, 1, 40, 12
        args.predict_batch_sizes = "4"
    torch.set_num_threads(1)
    if args.ner_side:
        ner_side(args, args.ner_side)
        return

    import transformers

    load = os.getloadavg()[0]
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs ({cpu_name()}), 1 thread, size {args.size}, load average {load:.1f} at the start",
        flush=True,
    )
    report = Report()
    if "encoder" in args.sections:
        encoder_section(args, report)
    paths = work_files(args) if set(args.sections) & {"ner", "predict", "startup"} else {}
    if "ner" in args.sections:
        ner_section(args, report, paths)
    if "predict" in args.sections:
        predict_section(args, report, paths)
    if "startup" in args.sections:
        startup_section(args, report, paths)
    print(f"\nload average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; every ratio:")
    for line in report.lines:
        print(line)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


if __name__ == "__main__":
    main()
