"""
Forward+backward time and peak memory of `LukeEncoder` against `transformers.LukeModel`, same weights,
entity-aware attention, in one run. Needs only torch and transformers (no AllenNLP).

    python benchmarks/encoder_speed.py                 # base size, batch 4 x (384 words + 128 entities)
    python benchmarks/encoder_speed.py --device cuda   # also under bf16 autocast

Prints the median of several repetitions for each model and the ratio reference / ours (above 1 means ours
is faster or smaller). Peak memory is what one training step allocates above the weights: the CUDA
allocator's peak on a GPU; on the CPU (Linux), the peak resident memory of a first step in a fresh process.
"""

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from luke_allennlp.modeling import LukeConfig, LukeEncoder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wording import memory, progress, speed  # noqa: E402


def build_models(args, device):
    import transformers

    config = transformers.LukeConfig(
        vocab_size=50265,
        entity_vocab_size=args.entity_vocab_size,
        hidden_size=args.hidden,
        entity_emb_size=256,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=514,
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        use_entity_aware_attention=True,
        hidden_dropout_prob=args.dropout,
        attention_probs_dropout_prob=args.dropout,
    )
    torch.manual_seed(0)
    reference = transformers.LukeModel(config)
    if hasattr(reference, "set_attn_implementation"):
        with contextlib.suppress(Exception):  # LUKE has one attention implementation; keep it eager
            reference.set_attn_implementation("eager")
    ours = LukeEncoder(LukeConfig.from_dict(config.to_dict()))
    ours.load_state_dict(reference.state_dict())
    return reference.to(device), ours.to(device)


def make_inputs(args, device):
    g = torch.Generator().manual_seed(1)
    b, w, e = args.batch, args.words, args.entities
    input_ids = torch.randint(3, 50265, (b, w), generator=g)
    input_ids[:, 0], input_ids[:, -1] = 0, 2
    starts = torch.randint(1, w - 4, (b, e), generator=g)
    lengths = torch.randint(1, 4, (b, e), generator=g)
    offsets = torch.arange(args.max_mention_length)
    entity_position_ids = torch.where(offsets < lengths[..., None], starts[..., None] + offsets, torch.tensor(-1))
    inputs = dict(
        input_ids=input_ids,
        attention_mask=torch.ones(b, w, dtype=torch.long),
        entity_ids=torch.randint(1, args.entity_vocab_size, (b, e), generator=g),
        entity_position_ids=entity_position_ids,
        entity_attention_mask=torch.ones(b, e, dtype=torch.long),
    )
    return {k: v.to(device) for k, v in inputs.items()}


def step(model, inputs, autocast_dtype):
    ctx = (
        torch.autocast(inputs["input_ids"].device.type, dtype=autocast_dtype)
        if autocast_dtype
        else contextlib.nullcontext()
    )
    with ctx:
        out = model(**inputs)
        loss = out.last_hidden_state.float().square().mean() + out.entity_last_hidden_state.float().square().mean()
    loss.backward()


def cpu_rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    raise OSError(field)


def measure(models, inputs, repeats, warmup, autocast_dtype):
    """
    Per model: the median seconds of a forward+backward step and, on a GPU, the peak bytes a step allocates
    above what it starts with. Steps of the models alternate, so that drift in the machine hits all alike.
    """
    on_gpu = inputs["input_ids"].device.type == "cuda"
    times = [[] for _ in models]
    peaks = [None for _ in models]
    for model in models:
        model.train()
    for i in range(warmup + repeats):
        progress(f"{'warm-up' if i < warmup else 'timed'} step {i + 1} of {warmup + repeats} ({len(models)} models)")
        for j, model in enumerate(models):
            model.zero_grad(set_to_none=True)
            if on_gpu:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                before = torch.cuda.memory_allocated()
            start = time.perf_counter()
            step(model, inputs, autocast_dtype)
            if on_gpu:
                torch.cuda.synchronize()
                peaks[j] = max(peaks[j] or 0, torch.cuda.max_memory_allocated() - before)
            if i >= warmup:
                times[j].append(time.perf_counter() - start)
            model.zero_grad(set_to_none=True)
    return [statistics.median(t) for t in times], times, peaks


def cpu_step_memory(model, inputs):
    """Peak resident memory of one first step above the memory before it (Linux), in this fresh process."""
    before = cpu_rss_kib("VmRSS:")
    model.train()
    step(model, inputs, None)
    return (cpu_rss_kib("VmHWM:") - before) * 1024


def cpu_memory_in_subprocess(which):
    """CPU memory is read per model in a fresh process: freed memory stays with malloc and would hide the
    second model's allocations."""
    import subprocess

    argv = [sys.executable, __file__, *sys.argv[1:], "--cpu-memory-of", which]
    result = subprocess.run(argv, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("CPU_MEMORY_BYTES ")]
    return int(lines[-1].split()[1]) if lines else None


def check_equal(reference, ours, inputs):
    reference.eval(), ours.eval()
    with torch.no_grad():
        r, o = reference(**inputs), ours(**inputs)
    return max(
        (r.last_hidden_state - o.last_hidden_state).abs().max().item(),
        (r.entity_last_hidden_state - o.entity_last_hidden_state).abs().max().item(),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--words", type=int, default=384)
    parser.add_argument("--entities", type=int, default=128)
    parser.add_argument("--max-mention-length", type=int, default=16)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--dropout", type=float, default=0.1, help="hidden and attention dropout (default 0.1)")
    parser.add_argument("--entity-vocab-size", type=int, default=500000, help="LUKE base's (default 500000)")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps (default: 5 on CPU, 20 on GPU)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps (default: 1 on CPU, 5 on GPU)")
    parser.add_argument("--compile", action="store_true", help="also time both models under torch.compile")
    parser.add_argument("--cpu-memory-of", choices=["reference", "ours"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    device = torch.device(args.device)
    if args.cpu_memory_of:
        reference, ours = build_models(args, device)
        model = reference if args.cpu_memory_of == "reference" else ours
        print("CPU_MEMORY_BYTES", cpu_step_memory(model, make_inputs(args, device)))
        return
    on_gpu = device.type == "cuda"
    repeats = args.repeats or (20 if on_gpu else 5)
    warmup = args.warmup if args.warmup is not None else (5 if on_gpu else 1)

    import transformers

    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if on_gpu else f" ({torch.get_num_threads()} threads)")
    )
    print(
        f"{args.layers} layers, hidden {args.hidden}, {args.heads} heads, entity vocab {args.entity_vocab_size}, dropout {args.dropout}; "
        f"batch {args.batch} x ({args.words} words + {args.entities} entities); median of {repeats} after {warmup} warm-up"
    )
    progress(f"building both models (an entity table of {args.entity_vocab_size:,} rows)")
    reference, ours = build_models(args, device)
    inputs = make_inputs(args, device)
    print(f"max |ours - transformers| on this input (fp32, eval): {check_equal(reference, ours, inputs):.2e}")

    variants = [("transformers.LukeModel", reference), ("LukeEncoder (ours)", ours)]
    if args.compile:
        variants += [("transformers, compiled", torch.compile(reference)), ("ours, compiled", torch.compile(ours))]
    modes = [("fp32", None)] + ([("bf16 autocast", torch.bfloat16)] if on_gpu else [])
    rows = []
    for mode, dtype in modes:
        progress(f"timing {mode}: {', '.join(name for name, _ in variants)}, steps alternating")
        medians, all_times, peaks = measure([m for _, m in variants], inputs, repeats, warmup, dtype)
        if not on_gpu:
            progress("CPU memory of one step of each model, each in a fresh process")
            peaks = [cpu_memory_in_subprocess("reference"), cpu_memory_in_subprocess("ours")] + [None] * (
                len(variants) - 2
            )
        for (name, _), median, times, peak in zip(variants, medians, all_times, peaks):
            print(f"[{mode}] {name} steps (s): {' '.join(f'{t:.4f}' for t in times)}")
            rows.append((mode, name, median, peak))

    mib = lambda b: "n/a" if b is None else f"{b / 2**20:,.0f} MiB"  # noqa: E731
    print(
        f"\n{'mode':<14} | {'model':<24} | {'median step':>11} | {'peak step memory':>16} | against transformers eager"
    )
    for mode, name, median, peak in rows:
        base_time, base_peak = next((m, p) for md, n, m, p in rows if md == mode and n == variants[0][0])
        compared = speed(base_time, median) + ("" if not (peak and base_peak) else f", {memory(base_peak, peak)}")
        print(f"{mode:<14} | {name:<24} | {median * 1000:8.1f} ms | {mib(peak):>16} | {compared}")


if __name__ == "__main__":
    main()
