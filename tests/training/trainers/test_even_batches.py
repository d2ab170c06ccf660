import pytest
import torch

from luke_allennlp.training.trainers.even_batches import (
    evened,
    group_sizes,
    planned_lengths,
    split_to,
    validation_lengths,
)


def batch(start: int, size: int) -> dict:
    return {
        "tokens": {"ids": torch.arange(start, start + size).unsqueeze(1).repeat(1, 3)},
        "label": torch.arange(start, start + size),
        "metadata": list(range(start, start + size)),
    }


def instances(batches) -> list:
    return [i for b in batches for i in b["label"].tolist()]


def test_evened_splits_the_last_batches_and_keeps_every_instance_once():
    batches = [batch(0, 4), batch(4, 4), batch(8, 3)]
    out = list(evened(iter(batches), 3, 5))
    assert len(out) == 5 and instances(out) == list(range(11))
    assert [len(b["metadata"]) for b in out] == [4, 2, 2, 2, 1]  # the first kept, the last two halved
    assert all(b["tokens"]["ids"][:, 0].tolist() == b["label"].tolist() == b["metadata"] for b in out)
    assert list(evened(iter(batches), 3, 3)) == batches


def test_evened_names_what_cannot_be_split_and_a_wrong_length():
    with pytest.raises(ValueError, match="has 1 instances in its last 1 batches but needs 2 batches"):
        list(evened(iter([batch(0, 1)]), 1, 2))
    with pytest.raises(RuntimeError, match="yielded 2 batches, though its length said 3"):
        list(evened(iter([batch(0, 2), batch(2, 2)]), 3, 3))
    assert [len(b["metadata"]) for b in split_to([batch(0, 5)], 4)] == [1, 1, 1, 2]


def test_planned_lengths_give_every_process_the_same_steps():
    # accumulation 2: 5 batches take 3 steps, 4 take 2, so the second process splits one batch (2 + 2 + 1)
    assert planned_lengths([5, 4], 2) == [5, 5]
    assert planned_lengths([4, 3], 2) == [4, 3]  # 2 steps each already; the last group is uneven
    assert [group_sizes([4, 3], 2, step) for step in range(2)] == [4, 3]
    assert planned_lengths([3, 2], 1) == [3, 3] and planned_lengths([7], 4) == [7]


def test_a_process_without_a_batch_is_refused_with_the_counts():
    with pytest.raises(
        ValueError,
        match=r"The data is too small for 3 processes: process 2 gets no batch "
        r"\(batches per process: \[2, 1, 0\]\)",
    ):
        planned_lengths([2, 1, 0], 1)
    assert planned_lengths([0, 0], 1) == [0, 0]  # no data at all: nothing to keep in step


def test_a_process_without_validation_batches_validates_none_and_the_others_keep_in_step():
    assert validation_lengths([3, 0, 2]) == [3, 0, 3] and validation_lengths([0, 0]) == [0, 0]
