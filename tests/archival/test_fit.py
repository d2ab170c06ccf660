"""An archive's vocabulary fits its weights, or the load stops in one line (luke_allennlp/archival/fit.py): a
namespace larger than every tensor before anything is built, another mismatch before the weights are loaded."""

import re
import tracemalloc

import pytest

from luke_allennlp.modeling.weights import WeightsError
from tests.crafted_archives import crafted


def test_two_million_labels_are_refused_before_anything_is_built(trained_archive, tmp_path, monkeypatch):
    """Issue 38: an archive vocabulary of 2 million labels took some 1.5 GB before failing. It is refused after
    counting its lines, the namespace, its size and the weights' largest dimension named, in a few MB."""
    from allennlp.models import Model
    from allennlp.models.archival import load_archive

    labels = b"".join(b"label%d\n" % i for i in range(2_000_000))
    archive = crafted(trained_archive, tmp_path / "labels.tar.gz", members={"vocabulary/labels.txt": labels})
    built = []
    monkeypatch.setattr(Model, "from_params", classmethod(lambda cls, *a, **k: built.append(1)))
    tracemalloc.start()
    try:
        with pytest.raises(WeightsError) as refused:
            load_archive(str(archive))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert re.fullmatch(
        re.escape(f"{archive} (its vocabulary/labels.txt): 2,000,000 entries in the namespace 'labels', more than any ")
        + r"dimension of the weights \(at most [\d,]+\): this vocabulary is not the one the weights were trained with",
        str(refused.value),
    ), str(refused.value)
    assert not built and peak < 64 << 20, peak


def test_a_vocabulary_of_other_labels_is_named(trained_archive, tmp_path):
    """Issue 38: five labels against weights trained with two failed in torch's load_state_dict with a traceback:
    one line naming the weights, the first mismatch and the vocabulary's sizes."""
    from allennlp.models.archival import load_archive

    archive = crafted(trained_archive, tmp_path / "five.tar.gz", members={"vocabulary/labels.txt": b"a\nb\nc\nd\ne\n"})
    with pytest.raises(WeightsError) as refused:
        load_archive(str(archive))
    assert str(refused.value) == (
        f"{archive} (its member weights.th): does not fit the model that its config and vocabulary build (size "
        "mismatch for _classification_layer.weight: copying a param with shape torch.Size([2, 32]) from checkpoint, "
        "the shape in current model is torch.Size([5, 32]); the vocabulary's namespaces: labels 5): the vocabulary "
        "or the config is not the one the weights were trained with"
    )
