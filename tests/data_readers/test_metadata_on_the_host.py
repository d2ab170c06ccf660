"""
No reader puts a torch tensor in a `MetadataField`: allennlp's trainer moves every tensor of a batch to the GPU,
metadata included (`nn.util.move_to_device` walks dicts, lists and tuples), so a tensor kept there for decoding
ends up on the device, where `.numpy()` fails and every read of a value is a device sync. Metadata keeps its arrays
as numpy. (The NER span layout was a tensor once, and NER training crashed on CUDA.)
"""

import itertools
from typing import Any, Callable, Dict, Iterator, Tuple

import pytest
import torch
from allennlp.data import DatasetReader
from allennlp.data.fields import MetadataField

import data_readers
from tests.jglue import JAPANESE_CHECKPOINT, jglue_file

INSTANCES = 8  # read from each file


def tensors_inside(value: Any, path: str = "") -> Iterator[Tuple[str, torch.Tensor]]:
    """(key path, tensor) of every torch tensor in `value`, through dicts, lists, tuples and sets."""
    if isinstance(value, torch.Tensor):
        yield path or "(the value itself)", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from tensors_inside(item, f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            yield from tensors_inside(item, f"{path}[{i}]")


def test_tensors_inside_names_the_key_path():
    metadata = {"id": "a", "spans": torch.zeros(2), "nested": [{"x": 1}, ({"y": torch.ones(1)},)]}
    assert [path for path, _ in tensors_inside(metadata)] == ["['spans']", "['nested'][1][0]['y']"]
    assert list(tensors_inside({"spans": [[0, 1]], "words": ("a",)})) == []


# Per reader: the readers and files its own tests read (tests/data_readers/test_<reader>.py), built from the
# fixtures of tests/conftest.py.
def conll2003(get: Callable[[str], Any]) -> Dict[str, Tuple[DatasetReader, Any]]:
    from data_readers.luke_conll2003 import LukeConll2003Reader

    return {"": (LukeConll2003Reader(str(get("tiny_luke_dir"))), get("conll_slice"))}


def entity_disambiguation(get):
    from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader

    ed = get("ed_wikipedia")
    corpus = LukeEntityDisambiguationReader(str(ed["model"]), mention_dictionary=str(ed["dictionary"]))
    detection = LukeEntityDisambiguationReader(
        str(ed["model"]),
        mention_dictionary=str(ed["dictionary"]),
        mention_detection=True,
        max_seq_length=128,
        max_entities=8,
    )
    benchmark = get("ed_conll")
    return {
        "corpus": (corpus, ed["corpus"]),
        "mention_detection": (detection, ed["benchmark"]),
        "benchmark": (LukeEntityDisambiguationReader(str(benchmark["model"])), benchmark["benchmark"]),
    }


def multiple_choice(get):
    from data_readers import LukeMultipleChoiceReader

    reader = LukeMultipleChoiceReader(str(get(JAPANESE_CHECKPOINT)), id_field="q_id")
    return {"": (reader, jglue_file("jcommonsenseqa_valid"))}


def open_entity(get):
    from data_readers.luke_open_entity import LukeOpenEntityReader

    return {"": (LukeOpenEntityReader(str(get("tiny_luke_dir"))), get("open_entity_slice"))}


def pretraining(get):
    from data_readers.luke_pretraining import LukePretrainingReader

    return {"": (LukePretrainingReader(shuffle=False), get("pretraining_corpus"))}


def record(get):
    from data_readers.luke_record import LukeRecordReader

    return {"": (LukeRecordReader(str(get("tiny_luke_dir"))), get("record_sample"))}


def relation_classification(get):
    from data_readers.luke_relation_classification import LukeRelationClassificationReader

    reader = LukeRelationClassificationReader(str(get("tiny_luke_dir")))
    return {
        "semeval": (reader, get("semeval_slice")),
        "tacred": (reader, get("tacred_train")),
        "kbp37": (reader, get("kbp37_sample")),
    }


def sentence_classification(get):
    from data_readers import LukeSentenceClassificationReader

    reader = LukeSentenceClassificationReader(
        str(get(JAPANESE_CHECKPOINT)), regression=True, id_field="sentence_pair_id"
    )
    return {"": (reader, jglue_file("jsts_valid"))}


def squad(get):
    from data_readers.luke_squad import LukeSquadReader

    entities = LukeSquadReader(str(get("tiny_luke_squad_dir")), mention_dictionary=str(get("squad_mention_dictionary")))
    return {
        "words": (LukeSquadReader(str(get("tiny_roberta_dir"))), get("squad_slice")),
        "entities": (entities, get("squad_slice")),
    }


READERS = {
    "luke_conll2003": conll2003,
    "luke_entity_disambiguation": entity_disambiguation,
    "luke_multiple_choice": multiple_choice,
    "luke_open_entity": open_entity,
    "luke_pretraining": pretraining,
    "luke_record": record,
    "luke_relation_classification": relation_classification,
    "luke_sentence_classification": sentence_classification,
    "luke_squad": squad,
}


def test_every_reader_of_the_project_is_checked():
    assert set(READERS) == set(data_readers.MODULES)
    ours = {
        name
        for name in DatasetReader.list_available()
        if DatasetReader.resolve_class_name(name)[0].__module__.split(".")[0] in data_readers.NAMES
    }
    assert ours == set(READERS)


@pytest.mark.parametrize("name", sorted(READERS))
def test_metadata_holds_no_tensor(name, request):
    checked = 0
    for variant, (reader, path) in READERS[name](request.getfixturevalue).items():
        label = f"{name}{f' ({variant})' if variant else ''}"
        instances = list(itertools.islice(reader.read(str(path)), INSTANCES))
        assert instances, f"{label}: no instance read from {path}"
        for k, instance in enumerate(instances):
            for field_name, field in instance.fields.items():
                if not isinstance(field, MetadataField):
                    continue
                checked += 1
                found = [f"{p} ({tuple(t.shape)} {t.dtype})" for p, t in tensors_inside(field.metadata)]
                assert not found, (
                    f"{label}: instance {k} of {path}: MetadataField {field_name!r} holds torch tensors at "
                    f"{', '.join(found)} (the trainer moves them to the GPU; keep them numpy)"
                )
    # luke_pretraining's instances have no metadata; the others have some.
    assert checked or name == "luke_pretraining", f"{name}: no MetadataField to check"
