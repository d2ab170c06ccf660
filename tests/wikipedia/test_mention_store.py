"""The SQLite mention dictionary answers as the JSON one, and so do its users: the SQuAD entity inputs, the entity
disambiguation readers (corpus candidates, mention detection, raw text) and Wikipedia's linked documents."""

import json
import multiprocessing
import pickle

import pytest

from luke_allennlp.wikipedia.mention_dictionary import MentionDictionary
from luke_allennlp.wikipedia.mention_store import MentionStore


@pytest.fixture(scope="module")
def both(ed_wikipedia, tmp_path_factory):
    """The ED fixture's JSON dictionary (from the real dump's first pages) and the same as a SQLite file."""
    path = tmp_path_factory.mktemp("store") / "mentions.sqlite"
    dictionary = MentionDictionary.from_file(ed_wikipedia["dictionary"])
    dictionary.save(path)
    store = MentionDictionary.from_file(path)
    assert isinstance(store, MentionStore) and isinstance(dictionary, MentionDictionary)
    return dictionary, store, path


def test_every_query_answers_as_the_json_file(both):
    dictionary, store, _ = both
    assert len(dictionary._link_probability) > 800 and store.num_pages() == dictionary.num_pages() == 2
    for title in list(dictionary.pages) + ["anarchism", "Autism_", "No such page"]:
        assert store.names_for_page(title) == dictionary.names_for_page(title)
    names = list(dictionary._link_probability)
    variants = [v for name in names[::7] for v in (name.upper(), name.lower(), " " + name.replace(" ", "  "))]
    for name in names + variants + ["", "never linked"]:
        assert store.link_probability(name) == dictionary.link_probability(name)
        assert store.candidates(name) == dictionary.candidates(name)
        assert store.candidates(name, ignore_case=True) == dictionary.candidates(name, ignore_case=True)
    assert (store.min_link_probability, store.dump, store.stats) == (
        dictionary.min_link_probability, dictionary.dump, dictionary.stats,
    )  # fmt: skip
    back = MentionDictionary.from_store(store)
    assert (back.pages, back._link_probability, back.entities) == (
        dictionary.pages, dictionary._link_probability, dictionary.entities,
    )  # fmt: skip
    text = "Proudhon and Bakunin wrote on the Free Territory, syndicalism and anarcho-syndicalism in Spain."
    value = lambda candidates: len(candidates)  # noqa: E731
    json_matcher, store_matcher = dictionary.name_matcher(0.01, value), store.name_matcher(0.01, value)
    found = json_matcher.find(text)
    assert len(found) >= 4 and store_matcher.find(text) == found
    assert [store_matcher.value(n) for _, _, n in found] == [json_matcher.value(n) for _, _, n in found]
    assert store_matcher.occurrences(text) == json_matcher.occurrences(text)


def _candidates_in_child(store: MentionStore, queue) -> None:
    queue.put(store.candidates("Free Territory"))


def test_workers_open_their_own_connection(both):
    _, store, _ = both
    expected = store.candidates("Free Territory")  # (the parent's connection is open)
    assert pickle.loads(pickle.dumps(store)).candidates("Free Territory") == expected
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_candidates_in_child, args=(store, queue))
    child.start()
    assert queue.get(timeout=60) == expected
    child.join()


def test_bad_files_are_named(both, tmp_path, ed_wikipedia):
    from luke_allennlp.wikipedia.parts import connect, set_meta

    connection = connect(tmp_path / "part.sqlite", create=True)
    set_meta(connection, kind="mention-links")
    connection.close()
    with pytest.raises(ValueError, match="part.sqlite: not a mention dictionary of version 2"):
        MentionDictionary.from_file(tmp_path / "part.sqlite")
    (tmp_path / "old.json").write_text(json.dumps({"version": 1, "pages": {}, "link_probability": {}}))
    with pytest.raises(ValueError, match="old.json is of version 1, without candidates: rebuild it"):
        MentionDictionary.from_file(tmp_path / "old.json").save(tmp_path / "old.sqlite")


def _plain(instance) -> dict:
    return {name: _lists(field.tensor if hasattr(field, "tensor") else field.metadata)
            for name, field in instance.fields.items()}  # fmt: skip


def _lists(value):
    """Tensors and arrays (anywhere in metadata too) as lists, to compare instances."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(item) for item in value]
    return value


def test_entity_disambiguation_reads_the_same(both, ed_wikipedia):
    from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader

    _, _, path = both

    def read(dictionary, source, **kwargs):
        reader = LukeEntityDisambiguationReader(
            str(ed_wikipedia["model"]), mention_dictionary=str(dictionary), **kwargs
        )
        return [_plain(i) for i in reader.read(str(source))], reader.stats

    for source, kwargs in ((ed_wikipedia["corpus"], {}), (ed_wikipedia["benchmark"], {"mention_detection": True})):
        json_read, store_read = read(ed_wikipedia["dictionary"], source, **kwargs), read(path, source, **kwargs)
        assert len(json_read[0]) > 10 and store_read == json_read
    text = "Proudhon wrote on the Free Territory and on syndicalism, far from Oranienburg."
    json_reader, store_reader = (
        LukeEntityDisambiguationReader(str(ed_wikipedia["model"]), mention_dictionary=str(d))
        for d in (ed_wikipedia["dictionary"], path)
    )
    assert [_plain(i) for i in store_reader.text_to_instances(text)] == [
        _plain(i) for i in json_reader.text_to_instances(text)
    ]
    assert len(store_reader.detect_mentions(text)) == 4


@pytest.mark.slow  # (two passes over the dump per dictionary, 10 s)
def test_linked_documents_are_the_same(both, ed_wikipedia):
    from luke_allennlp.wikipedia.linked_documents import linked_documents

    dictionary, store, _ = both
    documents = [list(linked_documents(ed_wikipedia["dump"], d, page_ids=[25], include_missing_pages=True))
                 for d in (dictionary, store)]  # fmt: skip
    assert documents[0] == documents[1] and len(documents[0][0].mentions) > 50


def test_squad_entity_inputs_are_the_same(tiny_luke_squad_dir, squad_mention_dictionary, squad_slice, tmp_path):
    from data_readers.luke_squad import LukeSquadReader

    dictionary = MentionDictionary.from_file(squad_mention_dictionary)
    dictionary.entities = {}  # (the handwritten version-1 file has no candidates; pages are what SQuAD reads)
    dictionary.save(tmp_path / "squad.sqlite")
    instances = []
    for path in (squad_mention_dictionary, tmp_path / "squad.sqlite"):
        reader = LukeSquadReader(str(tiny_luke_squad_dir), mention_dictionary=str(path))
        instances.append(([_plain(i) for i in reader.read(str(squad_slice))], reader.stats))
    assert instances[1] == instances[0] and instances[0][1]["mentions_not_in_entity_vocab"] == 30
