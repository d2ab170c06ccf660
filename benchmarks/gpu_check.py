"""
The script to run first whenever a GPU machine is at hand (a lent one has minutes, not hours): every config in
configs/ trains a few steps on the device with a tiny checkpoint (bf16; one config also in fp16, one compiled with
CUDA graphs), then `benchmarks/trainer_throughput.py`'s measurements of LUKE pretraining and NER fine-tuning, eager
and compiled: the real `allennlp train` loop against the bare model step, MFU, host syncs a step, the data pipeline's
stall at a pass start, NER against `transformers.LukeForEntitySpanClassification`, a profiler trace of 5 steps.

    python benchmarks/gpu_check.py --out gpu-check                      # CUDA: about 8 minutes (--budget-s)
    python benchmarks/gpu_check.py --device cpu --quick --out check     # the same rows, tiny and short (CI)

`--out DIR` gets `gpu_check.json` and `gpu_check.md`, rewritten after every row, so a run cut short still leaves
its report, and the profiler traces. Every row has a time limit (a share of `--budget-s`); a row that fails or runs
out of time records its one-line error and the run goes on. On CUDA every row runs under
`torch.cuda.set_sync_debug_mode("warn")`, its synchronising calls counted.

The JSON: `configs` maps each config file (relative to the repository) to `{"status": "ok" | the error, "seconds",
"steps", "cuda_syncs"}`; `variants` the fp16 and the CUDA-graph rows likewise; `throughput` maps "pretraining",
"ner" (eager) and "pretraining_compiled", "ner_compiled" to `loop_over_bare`, `mfu` (null on a CPU),
`host_syncs_per_step` (the trainer's `audit_host_syncs`: the most host syncs counted in a step that reports no
metrics, the run's first step apart; on CUDA `cuda_syncs_per_step`, PyTorch's own count of the same steps, and
`sync_events`, where the worst step synchronised; null in the compiled rows and where the trainer has no audit),
`pass_start_stall_steps` (the longest wait for a pass's first batch after the run's first, in median step times)
and the figures behind them, with `profile`, the summary of the profiled steps (on CUDA each step's kernel time
against its wall time, and the kernels that took most; the CPU's operators elsewhere); `settings` what ran. The compiled rows (and the CUDA-graph variant) have
`compile_events`: dynamo's graphs and graph breaks, inductor's CUDA-graph skips, and the static-shape buckets' log
lines (`graphs`, one a bucket compiled; `reused`, one a bucket whose graph dynamo held already; `warnings`, a bucket
compiled again or run uncompiled), what a compiled row needs to say why it is not faster. The trainer loop's first epoch is audited, its second timed: the
audit passes every operation through Python, which slows the step it counts.

Sizes: the config rows use the tests' tiny checkpoints (hidden 32, 2 layers). On CUDA the throughput rows run LUKE
base (500,000 entities, 32 sequences of 512 subwords a step) eager; compiled they run the "small" LUKE by default,
since compiling base took 3.5 minutes on the H100, half the budget (`--compiled-size base` where time allows). The
pretraining corpus (the real 206-page dump) is repeated until both epochs fit in one pass, so that the timed epoch
holds no pass boundary.
"""

import argparse
import contextlib
import gzip
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a missing local file fails fast: the GPU machine has no network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import trainer_throughput as throughput  # noqa: E402
from allennlp.commands.train import train_model_from_file  # noqa: E402
from allennlp.common import Params  # noqa: E402
from allennlp.common.util import prepare_environment  # noqa: E402
from allennlp.data import Vocabulary  # noqa: E402

from luke_allennlp.testing import shared_data_dir, write_tiny_checkpoint  # noqa: E402

FINE_TUNING_TINY = {"data_loader.batch_sampler.batch_size": 8, "dataset_reader.max_seq_length": 64}
TINY_BY_FOLDER = {
    "entity_disambiguation": {
        "data_loader.batch_sampler.batch_size": 8,
        "dataset_reader.max_seq_length": 128,
        "validation_dataset_reader.max_seq_length": 128,
    },
    "jglue": {"data_loader.batch_sampler.batch_size": 8, "trainer.optimizer.lr": 1e-3},
    "pretraining": {
        "distributed": None,
        "trainer.num_gradient_accumulation_steps": 1,
        "data_loader.batch_size": 8,
        "data_loader.num_workers": 0,
        "trainer.learning_rate_scheduler.warmup_steps": 1,
    },
}
# The tiny checkpoint of each config, by the first of these words in its name (LUKE otherwise), as in the tests.
MODELS = [
    ("multilingual", "mluke"),
    ("roberta", "roberta"),
    ("bio_crf", "roberta"),
    ("bert", "bert"),
    ("xlnet", "xlnet"),
    ("squad", "luke_squad"),
]
# Fine-tuning data by config name prefix (slices of the real files of the shared data).
DATA = {
    "conll2003": "conll",
    "conll_multilingual": "german_conll",
    "open_entity": "open_entity",
    "tacred": "tacred",
    "semeval": "semeval",
    "kbp37": "kbp37",
    "squad": "squad",
    "record": "record",
}
# Names linked on SQuAD's first page ("Super Bowl 50") for its entity inputs, and the tiny LUKE's entities.
SQUAD_LINKS = {
    "Super Bowl": "Super Bowl",
    "National Football League": "National Football League",
    "NFL": "National Football League",
    "Denver Broncos": "Denver Broncos",
    "Broncos": "Denver Broncos",
    "Carolina Panthers": "Carolina Panthers",
    "Cam Newton": "Cam Newton",
}
VARIANTS = {
    "fp16": ("configs/relation_classification/semeval.jsonnet", {"trainer.precision": "fp16"}),
    "cuda_graphs": ("configs/ner/conll2003.jsonnet", {"model.embedder.compile": "reduce-overhead"}),
}


MIN_ROW_S = 5.0  # a row with less time left than this is skipped


class RowTimeout(BaseException):
    """A row's time is up (a BaseException: torch.compile's and allennlp's `except Exception` must not swallow it)."""


def one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:400]


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raises RowTimeout in this (the main) thread after `seconds`: CUDA work is asynchronous, Python is not."""

    def expire(signum, frame):
        raise RowTimeout(f"over its limit of {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def counted_cuda_syncs(device: torch.device):
    """On CUDA, `torch.cuda.set_sync_debug_mode("warn")` for the row, its warnings counted (None on a CPU)."""
    counter: Dict[str, Optional[int]] = {"count": None}
    if device.type != "cuda":
        yield counter
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield counter
        finally:
            torch.cuda.set_sync_debug_mode("default")
            counter["count"] = sum("synchroniz" in str(w.message) for w in caught)


# --- inputs of the config rows ------------------------------------------------------------------------------------


class Inputs:
    """Tiny checkpoints and slices of the shared data, built once, when a config first needs them."""

    def __init__(self, work: Path):
        self.work = work
        self._built: Dict[str, Any] = {}

    @property
    def data(self) -> Path:  # (looked up in a row: a missing folder is that row's error)
        return shared_data_dir()

    def get(self, name: str):
        if name not in self._built:
            self._built[name] = getattr(self, f"_{name}")(self.work / name)
        return self._built[name]

    # checkpoints
    def _luke(self, d):
        return write_tiny_checkpoint(d, "luke")

    def _roberta(self, d):
        return write_tiny_checkpoint(d, "roberta")

    def _bert(self, d):
        return write_tiny_checkpoint(d, "bert")

    def _xlnet(self, d):
        return write_tiny_checkpoint(d, "xlnet")

    def _mluke(self, d):
        from luke_allennlp.testing import save_xlmr_tokenizer

        save_xlmr_tokenizer(d / "tokenizer")
        return write_tiny_checkpoint(d / "model", "mluke", tokenizer=d / "tokenizer")

    def _luke_japanese(self, d):
        return write_tiny_checkpoint(d, "luke-japanese")

    def _luke_squad(self, d):
        directory = write_tiny_checkpoint(d, "luke")
        titles = ["[PAD]", "[UNK]", "[MASK]"] + sorted(set(SQUAD_LINKS.values()))
        (directory / "entity_vocab.json").write_text(json.dumps({t: i for i, t in enumerate(titles)}))
        return directory

    def _roberta_mlm(self, d):
        from tests.pretraining_corpus import write_tiny_roberta_mlm

        return write_tiny_roberta_mlm(d)

    # data
    def _write(self, d: Path, name: str, text: str) -> Path:
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text, encoding="utf-8")
        return d / name

    def _conll(self, d):
        return self._write(d, "slice.txt", conll_documents(self.data / "conll2003" / "eng.testa", 2))

    def _german_conll(self, d):
        return REPO / "tests" / "fixtures" / "data" / "conll2003_german_sample.txt"

    def _open_entity(self, d):
        examples = json.loads((self.data / "open_entity" / "train.json").read_text())[:40]
        return self._write(d, "slice.json", json.dumps(examples))

    def _semeval(self, d):
        lines = (self.data / "semeval2010_task8" / "TRAIN_FILE.TXT").read_text().splitlines()[: 40 * 4]
        return self._write(d, "slice.txt", "\n".join(lines) + "\n")

    def _kbp37(self, d):
        return REPO / "tests" / "fixtures" / "data" / "kbp37_sample.txt"

    def _tacred(self, d):
        return self.data / "tacred_sample" / "train.json"

    def _record(self, d):
        return self.data / "record" / "record_sample.json"

    def _squad(self, d):  # the first two paragraphs of SQuAD 1.1 dev
        squad = json.loads((self.data / "squad1.1" / "dev-v1.1.json").read_text(encoding="utf-8"))
        article = squad["data"][0]
        article = {**article, "paragraphs": article["paragraphs"][:2]}
        return self._write(d, "slice.json", json.dumps({"version": squad["version"], "data": [article]}))

    def _squad_mentions(self, d):
        dictionary = {
            "version": 1,
            "dump": "handwritten",
            "min_link_probability": 0.0,
            "stats": {},
            "pages": {"Super Bowl 50": SQUAD_LINKS},
            "link_probability": dict.fromkeys(SQUAD_LINKS, 0.5),
        }
        return self._write(d, "mention_dictionary.json", json.dumps(dictionary))

    def _pretraining_corpus(self, d):
        from tests.pretraining_corpus import write_corpus

        return write_corpus(d, self.data / "conll2003" / "eng.train")

    def _ed_wikipedia(self, d):
        from tests.entity_disambiguation import build_wikipedia_ed_data

        return build_wikipedia_ed_data(d)

    def _ed_conll(self, d):
        from tests.entity_disambiguation import write_conll_benchmark

        return write_conll_benchmark(d)

    def _jglue_mentions(self, d):
        from tests.jglue import write_mention_dictionary

        return write_mention_dictionary(d)


def conll_documents(path: Path, count: int) -> str:
    """The first `count` documents of a CoNLL-2003 file, as they are."""
    lines = path.read_text().split("\n")
    end = [i for i, line in enumerate(lines) if line.startswith("-DOCSTART-")][count]
    return "\n".join(lines[:end]) + "\n"


def config_run(config: Path, inputs: Inputs, work: Path, runs: Dict[str, Path]) -> Tuple[Dict[str, str], dict]:
    """The extVars and the overrides that make a config a tiny run on the check's data."""
    folder, name = config.parent.name, config.stem
    if folder == "pretraining":
        env = {"MODEL_NAME": str(inputs.get("roberta_mlm")), "CORPUS": str(inputs.get("pretraining_corpus"))}
        if name == "luke_base_stage2":
            if "luke_base_stage1" not in runs:
                raise RuntimeError("stage 2 starts from stage 1's archive, which did not train")
            env["STAGE1_ARCHIVE"] = str(runs["luke_base_stage1"] / "model.tar.gz")
        return env, dict(TINY_BY_FOLDER[folder])
    if folder == "entity_disambiguation":
        data = inputs.get("ed_wikipedia" if name == "wikipedia" else "ed_conll")
        train = data["corpus"] if name == "wikipedia" else data["benchmark"]
        env = {
            "MODEL_NAME": str(data["model"]),
            "TRAIN_DATA_PATH": str(train),
            "VALIDATION_DATA_PATH": str(train),
            "MENTION_DICTIONARY": str(inputs.get("ed_wikipedia")["dictionary"]),
        }
        return env, dict(TINY_BY_FOLDER[folder])
    if folder == "jglue":
        from tests.jglue import write_task_data

        train, valid = write_task_data(name, work / "data")
        env = {
            "MODEL_NAME": str(inputs.get("luke_japanese")),
            "TRAIN_DATA_PATH": str(train),
            "VALIDATION_DATA_PATH": str(valid),
        }
        overrides = dict(TINY_BY_FOLDER[folder])
        if name.endswith("_entities"):
            mentions, vocab = inputs.get("jglue_mentions")
            env["MENTION_DICTIONARY"] = str(mentions)
            overrides["dataset_reader.entity_vocab"] = str(vocab)
        return env, overrides
    model = next((m for word, m in MODELS if word in name), "luke")
    data = inputs.get(next(d for prefix, d in DATA.items() if name.startswith(prefix)))
    env = {"MODEL_NAME": str(inputs.get(model)), "TRAIN_DATA_PATH": str(data), "VALIDATION_DATA_PATH": str(data)}
    if name.startswith("squad"):
        env["MENTION_DICTIONARY"] = str(inputs.get("squad_mentions"))
    return env, dict(FINE_TUNING_TINY)


# --- the report ---------------------------------------------------------------------------------------------------


class Report:
    """`gpu_check.json` and `gpu_check.md` in --out, rewritten (atomically) after every row."""

    def __init__(self, out: Path, settings: Dict[str, Any]):
        self.out = out
        self.data: Dict[str, Any] = {"settings": settings, "configs": {}, "variants": {}, "throughput": {}}
        out.mkdir(parents=True, exist_ok=True)

    def write(self) -> None:
        for name, text in (("gpu_check.json", json.dumps(self.data, indent=2)), ("gpu_check.md", self.markdown())):
            temporary = self.out / f".{name}.tmp"
            temporary.write_text(text + "\n")
            temporary.replace(self.out / name)

    def markdown(self) -> str:
        s = self.data["settings"]
        lines = [
            f"# gpu_check: {s.get('device_name')} ({s.get('device')}), torch {s.get('torch')}, transformers "
            f"{s.get('transformers')}",
            "",
            f"{s.get('started')}; budget {s.get('budget_s')} s; elapsed {s.get('elapsed_s', 0):.0f} s",
            "",
            "| config | status | seconds | steps | CUDA syncs |",
            "|---|---|---|---|---|",
        ]
        rows = list(self.data["configs"].items()) + [
            (f"{k}: {v['config']}", v) for k, v in self.data["variants"].items()
        ]
        for config, row in rows:
            lines.append(
                f"| {config} | {row.get('status', 'running')} | {row.get('seconds', 0):.1f} | {row.get('steps', '')} | "
                f"{_text(row.get('cuda_syncs'))} |"
            )
        lines += [
            "",
            "| throughput | status | size | loop/bare | MFU | host syncs / step (CUDA's count) | pass-start stall (steps) | "
            "loop tokens/s | bare tokens/s | bare / transformers | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for task, row in self.data["throughput"].items():
            mfu, syncs = row.get("mfu"), _text(row.get("host_syncs_per_step"))
            if row.get("cuda_syncs_per_step") is not None:
                syncs += f" ({row['cuda_syncs_per_step']})"
            lines.append(
                f"| {task} | {row.get('status', 'running')} | {row.get('size', '')} | {_text(row.get('loop_over_bare'), '.2f')} | "
                f"{'' if mfu is None else f'{mfu:.1%}'} | {syncs} | "
                f"{_text(row.get('pass_start_stall_steps'), '.2f')} | {_text(row.get('loop_tokens_per_second'), ',.0f')} | "
                f"{_text(row.get('bare_tokens_per_second'), ',.0f')} | {_text(row.get('bare_over_transformers'), '.2f')} | "
                f"{row.get('seconds', 0):.0f} |"
            )
        profiled = [(task, row["profile"]) for task, row in self.data["throughput"].items() if row.get("profile")]
        if profiled:
            lines += ["", "| profiled steps | wall ms / step | busy ms / step | most time |", "|---|---|---|---|"]
        for task, profile in profiled:
            most = "; ".join(f"{op['name'][:40]} {op['share']:.0%}" for op in profile["top"][:3] if op["share"])
            lines.append(f"| {task} | {profile['wall_ms_per_step']} | {profile['busy_ms_per_step']} | {most} |")
        compiled = [(name, row.get("compile_events")) for name, row in rows + list(self.data["throughput"].items())]
        compiled = [(name, events) for name, events in compiled if events]
        if compiled:
            lines += ["", "| compiled row | graphs | graph breaks | CUDA-graph skips | buckets | bucket warnings |"]
            lines.append("|---|---|---|---|---|---|")
        for name, events in compiled:
            lines.append(
                f"| {name} | {events.get('unique_graphs')} | {events.get('graph_breaks')} | {events.get('cudagraph_skips')} | "
                f"{len(events.get('graphs', []))} | {len(events.get('warnings', []))} |"
            )
        return "\n".join(lines)


def _text(value: Any, spec: str = "") -> str:
    return "" if value is None else format(value, spec)


# --- rows ---------------------------------------------------------------------------------------------------------


def run_row(
    report_rows: Dict[str, Any],
    key: str,
    limit: float,
    device: torch.device,
    body: Callable[[Dict[str, Any]], None],
    report: Report,
) -> dict:
    """Runs one row under its time limit and the CUDA sync counter, its output (and a failure's traceback) in
    `logs/` of --out; records its status and the figures `body` put in the row (also those of a row that failed
    or ran out of time half-way: `body` may write the report as it goes)."""
    start = time.perf_counter()
    row: Dict[str, Any] = report_rows.setdefault(key, {})
    log = report.out / "logs" / (key.replace("/", "-").replace(".jsonnet", "") + ".log")
    log.parent.mkdir(exist_ok=True)
    if limit < MIN_ROW_S:
        row["status"] = "skipped: the budget ran out"
    else:
        syncs: Dict[str, Optional[int]] = {"count": None}
        with redirected_output(log) as output:
            try:
                with counted_cuda_syncs(device) as syncs, time_limit(limit):
                    body(row)
                row["status"] = "ok"
            except (Exception, RowTimeout) as error:  # noqa: BLE001  (every failure is the row's one-line status)
                row["status"] = one_line(error)
                traceback.print_exc(file=output)
                output.flush()
            finally:
                if device.type == "cuda":
                    torch.cuda.empty_cache()
        row["cuda_syncs"] = syncs["count"]
        row["log"] = str(log.relative_to(report.out))
    row["seconds"] = round(time.perf_counter() - start, 2)
    report.write()
    print(f"[{time.strftime('%H:%M:%S')}] {key}: {row['status']} ({row['seconds']:.1f} s)", flush=True)
    return report_rows[key]


@contextlib.contextmanager
def redirected_output(log: Path):
    """This process's stdout and stderr (file descriptors 1 and 2: C++ output and data-loader workers too) to `log`."""
    sys.stdout.flush(), sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log, "w") as output:
        os.dup2(output.fileno(), 1), os.dup2(output.fileno(), 2)
        try:
            yield output
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])


def recording_compile_events(body: Callable[[Dict[str, Any]], None]) -> Callable[[Dict[str, Any]], None]:
    """`body`, with the row's `compile_events` (filled as the row ends, if it fails too)."""

    def recorded(row: Dict[str, Any]) -> None:
        with compile_events() as events:
            row["compile_events"] = events
            body(row)

    return recorded


def config_body(config: Path, overrides: dict, inputs: Inputs, args, runs: Dict[str, Path], work: Path):
    def body(row: Dict[str, Any]) -> None:
        directory = work / "runs" / f"{config.parent.name}-{config.stem}-{len(runs)}"
        env, tiny = config_run(config, inputs, directory, runs)
        os.environ.update(env)
        final = {
            **tiny,
            "trainer.num_epochs": 1,
            "data_loader.batches_per_epoch": args.config_steps,
            "trainer.cuda_device": 0 if args.device == "cuda" else -1,
            "trainer.precision": args.precision,
            **overrides,
        }
        train_model_from_file(str(config), str(directory / "run"), overrides=json.dumps(final), force=True)
        runs[config.stem] = directory / "run"
        metrics = json.loads((directory / "run" / "metrics.json").read_text())
        if not metrics.get("training_loss", 0) > 0:
            raise RuntimeError(f"training loss {metrics.get('training_loss')}")
        row["steps"] = args.config_steps

    return recording_compile_events(body) if any(key.endswith(".compile") for key in overrides) else body


def lengthen_corpus(corpus: Path, sequences: int) -> Path:
    """The corpus repeated until it holds at least `sequences` rows (a timed epoch then holds no pass start)."""
    import datasets

    metadata = json.loads((corpus / "metadata.json").read_text())
    copies = -(-sequences // metadata["sequences"])
    if copies <= 1:
        return corpus
    longer = corpus.with_name(corpus.name + f"-x{copies}")
    shutil.rmtree(longer, ignore_errors=True)
    dataset = datasets.load_from_disk(str(corpus))
    datasets.concatenate_datasets([dataset] * copies).save_to_disk(str(longer))
    for item in corpus.iterdir():  # the tokenizer and entity vocabulary beside the rows
        if not (longer / item.name).exists():
            (shutil.copytree if item.is_dir() else shutil.copy)(item, longer / item.name)
    for key in ("sequences", "words", "entities"):
        metadata[key] *= copies
    (longer / "metadata.json").write_text(json.dumps(metadata, indent=2))
    return longer


def audit_available() -> bool:
    try:
        import luke_allennlp.training.trainers.sync_audit  # noqa: F401
    except ImportError:
        return False
    return True


def trainer_figures(trainer, steps: int) -> Dict[str, Any]:
    """From the trainer after training: the audit's host syncs a step without a report (the audited steps but the
    run's first, whose count is `host_syncs_first_step`), PyTorch's own count of the same steps on a GPU, the events
    of the step that had the most, and the pass-start stall against the median step of the last (timed, not audited)
    epoch. None where the trainer does not have them."""
    figures: Dict[str, Any] = {"host_syncs_per_step": None, "pass_start_stall_steps": None}
    counts = getattr(trainer, "host_sync_counts", None)
    if counts:
        quiet = [(count, step) for step, reported, count in counts[1:] if not reported]
        figures["host_syncs_per_step"] = max(quiet)[0] if quiet else None
        figures["host_syncs_first_step"] = counts[0][2]
        figures["host_syncs_reported_step"] = max((c for _, r, c in counts if r), default=None)
        figures["audited_steps"] = len(counts)
        cuda = [(count, step) for step, reported, count in getattr(trainer, "cuda_sync_counts", [])[1:] if not reported]
        if cuda:
            figures["cuda_syncs_per_step"] = max(cuda)[0]
        worst = max(quiet + cuda)[1] if quiet + cuda else None
        events = [e for step, listed in getattr(trainer, "host_sync_events", []) if step == worst for e in listed]
        if events:
            figures["sync_events"] = events[:12]  # where the worst quiet step synchronised
    times, waits = getattr(trainer, "step_times", None), getattr(trainer, "pass_start_waits", None)
    if times and waits:
        median = statistics.median(times[-steps:])
        later = waits[1:] or waits  # the run's first pass also pays for starting the workers
        figures["pass_start_stall_steps"] = round(max(later) / median, 3) if median else None
        figures["first_pass_start_wait_s"] = round(waits[0], 4)
        figures["median_step_s"] = round(median, 5)
    return figures


@contextlib.contextmanager
def compile_events():
    """What `torch.compile` did inside the block, in a dict filled at its end: dynamo's new graphs and graph breaks,
    inductor's CUDA-graph skips (a captured step falls back to launching kernels), and the static-shape buckets' log
    (`luke_allennlp.modeling.static_shapes`: `graphs`, one line per bucket compiled, `reused`, one per bucket whose
    graph dynamo already held (the bare step's model after the trainer's), and `warnings`, a bucket compiled again
    or run uncompiled: the recompiles that matter; dynamo's counters hold no count of recompiles). What a compiled row
    needs to say why it is not faster."""
    import logging

    from torch._dynamo.utils import counters

    def totals() -> Dict[str, int]:
        return {
            "unique_graphs": counters["stats"]["unique_graphs"],
            "graph_breaks": sum(counters["graph_break"].values()),
            "cudagraph_skips": counters["inductor"]["cudagraph_skips"],
        }

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.INFO)
            self.lines: Dict[str, List[str]] = {"graphs": [], "reused": [], "warnings": []}

        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            kind = "graphs" if message.startswith("torch.compile: graph ") else "reused"
            self.lines["warnings" if record.levelno >= logging.WARNING else kind].append(message)

    logger = logging.getLogger("luke_allennlp.modeling.static_shapes")
    handler, level, before = Lines(), logger.level, totals()
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    events: Dict[str, Any] = {}
    try:
        yield events
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        events.update({k: v - before[k] for k, v in totals().items()}, **handler.lines)


@contextlib.contextmanager
def captured_trainers():
    """The trainers `allennlp train` builds in this process (for what they measured)."""
    from luke_allennlp.training.trainers.luke_gradient_descent import LukeGradientDescentTrainer

    trainers: list = []
    original = LukeGradientDescentTrainer.train

    def train(self):
        trainers.append(self)
        return original(self)

    LukeGradientDescentTrainer.train = train
    try:
        yield trainers
    finally:
        LukeGradientDescentTrainer.train = original


def memory_by_micro_batch(
    model, optimizer, batch: dict, device: torch.device, precision: str, factors=(1, 2, 4)
) -> Dict[str, Any]:
    """Peak memory (CUDA) and speed of one training step at micro-batches of `factors` x the batch's rows (its rows
    repeated), up to the first that runs out of memory: what configs/lib/pretraining.libsonnet's micro-batch rule
    assumes (weights, gradients and AdamW state, plus a share per sequence), fitted from the two largest that ran."""
    dtype = {"bf16": torch.bfloat16, "fp32": None}[precision]
    rows = len(batch["word_ids"])
    found: Dict[str, Any] = {"peak_gb": {}, "tokens_per_second": {}}
    for factor in factors:
        size = rows * factor
        repeated = {
            k: torch.cat([v] * factor)
            if isinstance(v, torch.Tensor)
            else list(v) * factor
            if isinstance(v, list)
            else v
            for k, v in batch.items()
        }
        tokens = int(throughput.count_tokens(repeated)[0])
        try:
            for timed in (False, True):
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                throughput.synchronize(device)
                start = time.perf_counter()
                optimizer.zero_grad()
                with torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext():
                    loss = model(**throughput.move_to_device(repeated, device))["loss"]
                loss.backward()
                optimizer.step()
                throughput.synchronize(device)
                if timed:
                    found["tokens_per_second"][str(size)] = round(tokens / (time.perf_counter() - start))
        except torch.OutOfMemoryError:
            found["peak_gb"][str(size)] = "out of memory"
            optimizer.zero_grad()
            break
        if device.type == "cuda":
            found["peak_gb"][str(size)] = round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
    measured = [(int(k), v) for k, v in found["peak_gb"].items() if isinstance(v, float)]
    if len(measured) >= 2:
        (small, low), (large, high) = measured[-2:]
        found["per_sequence_gb"] = round((high - low) / (large - small), 3)
        found["fixed_gb"] = round(low - found["per_sequence_gb"] * small, 2)
    return found


def profile_steps(
    model, optimizer, batches: List[dict], device: torch.device, precision: str, path: Path, steps: int
) -> Dict[str, Any]:
    """A profiler trace (Chrome format, gzipped) of `steps` training steps of the bare model, and its summary
    (`profile_summary`), which the report keeps should the trace not come back."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    dtype = {"bf16": torch.bfloat16, "fp32": None}[precision]
    with profile(activities=activities) as profiler:
        start = time.perf_counter()
        for batch in (batches * steps)[:steps]:
            optimizer.zero_grad()
            with torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext():
                loss = model(**batch)["loss"]
            loss.backward()
            optimizer.step()
        throughput.synchronize(device)
        wall = time.perf_counter() - start
    raw = path.with_suffix("")
    profiler.export_chrome_trace(str(raw))
    with open(raw, "rb") as source, gzip.open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    raw.unlink()
    return profile_summary(profiler.key_averages(), device, steps, wall)


def profile_summary(averages, device: torch.device, steps: int, wall: float, top: int = 12) -> Dict[str, Any]:
    """Where a profiled step's time went: on CUDA the kernels (their time a step, and the device's busy time against
    the step's wall time under the profiler: what is left is the device waiting for the host), on the CPU the
    operators' self time; the `top` by time, with calls and share."""
    if device.type == "cuda":
        from torch.autograd import DeviceType

        events = [e for e in averages if e.device_type == DeviceType.CUDA]  # the kernels (and copies) themselves
        times = [e.self_device_time_total for e in events]
    else:
        events = list(averages)
        times = [e.self_cpu_time_total for e in events]
    busy = sum(times) / 1e3 / steps  # ms a step
    ranked = sorted(zip(times, events), key=lambda pair: -pair[0])[:top]
    return {
        "wall_ms_per_step": round(wall * 1e3 / steps, 3),
        "busy_ms_per_step": round(busy, 3),
        "top": [
            {
                "name": event.key[:100],
                "calls_per_step": event.count / steps,
                "ms_per_step": round(time_us / 1e3 / steps, 3),
                "share": round(time_us / 1e3 / steps / busy, 4) if busy else None,
            }
            for time_us, event in ranked
        ],
    }


def throughput_body(task: str, compiled: bool, paths: Dict[str, Path], args, work: Path, report: Report):
    def body(row: Dict[str, Any]) -> None:
        size = args.compiled_size if compiled else args.size
        run_args = argparse.Namespace(**{**vars(args), "compile": args.compile_mode if compiled else False})
        if compiled and size != args.size:
            run_args.size = size
            paths_here = throughput.prepare(work / f"compiled-{size}", run_args, corpus=paths["corpus"])
        else:
            paths_here = paths
        setup = throughput.task_setup(task, paths_here, run_args)
        if audit_available() and not compiled:
            # The first epoch is audited, the second timed: the audit passes every operation through Python, which
            # slowed the eager GPU loop it timed. (Compiled rows: dynamo guards on the modes active when it compiles.)
            setup["overrides"].update({"trainer.audit_host_syncs": True, "trainer.audited_steps": args.steps})
        workers = throughput.config_params(setup)["data_loader"].get("num_workers", 0)
        name = f"{task}{'-compiled' if compiled else ''}"
        if args.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        with captured_trainers() as trainers:
            loop = throughput.trainer_loop(setup, work / f"run-{name}")
        row.update(
            size=size,
            compile=run_args.compile,
            workers=workers,
            steps=args.steps,
            loop_tokens_per_second=loop["training_tokens_per_second"],
        )
        row.update(trainer_figures(trainers[-1], args.steps))
        del trainers
        report.write()  # (what a row cut short leaves)
        vocab = Vocabulary.from_files(str(work / f"run-{name}" / "vocabulary"))
        batches, pipeline = throughput.collect_batches(throughput.config_params(setup), vocab, args.steps)
        device = torch.device(args.device)
        # Compiled: a first pass over the batches compiles every bucket they hit, the second is timed.
        steps, warmup = (batches * 2, len(batches)) if compiled else (batches, 2)
        bare, model, optimizer = throughput.bare_steps(
            throughput.config_params(setup), vocab, steps, device, args.precision, warmup=warmup, with_optimizer=True
        )
        tokens = loop["training_tokens_per_second"]
        row.update(
            loop_tokens_per_second=tokens,
            bare_tokens_per_second=bare,
            loop_over_bare=tokens / bare,
            pipeline_tokens_per_second=pipeline["tokens_per_second"],
            padding_fraction=loop.get("training_padding_fraction"),
            mfu=None,
        )
        report.write()
        if device.type == "cuda":
            row["peak_gpu_memory_gb"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
            flops = throughput.flops_per_token(model, batches, task)
            row["mfu"] = throughput.mfu(tokens, flops, device)
            row["bare_mfu"] = throughput.mfu(bare, flops, device)
        if task == "ner":
            reference = throughput.transformers_ner_steps(model, batches, device, args.precision, warmup=2)
            row.update(
                transformers_tokens_per_second=reference,
                bare_over_transformers=bare / reference,
                loop_over_transformers=tokens / reference,
            )
            report.write()
        if task == "pretraining" and not compiled:  # the micro-batch the config's rule picks, measured
            row["memory_by_micro_batch"] = memory_by_micro_batch(model, optimizer, batches[-1], device, args.precision)
            report.write()
        moved = [throughput.move_to_device(b, device) for b in batches[: args.profile_steps]]
        trace = report.out / f"trace-{name}.json.gz"
        row["profile"] = profile_steps(model, optimizer, moved, device, args.precision, trace, len(moved))
        row["trace"], row["trace_steps"] = trace.name, len(moved)

    return recording_compile_events(body) if compiled else body


# --- main ---------------------------------------------------------------------------------------------------------


def all_configs() -> List[Path]:
    """The training configs (not the search spaces beside them, `*_search.jsonnet`, which `allennlp tune` reads)."""
    configs = [p for p in (REPO / "configs").rglob("*.jsonnet") if not p.stem.endswith("_search")]
    return sorted(configs, key=lambda p: (p.parent.name, p.name))


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="tiny models and few steps (a CPU check in minutes)")
    parser.add_argument("--out", required=True, help="where gpu_check.json, gpu_check.md and the traces go")
    parser.add_argument(
        "--budget-s", type=float, default=None, help="the whole run's time (default 450 s; 900 --quick)"
    )
    parser.add_argument("--configs", nargs="*", default=None, help="only these config files (default: all)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["configs", "variants", "throughput", "compiled"])
    parser.add_argument("--compiled-size", default=None, help="LUKE size of the compiled throughput rows")
    parser.add_argument("--work-dir", default=None, help="checkpoints, data and runs (default: a temporary folder)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    args.budget_s = args.budget_s or (900.0 if args.quick else 450.0)
    # The throughput rows' settings (trainer_throughput.py's arguments).
    quick = dict(size="tiny", steps=3, batch=4, ner_batch=4, words=64, entity_vocab_size=2000, max_pages=4)
    full = dict(
        size="base" if on_gpu else "small",
        steps=30 if on_gpu else 8,
        batch=32 if on_gpu else 8,
        ner_batch=8,
        words=512 if on_gpu else 128,
        entity_vocab_size=500_000 if on_gpu else 20_000,
        max_pages=None,
    )
    for key, value in (quick if args.quick else full).items():
        setattr(args, key, value)
    args.workers, args.ner_train = None, None  # the configs' data-loader workers; NER on eng.train
    args.compiled_size = args.compiled_size or ("small" if on_gpu and not args.quick else args.size)
    args.compile_mode = "reduce-overhead" if on_gpu else True
    args.config_steps = 2 if args.quick else 20
    args.profile_steps = 1 if args.quick else 5
    args.precision = throughput.resolve_precision("auto", False, device)  # bf16 on a recent GPU, fp32 on a CPU
    prepare_environment(Params({}))
    import transformers

    throughput_keys = ("size", "compiled_size", "steps", "batch", "ner_batch", "words", "entity_vocab_size")
    settings = {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if on_gpu else "CPU",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "quick": args.quick,
        "budget_s": args.budget_s,
        "precision": args.precision,
        "config_steps": args.config_steps,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "throughput": {**{k: getattr(args, k) for k in throughput_keys}, "compile_mode": args.compile_mode},
        "host_sync_audit": audit_available(),
    }
    out = Path(args.out)
    report = Report(out, settings)
    report.write()
    print(
        f"gpu_check: {settings['device_name']}, torch {torch.__version__}, budget {args.budget_s:.0f} s -> {out}",
        flush=True,
    )

    def left() -> float:
        report.data["settings"]["elapsed_s"] = round(time.perf_counter() - started, 1)
        return args.budget_s - (time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as temporary:
        work = Path(args.work_dir or temporary)
        work.mkdir(parents=True, exist_ok=True)
        inputs, runs = Inputs(work / "inputs"), {}
        configs = all_configs()
        if args.configs:
            chosen = {str((REPO / c).resolve()) for c in args.configs}
            configs = [c for c in configs if str(c.resolve()) in chosen]
        # Shares of the budget: the config rows first (their end by 40% of it, the variants' by 55%), then the throughput rows.
        config_end = 0.4 * args.budget_s
        if "configs" not in args.skip:
            for config in configs:
                key = str(config.relative_to(REPO))
                limit = min(60.0 if not args.quick else 120.0, config_end - (args.budget_s - left()))
                run_row(
                    report.data["configs"],
                    key,
                    limit,
                    device,
                    config_body(config, {}, inputs, args, runs, work),
                    report,
                )
        if "variants" not in args.skip:
            for variant, (config, overrides) in VARIANTS.items():
                if variant == "fp16" and not on_gpu:
                    continue  # fp16 autocast is a CUDA feature
                if variant == "cuda_graphs" and not on_gpu:
                    overrides = {"model.embedder.compile": True}
                report.data["variants"][variant] = {"config": config}
                limit = min(120.0, 0.55 * args.budget_s - (args.budget_s - left()))
                body = config_body(REPO / config, overrides, inputs, args, runs, work)
                run_row(report.data["variants"], variant, limit, device, body, report)
        if "throughput" not in args.skip:
            tasks = [("pretraining", False), ("ner", False)]
            if "compiled" not in args.skip:
                tasks += [("pretraining", True), ("ner", True)]
            paths: Dict[str, Path] = {}
            weights = {("pretraining", False): 1.2, ("ner", False): 1.2, ("pretraining", True): 1.0, ("ner", True): 1.0}
            for i, (task, compiled) in enumerate(tasks):
                key = f"{task}{'_compiled' if compiled else ''}"
                if not paths:  # checkpoints and the (lengthened) corpus, inside the first row's limit
                    body = prepare_body(paths, args, work)
                    run_row(report.data["throughput"], "prepare", min(120.0, left() - 60), device, body, report)
                    if report.data["throughput"]["prepare"]["status"] != "ok":
                        break
                share = weights[(task, compiled)] / sum(weights[t] for t in tasks[i:])
                body = throughput_body(task, compiled, paths, args, work, report)
                run_row(report.data["throughput"], key, left() * share - 2, device, body, report)
    left()
    report.write()
    bad = [k for k, v in report.data["configs"].items() if v["status"] != "ok"]
    print(
        f"gpu_check: {len(report.data['configs']) - len(bad)}/{len(report.data['configs'])} configs ok"
        + (f" (failed: {', '.join(bad)})" if bad else "")
        + f"; report in {out / 'gpu_check.md'}",
        flush=True,
    )
    return report.data


def prepare_body(paths: Dict[str, Path], args, work: Path):
    def body(row: Dict[str, Any]) -> None:
        paths.update(throughput.prepare(work / "throughput", args))
        if args.quick:  # NER: the first 20 documents of eng.train, not all 14,041 sentences read for the vocabulary
            args.ner_train = work / "throughput" / "eng.train-20-documents"
            args.ner_train.write_text(conll_documents(shared_data_dir() / "conll2003" / "eng.train", 20))
        # Both epochs of the loop, what the data loader reads ahead, and the pipeline's own pass in one corpus pass.
        needed = (2 * args.steps + 8) * args.batch
        paths["corpus"] = lengthen_corpus(paths["corpus"], needed)
        row["corpus_sequences"] = json.loads((paths["corpus"] / "metadata.json").read_text())["sequences"]

    return body


if __name__ == "__main__":
    main()
