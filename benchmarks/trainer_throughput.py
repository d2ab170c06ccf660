"""
End-to-end training throughput: the real `allennlp train` loop (reader, data loader, collation, forward, backward,
optimizer, metrics, progress bar, checkpoints) against the bare model step on the same batches, for pretraining
(configs/pretraining/luke_base.jsonnet on a corpus built from the real 206-page Wikipedia dump) and for NER
fine-tuning (configs/ner/conll2003.jsonnet on the real eng.train), in one run; also the data pipeline alone against
what the model consumes, and NER against `transformers.LukeForEntitySpanClassification` on the same batches.

    python benchmarks/trainer_throughput.py                              # CPU: a small LUKE, fp32
    python benchmarks/trainer_throughput.py --device cuda --size base --compile   # GPU: LUKE base, bf16 ("auto")

Throughput counts real tokens (words + entities, the attention masks' ones) per second. The trainer loop's figure is
that of its second epoch (the first pays for warm-up and compilation); an "epoch" is `--steps` optimizer steps. On a
GPU the model FLOPs utilisation (MFU) of pretraining divides the analytic FLOPs of the steps by time and the GPU's
dense bf16 peak. The last line prints the ratio of the trainer loop to the bare step (target >= 0.9). Pretraining
reads with the config's `data_loader.num_workers` (as users run it; `--workers N` overrides it), in the trainer loop
and in the pipeline figure alike.
"""

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from allennlp.commands.train import train_model_from_file  # noqa: E402
from allennlp.common import Params  # noqa: E402
from allennlp.common.util import prepare_environment  # noqa: E402
from allennlp.data import DataLoader, DatasetReader, Vocabulary  # noqa: E402
from allennlp.models import Model  # noqa: E402
from allennlp.nn.util import move_to_device  # noqa: E402
from allennlp.training.optimizers import Optimizer  # noqa: E402

import data_readers  # noqa: E402,F401  (registers the readers and, through luke_allennlp.plugin, every component)
from luke_allennlp.modeling.inputs import span_position_ids  # noqa: E402
from luke_allennlp.testing import ROBERTA_VOCAB_SIZE, save_roberta_tokenizer, shared_data_dir  # noqa: E402
from luke_allennlp.training.trainers.precision import resolve_precision  # noqa: E402
from luke_allennlp.training.trainers.step_metrics import count_tokens  # noqa: E402

SIZES = {
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256),
    "small": dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
}
BF16_PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --- inputs ------------------------------------------------------------------------------------------------------


def prepare(work: Path, args, corpus: Optional[Path] = None) -> Dict[str, Path]:
    """A random RoBERTa MLM checkpoint and LUKE checkpoint of the chosen size, and the pretraining corpus (from the
    dump's first `args.max_pages` pages where that is set; `corpus`, an existing one, is reused)."""
    import transformers

    from luke_allennlp.modeling import LukeConfig, LukeEncoder
    from luke_allennlp.resources.entity_vocab import EntityVocab
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab

    sizes = SIZES[args.size]
    paths = {"roberta": work / "roberta-mlm", "luke": work / "luke", "corpus": work / "corpus"}
    if corpus is not None:
        paths["corpus"] = Path(corpus)
    for path in paths.values():
        if path != corpus:
            shutil.rmtree(path, ignore_errors=True)  # what an earlier run left in --work-dir
    torch.manual_seed(0)
    config = transformers.RobertaConfig(
        vocab_size=ROBERTA_VOCAB_SIZE, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, **sizes
    )
    transformers.RobertaForMaskedLM(config).save_pretrained(paths["roberta"])
    save_roberta_tokenizer(paths["roberta"])
    luke = LukeConfig(
        vocab_size=ROBERTA_VOCAB_SIZE,
        entity_vocab_size=4,
        entity_emb_size=256,
        max_position_embeddings=514,
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        **sizes,
    )
    LukeEncoder(luke).save_pretrained(str(paths["luke"]))
    save_roberta_tokenizer(paths["luke"])
    if corpus is not None:
        return paths

    # The dump's linked titles (missing pages included: the sample dump lacks most of them), then made-up titles up
    # to the size of a real LUKE vocabulary: the entity table and prediction head are a large part of a step.
    dump = shared_data_dir() / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    max_pages = getattr(args, "max_pages", None)
    linked, _ = build_entity_vocab(
        dump, vocab_size=args.entity_vocab_size, include_missing_pages=True, max_pages=max_pages
    )
    titles = list(linked)
    titles += [f"Made-up entity {i}" for i in range(args.entity_vocab_size - len(titles))]
    EntityVocab(titles).save_jsonl(work / "entity_vocab.jsonl")
    build_pretraining_corpus(
        dump,
        str(paths["roberta"]),
        work / "entity_vocab.jsonl",
        paths["corpus"],
        CorpusOptions(max_seq_length=args.words),
        max_pages=max_pages,
    )
    return paths


def task_setup(task: str, paths: Dict[str, Path], args) -> Dict[str, Any]:
    """The config, its extVars and the overrides that size the run."""
    steps = {
        "data_loader.batches_per_epoch": args.steps,
        "trainer.num_epochs": 2,
        "trainer.checkpointer": None,
        "trainer.cuda_device": 0 if args.device == "cuda" else -1,
        "trainer.precision": args.precision,
    }
    if task == "pretraining":
        return {
            "config": REPO / "configs" / "pretraining" / "luke_base.jsonnet",
            "env": {"MODEL_NAME": str(paths["roberta"]), "CORPUS": str(paths["corpus"])},
            "overrides": {
                **steps,
                "distributed": None,
                "trainer.num_gradient_accumulation_steps": 1,
                "data_loader.batch_size": args.batch,
                **({} if args.workers is None else {"data_loader.num_workers": args.workers}),
                "data_loader.max_instances_in_memory": args.batch * 16,
                "model.compile": args.compile,
            },
        }
    eng_train = getattr(args, "ner_train", None) or shared_data_dir() / "conll2003" / "eng.train"
    return {
        "config": REPO / "configs" / "ner" / "conll2003.jsonnet",
        "env": {"MODEL_NAME": str(paths["luke"]), "TRAIN_DATA_PATH": str(eng_train), "VALIDATION_DATA_PATH": ""},
        "overrides": {
            **steps,
            "validation_data_path": None,
            "dataset_reader.max_seq_length": args.words,
            "data_loader.batch_sampler.batch_size": args.ner_batch,
            "model.embedder.compile": args.compile,
        },
    }


def config_params(setup: Dict[str, Any]) -> Params:
    import os

    os.environ.update(setup["env"])
    return Params.from_file(str(setup["config"]), params_overrides=json.dumps(setup["overrides"]))


# --- measurements --------------------------------------------------------------------------------------------------


def trainer_loop(setup: Dict[str, Any], out: Path) -> Dict[str, float]:
    """Runs `allennlp train` (in this process) and returns its second epoch's training metrics. The final
    `model.tar.gz` is not written: it is not part of the loop, and at LUKE base with 500,000 entities gzipping it took
    longer than the whole timed run (the first gpu_check's eager rows ran out of time there)."""
    import os
    from unittest import mock

    import allennlp.commands.train as train_command

    os.environ.update(setup["env"])
    with mock.patch.object(train_command, "archive_model", lambda *args, **kwargs: None):
        train_model_from_file(str(setup["config"]), str(out), overrides=json.dumps(setup["overrides"]), force=True)
    return json.loads((out / "metrics_epoch_1.json").read_text())


def collect_batches(params: Params, vocab: Vocabulary, count: int):
    """The first `count` batches of the config's reader and data loader, and the pipeline's own speed over them."""
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader = DataLoader.from_params(
        params=params.pop("data_loader"), reader=reader, data_path=params["train_data_path"]
    )
    loader.index_with(vocab)
    batches, tokens, instances = [], 0, 0
    start = time.perf_counter()
    for batch in loader:
        batches.append(batch)
        tokens += int(count_tokens(batch)[0])
        instances += len(batch["word_ids"])
        if len(batches) == count:
            break
    seconds = time.perf_counter() - start
    return batches, {"instances_per_second": instances / seconds, "tokens_per_second": tokens / seconds}


def bare_steps(
    params: Params,
    vocab: Vocabulary,
    batches: List[Dict],
    device: torch.device,
    precision: str,
    warmup: int,
    with_optimizer: bool = False,
):
    """The model and optimizer of the config, stepping over pre-collated batches already on the device: no data
    loading, metrics or progress bar, and no host sync of its own (the tokens are counted on the CPU beforehand).
    Returns real tokens per second after `warmup` steps and the model (and the optimizer, `with_optimizer`)."""
    model = Model.from_params(vocab=vocab, params=params.pop("model").duplicate()).to(device)
    optimizer_params = params["trainer"]["optimizer"].duplicate()
    optimizer = Optimizer.from_params(
        model_parameters=[[n, p] for n, p in model.named_parameters() if p.requires_grad], params=optimizer_params
    )
    dtype = {"bf16": torch.bfloat16, "fp32": None}[precision]
    tokens = sum(int(count_tokens(b)[0]) for b in batches[warmup:])  # (CPU tensors: no device sync in the loop)
    batches = [move_to_device(b, device) for b in batches]
    model.train()
    start = None
    for i, batch in enumerate(batches):
        if i == warmup:
            synchronize(device)
            start = time.perf_counter()
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext():
            loss = model(**batch)["loss"]
        loss.backward()
        optimizer.step()
    synchronize(device)
    speed = tokens / (time.perf_counter() - start)
    return (speed, model, optimizer) if with_optimizer else (speed, model)


def transformers_ner_steps(model, batches: List[Dict], device: torch.device, precision: str, warmup: int) -> float:
    """`transformers.LukeForEntitySpanClassification` of the same size trained on the same passes (one per
    sentence and chunk of spans, as ours runs them): real tokens per second."""
    import transformers

    config = model.embedder.luke.config
    reference = transformers.LukeForEntitySpanClassification(
        transformers.LukeConfig(
            **{k: v for k, v in config.to_dict().items() if k not in ("architectures", "model_type")},
            num_labels=model.classifier.out_features,
        )
    ).to(device)
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-5, fused=device.type == "cuda")
    dtype = {"bf16": torch.bfloat16, "fp32": None}[precision]
    passes = []
    for batch in batches:
        batch = move_to_device(batch, device)
        rows = batch["entity_attention_mask"].any(-1).nonzero()
        sentence, chunk = rows[:, 0], rows[:, 1]
        starts, ends = batch["entity_start_positions"][sentence, chunk], batch["entity_end_positions"][sentence, chunk]
        passes.append(
            dict(
                input_ids=batch["word_ids"][sentence],
                attention_mask=batch["word_attention_mask"][sentence].long(),
                entity_ids=batch["entity_ids"][sentence, chunk],
                entity_attention_mask=batch["entity_attention_mask"][sentence, chunk].long(),
                entity_position_ids=span_position_ids(starts, ends),
                entity_start_positions=starts,
                entity_end_positions=ends,
                labels=batch["labels"][sentence, chunk].clamp(min=0),
            )
        )
    reference.train()
    tokens, start = sum(int(count_tokens(b)[0]) for b in batches[warmup:]), None  # counted beforehand, as above
    for i, inputs in enumerate(passes):
        if i == warmup:
            synchronize(device)
            start = time.perf_counter()
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext():
            loss = reference(**inputs).loss
        loss.backward()
        optimizer.step()
    synchronize(device)
    return tokens / (time.perf_counter() - start)


def encoder_flops_per_token(config, sequence: int) -> float:
    """Analytic matmul FLOPs of the encoder's forward pass per token of a `sequence`-long (padded) input."""
    h = config.hidden_size
    queries = 2 if config.use_entity_aware_attention else 1
    return config.num_hidden_layers * (
        2 * h * h * (queries + 2 + 1) + 2 * 2 * h * config.intermediate_size + 2 * 2 * sequence * h
    )


def flops_per_token(model, batches: List[Dict], task: str) -> float:
    """Analytic matmul FLOPs of a training step (3 x forward) per real token (words + entities) over `batches`:
    the encoder at each batch's padded length; for pretraining the heads at the masked positions only (as they
    run); for NER the encoder once for every (sentence, chunk of spans) pass."""
    total, tokens = 0.0, 0
    for batch in batches:
        real = int(count_tokens(batch)[0])
        words, entities = batch["word_ids"].size(1), batch["entity_ids"].size(-1)
        if task == "pretraining":
            config = model.pretraining.config
            h, e = config.hidden_size, config.entity_emb_size
            masked_words = int(batch["masked_lm_labels"].ne(-100).sum())
            masked_entities = int(batch["masked_entity_labels"].ne(-100).sum())
            total += real * encoder_flops_per_token(config, words + entities)
            total += masked_words * 2 * (h * h + h * config.vocab_size)
            total += masked_entities * 2 * (h * e + e * config.entity_vocab_size)
        else:
            config = model.embedder.luke.config
            passes = int(batch["entity_attention_mask"].any(-1).sum())
            per_pass = (words + entities) * encoder_flops_per_token(config, words + entities)
            total += passes * per_pass
        tokens += real
    return 3 * total / tokens


def mfu(tokens_per_second: float, flops: float, device: torch.device) -> Optional[float]:
    """Model FLOPs utilisation against the GPU's dense bf16 peak (None on a CPU or an unknown GPU)."""
    if device.type != "cuda":
        return None
    peak = next((p for k, p in BF16_PEAK_TFLOPS.items() if k in torch.cuda.get_device_name(device)), None)
    return tokens_per_second * flops / (peak * 1e12) if peak else None


# --- main ----------------------------------------------------------------------------------------------------------


HEADER = (
    f"{'task':<11} | {'trainer loop':>12} | {'bare step':>10} | {'loop/bare':>9} | {'pipeline':>10} | "
    f"{'pipeline/model':>14} | {'padding':>7} | other"
)


def table_row(task: str, row: Dict[str, Any]) -> str:
    other = ""
    if row.get("mfu") is not None:
        other = f"MFU {row['mfu']:.1%} (trainer loop, bf16 peak)"
    if "transformers" in row:
        other = f"bare step {row['bare'] / row['transformers']:.2f}x transformers.LukeForEntitySpanClassification ({row['transformers']:,.0f} tokens/s)"
    return (
        f"{task:<11} | {row['loop']:12,.0f} | {row['bare']:10,.0f} | {row['loop'] / row['bare']:9.2f} | "
        f"{row['pipeline']['tokens_per_second']:10,.0f} | {row['pipeline']['tokens_per_second'] / row['bare']:14.1f} | "
        f"{row['padding'] if row['padding'] is not None else float('nan'):7.1%} | {other}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--size", choices=sorted(SIZES), default=None, help="default: small on CPU, base on GPU")
    parser.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto")
    parser.add_argument("--compile", action="store_true", help="the configs' compile option (torch.compile)")
    parser.add_argument("--steps", type=int, default=None, help="steps per epoch (default: 12 on CPU, 100 on GPU)")
    parser.add_argument(
        "--batch", type=int, default=None, help="pretraining sequences per step (default 8 CPU, 32 GPU)"
    )
    parser.add_argument("--ner-batch", type=int, default=8, help="NER sentences per step (the config's 8)")
    parser.add_argument("--words", type=int, default=None, help="max_seq_length (default 128 on CPU, 512 on GPU)")
    parser.add_argument("--entity-vocab-size", type=int, default=None, help="default 20,000 on CPU, 500,000 on GPU")
    parser.add_argument(
        "--workers", type=int, default=None, help="pretraining data-loader workers (default: the config's)"
    )
    parser.add_argument("--tasks", nargs="+", choices=["pretraining", "ner"], default=["pretraining", "ner"])
    parser.add_argument("--work-dir", default=None, help="where checkpoints, corpus and runs go (default: a temp dir)")
    args = parser.parse_args()
    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    for name, cpu, gpu in (
        ("size", "small", "base"),
        ("steps", 12, 100),
        ("batch", 8, 32),
        ("words", 128, 512),
        ("entity_vocab_size", 20_000, 500_000),
    ):
        if getattr(args, name) is None:
            setattr(args, name, gpu if on_gpu else cpu)
    precision = resolve_precision(args.precision, False, device)  # as the trainer resolves "auto"
    prepare_environment(Params({}))
    import transformers

    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if on_gpu else f" ({torch.get_num_threads()} threads)")
    )
    print(
        f"LUKE {args.size} ({SIZES[args.size]}), {args.entity_vocab_size:,} entities, precision {precision}, "
        f"compile {args.compile}, {args.steps} steps an epoch"
    )
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(args.work_dir or temporary)
        work.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        paths = prepare(work, args)
        print(f"checkpoints and corpus prepared in {time.perf_counter() - start:.0f} s")
        results = {}
        for task in args.tasks:
            setup = task_setup(task, paths, args)
            workers = config_params(setup)["data_loader"].get("num_workers", 0)
            print(f"{task}: {workers} data-loader workers (trainer loop and pipeline)", flush=True)
            loop = trainer_loop(setup, work / f"run-{task}")
            vocab = Vocabulary.from_files(str(work / f"run-{task}" / "vocabulary"))
            batches, pipeline = collect_batches(config_params(setup), vocab, args.steps)
            bare, model = bare_steps(config_params(setup), vocab, batches, device, precision, warmup=2)
            row = {
                "loop": loop["training_tokens_per_second"],
                "bare": bare,
                "pipeline": pipeline,
                "padding": loop.get("training_padding_fraction"),
            }
            if task == "pretraining" and on_gpu:
                row["mfu"] = mfu(loop["training_tokens_per_second"], flops_per_token(model, batches, task), device)
            if task == "ner":
                row["transformers"] = transformers_ner_steps(model, batches, device, precision, warmup=2)
            results[task] = row
            print(f"\n{HEADER}\n{table_row(task, row)}", flush=True)  # now, in case a later task fails
            del model
    print(f"\n{HEADER}")
    for task, row in results.items():
        print(table_row(task, row))
    speeds = ", ".join(
        f"{task}: {row['pipeline']['instances_per_second']:,.0f} instances/s" for task, row in results.items()
    )
    print(f"(tokens/s: real words + entities; pipeline: reader + data loader + collation alone, {speeds})")
    ratios = ", ".join(f"{task} {row['loop'] / row['bare']:.2f}x" for task, row in results.items())
    print(f"trainer loop / bare step: {ratios}")


if __name__ == "__main__":
    main()
