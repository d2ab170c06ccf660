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
        predicted = [{span: (k if rng.random() < 0.6 else rng.choice(kinds)) for span, k in g.items() if rng.random() < 0.8}
                     for g in gold]  # fmt: skip
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
    return [([[link() for _ in range(3)] for _ in range(2)], [[link() for _ in range(3)] for _ in range(2)])
            for _ in range(12)]  # fmt: skip


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
    return {"metrics": run_metrics(rank, world_size), "training": count_all_reduces(rank, world_size)}


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


def count_all_reduces(rank: int, world_size: int) -> Dict[str, Any]:
    """Trains 3 optimizer steps of 4 accumulated micro-batches with the trainer under DDP, counting the gradient
    all-reduces (a DDP communication hook sees each bucket)."""
    from allennlp.common import Params
    from allennlp.data import Instance
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.data.fields import TensorField
    from allennlp.nn.parallel import TorchDdpAccelerator
    from allennlp.training.trainer import Trainer

    from tests.training.trainers.test_luke_gradient_descent import AutocastProbe

    torch.manual_seed(0)
    model = AutocastProbe()
    g = torch.Generator().manual_seed(rank)
    instances = [Instance({"x": TensorField(torch.randn(2, generator=g)), "y": TensorField(torch.randn(1, generator=g))})
                 for _ in range(12)]  # fmt: skip
    trainer = Trainer.from_params(
        Params(
            {
                "type": "luke_gradient_descent",
                "num_epochs": 1,
                "cuda_device": -1,
                "checkpointer": None,
                "num_gradient_accumulation_steps": 4,
                "optimizer": {"type": "luke_adamw", "lr": 0.1},
            }
        ),
        model=model,
        serialization_dir=None,
        data_loader=SimpleDataLoader(instances, batch_size=1),
        distributed=True,
        local_rank=rank,
        world_size=world_size,
        ddp_accelerator=TorchDdpAccelerator(cuda_device=-1),
    )
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
