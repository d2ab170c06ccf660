import torch
from allennlp.data import Instance
from allennlp.data.fields import TensorField

from luke_allennlp.data.samplers.luke_bucket import LukeBucketBatchSampler


def instance(words: int, windows: int, spans: int) -> Instance:
    mask = torch.zeros(2, 8, dtype=torch.bool)  # (chunks, slots), spans filling the chunks from the front
    mask.view(-1)[:spans] = True
    return Instance(
        {
            "word_ids": TensorField(torch.ones(windows, words, dtype=torch.long)),
            "entity_attention_mask": TensorField(mask, padding_value=False),
        }
    )


def test_sorts_stacked_fields_by_size_and_masks_by_real_positions():
    instances = [instance(10, 3, 1), instance(40, 1, 12), instance(12, 1, 3), instance(35, 1, 2)]
    sampler = LukeBucketBatchSampler(batch_size=2, sorting_keys=["word_ids"], shuffle=False)
    # Sizes 30, 40, 12, 35 (windows x words; allennlp's `bucket` would see 3, 1, 1, 1).
    assert list(sampler.get_batch_indices(instances)) == [[2, 0], [3, 1]]
    by_spans = LukeBucketBatchSampler(batch_size=2, sorting_keys=["entity_attention_mask", "word_ids"], shuffle=False)
    assert list(by_spans.get_batch_indices(instances)) == [[0, 3], [2, 1]]  # 1, 2, 3, 12 real spans
