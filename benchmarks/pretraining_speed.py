"""
Training-step throughput of `LukeForPretraining` against `transformers.LukeForMaskedLM`: same weights, same
masked inputs (15% of words, 15% of entities), LUKE base size, in one run. Needs only torch and transformers
(no AllenNLP); runs with transformers 4.x and 5.x.

    python benchmarks/pretraining_speed.py                          # CPU: batch 2 x (256 words + 64 entities)
    python benchmarks/pretraining_speed.py --device cuda --compile  # GPU: batch 16 x (512 + 128), fp32 and bf16

A step is forward + backward (+ an AdamW update with --optimizer). Steps of the models alternate, so that
drift in the machine hits both alike; medians are reported. Throughput counts words + entities per second.
Both models compute the same loss; transformers computes the 50k-word and 500k-entity logits at every
position, ours only at the masked ones. On a GPU the model FLOPs utilisation (MFU) divides the analytic
FLOPs of a step (`step_flops`) by the time and the GPU's dense peak for the precision (e.g. H100 SXM: 989
TFLOP/s bf16; 67 TFLOP/s fp32 without TF32, torch's default for matmuls); --peak-tflops overrides it.
"""

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from luke_allennlp.modeling import LukeConfig, LukeForPretraining  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wording import progress, speed  # noqa: E402

VOCAB_SIZE, MASK_ID, ENTITY_MASK_ID = 50265, 50264, 2
# Dense peaks in TFLOP/s by GPU name and precision (fp32 = no TF32).
PEAKS = {
    "H100": {"bf16": 989.0, "fp32": 67.0},
    "H200": {"bf16": 989.0, "fp32": 67.0},
    "A100": {"bf16": 312.0, "fp32": 19.5},
}


def build_models(args, device):
    import transformers

    config = transformers.LukeConfig(
        vocab_size=VOCAB_SIZE,
        entity_vocab_size=args.entity_vocab_size,
        hidden_size=args.hidden,
        entity_emb_size=args.entity_emb_size,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=514,
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        use_entity_aware_attention=not args.original_attention,
        hidden_dropout_prob=args.dropout,
        attention_probs_dropout_prob=args.dropout,
    )
    torch.manual_seed(0)
    reference = transformers.LukeForMaskedLM(config)
    # The word decoder is the word embedding matrix (transformers 4 ties them; transformers 5 does not).
    reference.lm_head.decoder.weight = reference.luke.embeddings.word_embeddings.weight
    if hasattr(reference, "set_attn_implementation"):
        with contextlib.suppress(Exception):  # LUKE has one attention implementation; keep it eager
            reference.set_attn_implementation("eager")
    ours = LukeForPretraining(LukeConfig.from_dict(config.to_dict()))
    tied = ("lm_head.decoder.weight", "lm_head.decoder.bias", "entity_predictions.decoder.weight")
    ours.load_state_dict({k: v for k, v in reference.state_dict().items() if k not in tied})
    return reference.to(device), ours.to(device)


def make_inputs(args, device):
    """Random rows with <s> ... </s>, mentions of 1-3 words, 15% of words and of entities masked."""
    g = torch.Generator().manual_seed(1)
    b, w, e = args.batch, args.words, args.entities
    input_ids = torch.randint(3, VOCAB_SIZE - 1, (b, w), generator=g)
    input_ids[:, 0], input_ids[:, -1] = 0, 2
    starts = torch.randint(1, w - 4, (b, e), generator=g)
    lengths = torch.randint(1, 4, (b, e), generator=g)
    offsets = torch.arange(args.max_mention_length)
    entity_position_ids = torch.where(offsets < lengths[..., None], starts[..., None] + offsets, torch.tensor(-1))
    entity_ids = torch.randint(3, args.entity_vocab_size, (b, e), generator=g)
    masked_words = torch.rand(b, w, generator=g) < args.mask_prob
    masked_words[:, 0] = masked_words[:, -1] = False
    masked_entities = torch.rand(b, e, generator=g) < args.mask_prob
    labels = torch.where(masked_words, input_ids, torch.tensor(-100))
    entity_labels = torch.where(masked_entities, entity_ids, torch.tensor(-100))
    inputs = dict(
        input_ids=input_ids.masked_fill(masked_words, MASK_ID),
        attention_mask=torch.ones(b, w, dtype=torch.long),
        entity_ids=entity_ids.masked_fill(masked_entities, ENTITY_MASK_ID),
        entity_position_ids=entity_position_ids,
        entity_attention_mask=torch.ones(b, e, dtype=torch.long),
        labels=labels,
        entity_labels=entity_labels,
    )
    return {k: v.to(device) for k, v in inputs.items()}


def forward_flops(args, masked_words: int, masked_entities: int, heads_everywhere: bool = False) -> float:
    """Matmul FLOPs of one forward pass (2 per multiply-add). `heads_everywhere`: the heads at every position,
    as transformers computes them; else only at the masked ones, which is all the loss needs."""
    b, w, e, h = args.batch, args.words, args.entities, args.hidden
    tokens = b * (w + e)
    queries = 1 if args.original_attention else 2  # entity-aware: a query for word keys and one for entity keys
    per_layer = 2 * tokens * h * h * (queries + 2 + 1 + 8)  # Q, K and V, attention output, feed-forward (4h)
    per_layer += 2 * 2 * b * (w + e) ** 2 * h  # scores and weighted values, over all heads
    encoder = args.layers * per_layer + 2 * b * e * args.entity_emb_size * h  # + the entity table's projection
    n_words, n_entities = (b * w, b * e) if heads_everywhere else (masked_words, masked_entities)
    mlm = 2 * n_words * (h * h + h * VOCAB_SIZE)
    entity = 2 * n_entities * (h * args.entity_emb_size + args.entity_emb_size * args.entity_vocab_size)
    return float(encoder + mlm + entity)


def step(model, inputs, dtype, optimizer):
    ctx = torch.autocast(inputs["input_ids"].device.type, dtype=dtype) if dtype else contextlib.nullcontext()
    with ctx:
        loss = model(**inputs).loss
    loss.backward()
    if optimizer is not None:
        optimizer.step()
    return loss


def measure(models, optimizers, inputs, repeats, warmup, dtype):
    """Median seconds of a training step per model; the models' steps alternate."""
    on_gpu = inputs["input_ids"].device.type == "cuda"
    times = [[] for _ in models]
    for model in models:
        model.train()
    for i in range(warmup + repeats):
        for j, (model, optimizer) in enumerate(zip(models, optimizers)):
            model.zero_grad(set_to_none=True)
            if on_gpu:
                torch.cuda.synchronize()
            start = time.perf_counter()
            step(model, inputs, dtype, optimizer)
            if on_gpu:
                torch.cuda.synchronize()
            if i >= warmup:
                times[j].append(time.perf_counter() - start)
    for model in models:
        model.zero_grad(set_to_none=True)
    return [statistics.median(t) for t in times], times


def check_equal(reference, ours, inputs):
    """(|loss difference|, max |logit difference| at the masked words) in fp32, eval mode (no dropout)."""
    reference.eval(), ours.eval()
    with torch.no_grad():
        expected, actual = reference(**inputs), ours(**inputs)
    masked = inputs["labels"].ne(-100)
    return abs(expected.loss.item() - actual.loss.item()), (expected.logits[masked] - actual.logits).abs().max().item()


def peak_tflops(args, device, mode):
    if args.peak_tflops:
        return args.peak_tflops
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((p[mode] for key, p in PEAKS.items() if key in name), None)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=None, help="default: 2 on CPU, 16 on GPU")
    parser.add_argument("--words", type=int, default=None, help="default: 256 on CPU, 512 on GPU")
    parser.add_argument("--entities", type=int, default=None, help="default: 64 on CPU, 128 on GPU")
    parser.add_argument("--max-mention-length", type=int, default=30)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--entity-vocab-size", type=int, default=500000, help="LUKE base's (default 500000)")
    parser.add_argument("--entity-emb-size", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--mask-prob", type=float, default=0.15, help="share of words and of entities masked")
    parser.add_argument("--original-attention", action="store_true", help="plain attention (the pretraining configs')")
    parser.add_argument(
        "--precision",
        choices=["fp32", "bf16", "both"],
        default=None,
        help="bf16 = under bf16 autocast (default: fp32 on CPU, both on GPU)",
    )
    parser.add_argument("--optimizer", action="store_true", help="include an AdamW update in each step")
    parser.add_argument("--compile", action="store_true", help="also time both models under torch.compile")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps (default: 5 on CPU, 20 on GPU)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps (default: 1 on CPU, 5 on GPU)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's dense peak, for MFU")
    args = parser.parse_args()
    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    for name, cpu, gpu in (
        ("batch", 2, 16),
        ("words", 256, 512),
        ("entities", 64, 128),
        ("repeats", 5, 20),
        ("warmup", 1, 5),
    ):
        if getattr(args, name) is None:
            setattr(args, name, gpu if on_gpu else cpu)
    precision = args.precision or ("both" if on_gpu else "fp32")
    modes = [m for m in (("fp32", None), ("bf16", torch.bfloat16)) if precision in (m[0], "both")]

    import transformers

    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if on_gpu else f" ({torch.get_num_threads()} threads)")
    )
    attention = "original" if args.original_attention else "entity-aware"
    print(
        f"{args.layers} layers, hidden {args.hidden}, {attention} attention, entity vocab {args.entity_vocab_size} x "
        f"{args.entity_emb_size}, dropout {args.dropout}; batch {args.batch} x ({args.words} words + {args.entities} "
        f"entities); step = forward + backward{' + AdamW' if args.optimizer else ''}; median of {args.repeats} "
        f"after {args.warmup} warm-up"
    )
    reference, ours = build_models(args, device)
    inputs = make_inputs(args, device)
    masked_words, masked_entities = int(inputs["labels"].ne(-100).sum()), int(inputs["entity_labels"].ne(-100).sum())
    loss_diff, logit_diff = check_equal(reference, ours, inputs)
    print(
        f"masked: {masked_words} words, {masked_entities} entities; ours - transformers (fp32, eval): "
        f"|loss| {loss_diff:.1e}, max |logit| {logit_diff:.1e}"
    )
    needed = 3 * forward_flops(args, masked_words, masked_entities)
    executed = 3 * forward_flops(args, masked_words, masked_entities, heads_everywhere=True)
    print(
        f"model FLOPs per step (3 x forward): {needed / 1e12:.3f} TFLOP with the heads at the masked positions; "
        f"transformers computes {executed / 1e12:.3f} TFLOP (heads at every position)"
    )

    variants = [("transformers.LukeForMaskedLM", reference), ("LukeForPretraining (ours)", ours)]
    if args.compile:
        variants += [("transformers, compiled", torch.compile(reference)), ("ours, compiled", torch.compile(ours))]
    optimizers = [torch.optim.AdamW(m.parameters(), lr=1e-5) if args.optimizer else None for _, m in variants]
    tokens = args.batch * (args.words + args.entities)
    rows = []
    for mode, dtype in modes:
        progress(f"timing {mode}: {', '.join(name for name, _ in variants)}, steps alternating")
        medians, all_times = measure([m for _, m in variants], optimizers, inputs, args.repeats, args.warmup, dtype)
        for (name, _), median, times in zip(variants, medians, all_times):
            # Ratio to transformers' step of the same round: steadier than the medians on a shared machine.
            ratios = statistics.median(a / b for a, b in zip(all_times[0], times))
            print(
                f"[{mode}] {name} steps (s): {' '.join(f'{t:.4f}' for t in times)}; median per round: {speed(1.0, 1.0 / ratios)}"
            )
            rows.append((mode, name, median))

    print(
        f"\n{'precision':<9} | {'model':<28} | {'median step':>11} | {'tokens/s':>9} | {'MFU':>6} | against transformers eager"
    )
    for mode, name, median in rows:
        base = next(m for md, n, m in rows if md == mode and n == variants[0][0])
        peak = peak_tflops(args, device, mode)
        mfu = f"{needed / median / (peak * 1e12):6.1%}" if peak else "   n/a"
        print(
            f"{mode:<9} | {name:<28} | {median * 1000:8.1f} ms | {tokens / median:9,.0f} | {mfu} | {speed(base, median)}"
        )
    if on_gpu:
        print(
            f"MFU: {needed / 1e12:.3f} TFLOP per step / time / peak "
            + ", ".join(f"{m}: {peak_tflops(args, device, m) or 'unknown'} TFLOP/s" for m, _ in modes)
        )


if __name__ == "__main__":
    main()
