import random
from typing import Iterable

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.fields import TensorField
from allennlp.data.instance import Instance
from allennlp.data.samplers import BatchSampler
from allennlp.data.samplers.bucket_batch_sampler import BucketBatchSampler


@BatchSampler.register("luke_bucket")
class LukeBucketBatchSampler(BucketBatchSampler):
    """
    allennlp's `bucket` sampler (batches of instances of similar size, in random order), measuring a
    `TensorField` by its number of elements rather than its first dimension, so that stacked inputs sort by their
    whole size (a `(windows, words)` SQuAD passage by windows x words), and a boolean one (an attention mask) by its
    number of True values: a `(chunks, entities)` NER sentence by its real spans, not the slots of its chunks. Other
    fields are measured as allennlp does (`len`). Sorting keys after the first break ties. The parameters are those
    of `bucket`.

    Registered as a `BatchSampler` with name "luke_bucket".
    """

    def _argsort_by_padding(self, instances: Iterable[Instance]):
        if not self.sorting_keys:
            raise ConfigurationError('the luke_bucket sampler needs sorting_keys, e.g. ["word_ids"]')
        sizes = []
        for index, instance in enumerate(instances):
            size = []
            for key in self.sorting_keys:
                if key not in instance.fields:
                    raise ConfigurationError(
                        f'sorting key "{key}" is not a field of the instances ({list(instance.fields)})'
                    )
                field = instance.fields[key]
                if isinstance(field, TensorField):
                    tensor = field.tensor
                    size.append(int(tensor.sum()) if tensor.dtype == torch.bool else tensor.numel())
                else:
                    size.append(len(field))
            noisy = [value + random.uniform(-1, 1) * value * self.padding_noise for value in size]
            sizes.append((noisy, size, index))
        sizes.sort(key=lambda item: item[0])
        return [index for _, _, index in sizes], [size for _, size, _ in sizes]
