"""
Two processes (gloo, CPU): every task metric equals its one-process value on the same data, and the trainer
all-reduces gradients once per optimizer step under gradient accumulation.
"""

import random
from typing import Any, Callable, Dict, List

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from luke_allennlp.training.metrics import (
    Correlation,
    EntityDisambiguationAccuracy,
    EntityLinkingF1,
    MaskedPrediction,
    MultiLabelF1,
    RelationF1,
    SpanF1,
    SquadEmAndF1,
)


def ner_batches() -> List[tuple]:
    rng = random.Random(0)
    kinds = ["PER", "LOC", "ORG", "MISC"]
    batches = []
    for _ in range(12):
        gold = [{(s, s + rng.randint(1, 3)): rng.choice(kinds) for s in rng.sample(range(20), 3)} for _ in range(4)]
        predicted = [
            {span: (k if rng.random() < 0.6 else rng.choice(kinds)) for span, k in g.items() if rng.random() < 0.8}
            for g in gold
        ]
        batches.append((predicted, gold))
    return batches


def relation_batches() -> List[tuple]:
    rng = random.Random(1)
    labels = ["Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Entity-Origin(e1,e2)", "Message-Topic(e2,e1)", "Other"]
    return [([rng.choice(labels) for _ in range(5)], [rng.choice(labels) for _ in range(5)]) for _ in range(12)]


def typing_batches() -> List[tuple]:
    g = torch.Generator().manual_seed(2)
    return [(torch.rand(4, 9, generator=g) > 0.6, torch.rand(4, 9, generator=g) > 0.7) for _ in range(12)]


def squad_batches() -> List[tuple]:
    rng = random.Random(3)
    words = ["Denver", "Broncos", "the", "Panthers", "Santa", "Clara", "1966"]
    answer = lambda: " ".join(rng.sample(words, rng.randint(1, 3)))  # noqa: E731
    return [([answer() for _ in range(3)], [[answer(), answer()] for _ in range(3)]) for _ in range(12)]


def masked_batches() -> List[tuple]:
    g = torch.Generator().manual_seed(4)
    return [(torch.randn(7, 11, generator=g), torch.randint(0, 11, (7,), generator=g)) for _ in range(12)]


def disambiguation_batches() -> List[tuple]:
    g = torch.Generator().manual_seed(5)
    batches = []
    for _ in range(12):
        gold = torch.randint(-1, 6, (8,), generator=g)  # -1: outside the vocabulary
        predictions, prior = torch.randint(-1, 6, (8,), generator=g), torch.randint(-1, 6, (8,), generator=g)
        batches.append(
            (predictions, gold, prior, torch.randint(0, 3, (8,), generator=g), torch.rand(8, generator=g) > 0.2)
        )
    return batches


def linking_batches() -> List[tuple]:
    rng = random.Random(6)
    link = lambda: (rng.randint(0, 5), rng.randint(6, 9), rng.choice("ABC"))  # noqa: E731
    return [
        ([[link() for _ in range(3)] for _ in range(2)], [[link() for _ in range(3)] for _ in range(2)])
        for _ in range(12)
    ]


def correlation_batches() -> List[tuple]:
    g = torch.Generator().manual_seed(7)
    batches = []
    for _ in range(12):
        gold = torch.randint(0, 26, (9,), generator=g) / 5.0  # JSTS-like scores, with ties
        batches.append((gold + torch.randn(9, generator=g), gold))
    return batches


METRICS: Dict[str, tuple] = {
    "span_f1": (SpanF1, ner_batches),
    "relation_f1": (RelationF1, relation_batches),
    "multilabel_f1": (MultiLabelF1, typing_batches),
    "squad_em_and_f1": (SquadEmAndF1, squad_batches),
    "masked_prediction": (MaskedPrediction, masked_batches),
    "entity_disambiguation_accuracy": (EntityDisambiguationAccuracy, disambiguation_batches),
    "entity_linking_f1": (EntityLinkingF1, linking_batches),
    "correlation": (Correlation, correlation_batches),  # pearson, spearman: gathered, not summed
}


def run_metrics(rank: int, world_size: int) -> Dict[str, Any]:
    results = {}
    for name, (metric_class, batches) in METRICS.items():
        metric = metric_class()
        for batch in batches()[rank::world_size]:  # each process sees its share of the batches
            metric(*batch)
        results[name] = metric.get_metric(reset=True)
    return results


def worker(rank: int, world_size: int, init_file: str, task: Callable, queue) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        queue.put((rank, task(rank, world_size)))
    finally:
        dist.destroy_process_group()


def in_two_processes(task: Callable, tmp_path) -> List[Any]:
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=worker, args=(rank, 2, str(tmp_path / "init"), task, queue)) for rank in range(2)
    ]
    for process in processes:
        process.start()
    results = dict(queue.get(timeout=300) for _ in processes)  # plain values: tensors would not outlive the processes
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return [results[0], results[1]]


def both_checks(rank: int, world_size: int) -> Dict[str, Any]:
    return {
        "metrics": run_metrics(rank, world_size),
        "training": count_all_reduces(rank, world_size),
        "syncs": count_syncs(rank, world_size),
        "timed_checkpoints": timed_checkpoints(rank, world_size),
        "lazy": lazy_uneven(rank, world_size),
        "small_data": too_little_data(rank, world_size),
    }


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory) -> List[Dict[str, Any]]:
    """One pair of processes for both tests (starting them costs most of the time)."""
    return in_two_processes(both_checks, tmp_path_factory.mktemp("distributed"))


def test_every_task_metric_is_exact_in_two_processes(two_processes):
    single = run_metrics(0, 1)
    first, second = (process["metrics"] for process in two_processes)
    for name in METRICS:
        assert first[name] == second[name], name  # every process reports the whole data's metric
        assert first[name] == pytest.approx(single[name], rel=1e-12), name
        assert any(v not in (0.0, 1.0) for v in single[name].values()), name  # a case with something to get wrong


def ddp_trainer(
    rank: int, world_size: int, model, instances, batch_size: int, serialization_dir=None, validation=None, **params
):
    """The trainer, distributed (gloo), over this process's instances (and validation instances, if given)."""
    from allennlp.common import Params
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.nn.parallel import TorchDdpAccelerator
    from allennlp.training.trainer import Trainer

    params = {
        "type": "luke_gradient_descent",
        "num_epochs": 1,
        "cuda_device": -1,
        "precision": "fp32",
        "optimizer": {"type": "luke_adamw", "lr": 0.1},
        "checkpointer": None,
        **params,
    }
    return Trainer.from_params(
        Params(params),
        model=model,
        serialization_dir=serialization_dir,
        data_loader=SimpleDataLoader(instances, batch_size=batch_size),
        validation_data_loader=SimpleDataLoader(validation, batch_size=batch_size) if validation is not None else None,
        distributed=True,
        local_rank=rank,
        world_size=world_size,
        ddp_accelerator=TorchDdpAccelerator(cuda_device=-1),
    )


def count_all_reduces(rank: int, world_size: int) -> Dict[str, Any]:
    """Trains 3 optimizer steps of 4 accumulated micro-batches with the trainer under DDP, counting the gradient
    all-reduces (a DDP communication hook sees each bucket)."""
    from allennlp.data import Instance
    from allennlp.data.fields import TensorField

    from tests.training.trainers.test_luke_gradient_descent import AutocastProbe

    torch.manual_seed(0)
    model = AutocastProbe()
    g = torch.Generator().manual_seed(rank)
    instances = [
        Instance({"x": TensorField(torch.randn(2, generator=g)), "y": TensorField(torch.randn(1, generator=g))})
        for _ in range(12)
    ]
    trainer = ddp_trainer(rank, world_size, model, instances, 1, precision="auto", num_gradient_accumulation_steps=4)
    calls = []

    def hook(state, bucket):
        calls.append(1)
        tensor = bucket.buffer().div_(world_size)
        return dist.all_reduce(tensor, async_op=True).get_future().then(lambda future: future.value()[0])

    trainer._ddp_wrapped_model.model.register_comm_hook(None, hook)
    trainer.train()
    return {"all_reduces": len(calls), "weight": model.linear.weight.tolist()}


def test_gradient_accumulation_all_reduces_once_per_step(two_processes):
    first, second = (process["training"] for process in two_processes)
    assert first["all_reduces"] == second["all_reduces"] == 3  # one bucket, 3 steps (not 12 micro-batches)
    assert first["weight"] == second["weight"]  # the processes stay in step


class DeviceMetricProbe(torch.nn.Module):
    """A classifier whose forward pass and metric (`MaskedPrediction`, sums kept on the device) need no host sync:
    what is left to count is the trainer's."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)
        self.accuracy = MaskedPrediction()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
        logits = self.linear(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        self.accuracy(logits, y, loss)
        return {"loss": loss}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self.accuracy.get_metric(reset)

    def get_regularization_penalty(self):
        return None


def probe_instances(count: int, seed: int) -> List[Any]:
    from allennlp.data import Instance
    from allennlp.data.fields import TensorField

    g = torch.Generator().manual_seed(seed)
    return [
        Instance({"x": TensorField(torch.randn(4, generator=g)), "y": TensorField(torch.tensor(i % 3))})
        for i in range(count)
    ]


def probe_trainer(rank: int, world_size: int, batches: int, serialization_dir=None, model=None, **params):
    torch.manual_seed(0)
    model = model if model is not None else DeviceMetricProbe()
    return ddp_trainer(rank, world_size, model, probe_instances(2 * batches, rank), 2, serialization_dir, **params)


def count_syncs(rank: int, world_size: int) -> Dict[str, Any]:
    """Trains 8 optimizer steps (2 micro-batches each, gradient norm clipping, a checkpointer deciding every step,
    metrics every 4 steps) under DDP, and counts, step by step from the 3rd, the host syncs and the collective calls
    made from Python (DDP's gradient all-reduce is made by its reducer, not counted). Host syncs: reads of a tensor's
    value (`.item()`, `.tolist()`, `float()`, `int()`, `bool()`), except torch's Adam reading its step counter, which
    torch keeps on the CPU (no device sync on a GPU either), and the operations that read a device tensor to size
    their output (`nonzero`, as in boolean-mask indexing, `masked_select`), found by the profiler."""
    import sys
    import tempfile

    from allennlp.training.callbacks import TrainerCallback
    from torch.profiler import ProfilerActivity, profile

    counts: List[Dict[str, int]] = []
    counted = {"reads": 0, "collectives": 0}
    sizing = ("aten::nonzero", "aten::masked_select")

    class Count(TrainerCallback):
        def on_batch(
            self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training, **kwargs
        ):
            if batch_number > 2:
                self.profiler.__exit__(None, None, None)
                ops = sum(event.name in sizing for event in self.profiler.events())
                counts.append(
                    {"step": batch_number, "syncs": counted["reads"] + ops, "collectives": counted["collectives"]}
                )
            if batch_number >= 2:
                self.profiler = profile(activities=[ProfilerActivity.CPU])
                self.profiler.__enter__()
                counted.update(reads=0, collectives=0)

        def on_end(self, trainer, metrics=None, epoch=None, is_primary=True, **kwargs):
            self.profiler.__exit__(None, None, None)

    def counting(kind, function):
        def count(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if kind != "reads" or "torch/optim/" not in caller:
                counted[kind] += 1
            return function(*args, **kwargs)

        return count

    collectives = ("all_reduce", "all_gather", "all_gather_object", "broadcast", "broadcast_object_list", "barrier")
    reads = ("item", "tolist", "__float__", "__int__", "__bool__")
    originals = {name: getattr(dist, name) for name in collectives}
    tensor_originals = {name: getattr(torch.Tensor, name) for name in reads}
    with tempfile.TemporaryDirectory() as directory:
        checkpointer = {"save_every_num_batches": 100, "save_completed_epochs": False}
        trainer = probe_trainer(
            rank,
            world_size,
            16,
            directory,
            num_gradient_accumulation_steps=2,
            grad_norm=1.0,
            metrics_every_num_batches=4,
            checkpointer=checkpointer,
        )
        trainer._callbacks.append(Count(directory))
        try:
            for name in collectives:
                setattr(dist, name, counting("collectives", originals[name]))
            for name in reads:
                setattr(torch.Tensor, name, counting("reads", tensor_originals[name]))
            trainer.train()
        finally:
            for name in collectives:
                setattr(dist, name, originals[name])
            for name in reads:
                setattr(torch.Tensor, name, tensor_originals[name])
    return {"steps": counts}


def test_at_most_one_host_sync_per_step_and_no_collective_but_the_gradients(two_processes):
    """Steps 3-8 of 8: no collective call made from Python (no "has another process finished?" all-reduce, no
    metric gathering), no host sync on a step without a report; a report (every 4 steps) reads the loss and gradient
    norm (one read) and the metric (one read): 2 reads in 4 steps."""
    for process in two_processes:
        steps = process["syncs"]["steps"]
        assert [s["step"] for s in steps] == [3, 4, 5, 6, 7, 8]
        assert all(s["collectives"] == 0 for s in steps), steps
        assert [s["syncs"] for s in steps if s["step"] % 4] == [0, 0, 0, 0], steps
        assert [s["syncs"] for s in steps if s["step"] % 4 == 0] == [2, 2], steps
        assert sum(s["syncs"] for s in steps) <= len(steps)


def timed_checkpoints(rank: int, world_size: int) -> List[str]:
    """A checkpoint every 0 seconds by rank 0's clock, while rank 1's says never: all follow rank 0 (a checkpoint
    is a collective call: any disagreement hangs)."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        checkpointer = {"save_every_num_seconds": 0, "save_completed_epochs": False, "keep_most_recent_by_count": None}
        trainer = probe_trainer(rank, world_size, 3, directory, checkpointer=checkpointer)
        if rank == 1:
            trainer._checkpointer.time_is_up = lambda: False
        trainer.train()
        return sorted(name for name in os.listdir(directory) if name.startswith("training_state"))


def test_checkpoints_every_n_seconds_follow_rank_0(two_processes):
    saved = two_processes[0]["timed_checkpoints"]
    assert saved == [f"training_state_e{e}_b{b}.th" for e, b in [(0, 1), (0, 2), (0, 3), (1, 0)]]


def lazy_uneven(rank: int, world_size: int) -> Dict[str, Any]:
    """A data loader without a length (batches read lazily) and 4 batches in one process, 3 in the other: one small
    all-reduce a step tells both to stop after 3 steps (allennlp's behaviour there; no hang, the weights in step)."""
    from allennlp.data.data_loaders import SimpleDataLoader

    class Lazy(SimpleDataLoader):
        def __len__(self) -> int:
            raise TypeError("read lazily")

    trainer = probe_trainer(rank, world_size, 4 - rank)
    trainer.data_loader = Lazy(trainer.data_loader.instances, batch_size=2)
    trainer.train()
    return {"steps": trainer._total_batches_completed, "weight": trainer.model.linear.weight.tolist()}


def test_a_loader_without_length_stops_all_processes_with_the_first(two_processes):
    first, second = (process["lazy"] for process in two_processes)
    assert first["steps"] == second["steps"] == 3 and first["weight"] == second["weight"]


class BufferedProbe(DeviceMetricProbe):
    """With a buffer: DDP broadcasts rank 0's buffers in the first forward pass after training, a collective call
    that a process validating no batch must make too."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
        return super().forward(x * self.scale, y)


class PerBatchProbe(DeviceMetricProbe):
    """With allennlp's `CategoricalAccuracy`, which all-reduces at every batch."""

    def __init__(self) -> None:
        super().__init__()
        from allennlp.training.metrics import CategoricalAccuracy

        self.categorical = CategoricalAccuracy()


def too_little_data(rank: int, world_size: int) -> Dict[str, Any]:
    """A validation set of 5 instances (3 batches): process 1 gets no validation batch, trains 2 epochs and validates
    after each (no batch), while process 0 validates both. Then the refusals before training: a process without a
    training batch, and one without a validation batch where the model has a metric that reduces at every batch."""
    import shutil
    import tempfile

    from allennlp.data.data_loaders import SimpleDataLoader

    from luke_allennlp.training.metrics.counting_metric import local_metrics

    validation = probe_instances(5, 10) if rank == 0 else []
    model = BufferedProbe()
    shared = [tempfile.mkdtemp() if rank == 0 else None]  # every process loads the best weights rank 0 wrote
    dist.broadcast_object_list(shared, 0)
    trainer = probe_trainer(rank, world_size, 3, shared[0], model=model, validation=validation, num_epochs=2)
    metrics = trainer.train()
    dist.barrier()
    if rank == 0:
        shutil.rmtree(shared[0])
    results: Dict[str, Any] = {"validation": {k: v for k, v in metrics.items() if k.startswith("best_validation_")}}
    if rank == 0:  # one process over the whole validation set, with the best epoch's weights (the model's now)
        model.eval()
        with torch.no_grad(), local_metrics():
            losses = [model(**batch)["loss"].item() for batch in SimpleDataLoader(validation, batch_size=2)]
            results["single"] = {
                "best_validation_loss": sum(losses) / len(losses),
                **{f"best_validation_{k}": v for k, v in model.get_metrics(reset=True).items()},
            }
    for name, trainer in [
        ("training", probe_trainer(rank, world_size, 1 - rank)),
        ("per_batch", probe_trainer(rank, world_size, 2, model=PerBatchProbe(), validation=validation)),
    ]:
        weight = trainer.model.linear.weight.tolist()
        try:
            trainer.train()
        except ValueError as e:
            results[name] = str(e)
        assert trainer._total_batches_completed == 0 and trainer.model.linear.weight.tolist() == weight
    return results


def test_a_process_without_validation_data_validates_nothing_and_adds_nothing(two_processes):
    first, second = (process["small_data"] for process in two_processes)
    assert set(first["validation"]) == {f"best_validation_{k}" for k in ("loss", "accuracy", "perplexity")}
    assert first["validation"]["best_validation_accuracy"] not in (0.0, 1.0)
    assert first["validation"] == second["validation"]
    assert first["validation"] == pytest.approx(first["single"], rel=1e-6)
    assert first["training"] == second["training"] and first["per_batch"] == second["per_batch"]
    assert first["training"] == (
        "The training data is too small for 2 processes: process 1 gets no batch (batches per process: [1, 0]); "
        "use fewer processes or more data"
    )
    assert first["per_batch"] == (
        "The validation data is too small for 2 processes: process 1 gets no batch (batches per process: [3, 0]), "
        "and the model's metric categorical (CategoricalAccuracy) sums over the processes at every batch, so the "
        "others would wait for it; use fewer processes, more validation data, or metrics that gather their counts "
        "when read (this project's luke_* metrics)"
    )
