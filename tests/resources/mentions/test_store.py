"""The SQLite mention dictionary answers as the JSON one, and so do its users: the SQuAD entity inputs, the entity
disambiguation readers (corpus candidates, mention detection, raw text) and Wikipedia's linked documents."""

import json
import multiprocessing
import pickle
from collections import Counter

import pytest

from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from luke_allennlp.resources.mentions.store import MentionStore


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
        dictionary.min_link_probability,
        dictionary.dump,
        dictionary.stats,
    )
    back = MentionDictionary.from_store(store)
    assert (back.pages, back._link_probability, back.entities) == (
        dictionary.pages,
        dictionary._link_probability,
        dictionary.entities,
    )
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
    from luke_allennlp.resources.sqlite import connect, set_meta

    connection = connect(tmp_path / "part.sqlite", create=True)
    set_meta(connection, kind="mention-links")
    connection.close()
    with pytest.raises(ValueError, match="part.sqlite: not a mention dictionary of version 2"):
        MentionDictionary.from_file(tmp_path / "part.sqlite")
    (tmp_path / "old.json").write_text(json.dumps({"version": 1, "pages": {}, "link_probability": {}}))
    with pytest.raises(ValueError, match="old.json is of version 1, without candidates: rebuild it"):
        MentionDictionary.from_file(tmp_path / "old.json").save(tmp_path / "old.sqlite")


def _plain(instance) -> dict:
    return {
        name: _lists(field.tensor if hasattr(field, "tensor") else field.metadata)
        for name, field in instance.fields.items()
    }


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
    documents = [
        list(linked_documents(ed_wikipedia["dump"], d, page_ids=[25], include_missing_pages=True))
        for d in (dictionary, store)
    ]
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


def _jsts_sentences() -> list:
    from tests.jglue import jglue_file

    lines = jglue_file("jsts_valid").read_text(encoding="utf-8").splitlines()
    return [record[key] for record in map(json.loads, filter(None, lines)) for key in ("sentence1", "sentence2")]


def _json_and_store(dictionary: MentionDictionary, directory) -> tuple:
    dictionary.save(directory / "mentions.json")
    dictionary.save(directory / "mentions.sqlite")
    return MentionDictionary.from_file(directory / "mentions.json"), MentionDictionary.from_file(
        directory / "mentions.sqlite"
    )


def test_japanese_names_are_found_in_text_without_spaces_as_with_the_json_file(shared_data, tmp_path):
    """A `cjk_characters` matcher of the SQLite file finds what the JSON file's finds in Japanese text: the names of a
    Japanese dump (built by the pipeline) in its pages and in every sentence of JSTS's valid file, and the 3,000 most
    frequent character n-grams of those sentences (with names of mixed scripts and first characters that begin more
    names than are fetched at once) in the same sentences, every occurrence included."""
    from luke_allennlp.resources.mentions.store import MAX_NAMES_PER_TOKEN
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_store
    from tests.wikipedia.japanese_dump import write_japanese_dump

    sentences = _jsts_sentences()
    assert len(sentences) == 2 * 1457
    dump = write_japanese_dump(tmp_path / "jawiki.xml", shared_data / "jglue")
    build_mention_store(tmp_path / "jawiki.xml", tmp_path / "jawiki.sqlite", include_missing_pages=True)
    store = MentionStore(tmp_path / "jawiki.sqlite")
    dictionary = MentionDictionary.from_store(store)
    value = lambda candidates: len(candidates)  # noqa: E731
    json_matcher, store_matcher = (d.name_matcher(0.01, value, cjk_characters=True) for d in (dictionary, store))
    paragraphs = [p for page in dump["paragraphs"].values() for p in page]
    found = [json_matcher.find(text) for text in paragraphs + sentences]
    assert [store_matcher.find(text) for text in paragraphs + sentences] == found
    assert sum(map(len, found[: len(paragraphs)])) == 40 and sum(map(len, found[len(paragraphs) :])) == 37
    assert store.name_matcher(0.01, value).find(paragraphs[0]) == []  # word tokens: the paragraph is one token
    # n-grams: names of 1 to 6 characters, and the runs of Latin letters or digits with the character after them
    counts: Counter = Counter()
    for text in sentences:
        counts.update(text[i : i + n] for n in range(1, 7) for i in range(len(text) - n + 1) if not text[i].isspace())
    names = [name for name, _ in counts.most_common(3000)] + ["F1グランプリ", "2人の男性", "テニス 選手"]
    first = Counter(name[0] for name in names)
    assert max(first.values()) > MAX_NAMES_PER_TOKEN
    ngrams = MentionDictionary(
        pages={},
        link_probability=dict.fromkeys(names, 0.5),
        dump="jsts n-grams",
        entities={name: [[name, 1]] for name in names},
    )
    json_file, store_file = _json_and_store(ngrams, tmp_path)
    assert isinstance(store_file, MentionStore) and store_file.has_cjk_keys
    json_matcher, store_matcher = (d.name_matcher(0.01, value, cjk_characters=True) for d in (json_file, store_file))
    found = [json_matcher.find(text) for text in sentences]
    assert [store_matcher.find(text) for text in sentences] == found and sum(map(len, found)) > 20000
    for text in sentences[:300]:
        assert store_matcher.occurrences(text) == json_matcher.occurrences(text)


def test_a_store_without_cjk_keys_matches_at_word_tokens(tmp_path, caplog):
    """A file written before the CJK keys still reads; Japanese names are then found at word tokens only (warned)."""
    import sqlite3

    names = ["男性", "テニス", "New York"]
    dictionary = MentionDictionary(
        pages={},
        link_probability=dict.fromkeys(names, 0.5),
        dump="handwritten",
        entities={name: [[name, 1]] for name in names},
    )
    dictionary.save(tmp_path / "old.sqlite")
    connection = sqlite3.connect(tmp_path / "old.sqlite")
    connection.executescript(
        "DROP INDEX names_cjk_first_token; ALTER TABLE names DROP COLUMN cjk_first_token; "
        "ALTER TABLE names DROP COLUMN cjk_n_tokens;"
    )
    connection.close()
    store = MentionStore(tmp_path / "old.sqlite")
    text = "男性がテニスをしている。 男性 New York"
    with caplog.at_level("WARNING"):
        matcher = store.name_matcher(0.01, len, cjk_characters=True)
    assert "without the names' CJK keys" in caplog.text and not store.has_cjk_keys
    assert [name for _, _, name in matcher.find(text)] == ["男性", "New York"]
    assert [name for _, _, name in MentionStore(tmp_path / "old.sqlite").name_matcher(0.01, len).find(text)] == [
        "男性",
        "New York",
    ]
    new = dictionary.name_matcher(0.01, len, cjk_characters=True).find(text)
    assert [name for _, _, name in new] == ["男性", "テニス", "男性", "New York"]


def test_both_backends_are_one_interface(both, tmp_path):
    from luke_allennlp.resources.mentions.base import MentionDictionaryBase

    dictionary, store, _ = both
    assert isinstance(dictionary, MentionDictionaryBase) and isinstance(store, MentionDictionaryBase)
    names = list(store.iter_names())
    assert names == list(dictionary.iter_names()) and names == sorted(dictionary._link_probability.items())
    # A name listed without candidates falls back to the names without case and white space in either backend.
    handwritten = MentionDictionary(
        pages={},
        link_probability={"New York": 0.5, "new york": 0.5},
        entities={"New York": [["New York City", 3]], "new york": []},
    )
    handwritten.save(tmp_path / "handwritten.sqlite")
    for backend in (handwritten, MentionStore(tmp_path / "handwritten.sqlite")):
        assert backend.candidates("new york") == []
        assert backend.candidates("new york", ignore_case=True) == [("New York City", 1.0)]


def test_dictionaries_built_before_names_kept_their_combining_marks_are_refused_with_the_command(both, tmp_path):
    """A dictionary the builder wrote before a word kept its combining marks (no `name_tokens`) finds and counts names
    differently: one line naming it and the command that rebuilds it. Today's files load; hand-written ones too."""
    import shutil
    import sqlite3

    dictionary, store, path = both
    assert store.connection.execute("SELECT value FROM meta WHERE key = 'name_tokens'").fetchone() == ("2",)
    assert dictionary.to_json()["name_tokens"] == 2
    old = tmp_path / "old.sqlite"
    shutil.copy(path, old)
    connection = sqlite3.connect(old)
    connection.execute("DELETE FROM meta WHERE key = 'name_tokens'")
    connection.commit()
    connection.close()
    assert dictionary.stats["include_missing_pages"]  # (the fixture's: built from two pages of a dump)
    command = (
        f"allennlp build-mention-dictionary {dictionary.dump} {old} "
        f"--min-link-probability {dictionary.min_link_probability:g} --include-missing-pages"
    )
    with pytest.raises(ValueError) as refused:
        MentionDictionary.from_file(old)
    assert str(refused.value) == (
        f"{old}: built before names kept their combining marks (name tokens 1, now 2): it finds and counts names "
        f"differently; rebuild it: {command} (with its --page-titles, if any)"
    )
    data = {k: v for k, v in dictionary.to_json().items() if k != "name_tokens"}
    (tmp_path / "old.json").write_text(json.dumps({**data, "stats": {**data["stats"], "links_in": "text"}}))
    with pytest.raises(
        ValueError, match=r"old\.json: built before names kept .* --links-in text --include-missing-pages \(with"
    ):
        MentionDictionary.from_file(tmp_path / "old.json")
    (tmp_path / "new.json").write_text(json.dumps(dictionary.to_json()))
    assert MentionDictionary.from_file(tmp_path / "new.json").entities == dictionary.entities
    (tmp_path / "by_hand.json").write_text(
        json.dumps({"version": 2, "pages": {}, "link_probability": {"a": 1.0}, "entities": {"a": [["A", 1]]}})
    )
    assert MentionDictionary.from_file(tmp_path / "by_hand.json").candidates("a") == [("A", 1.0)]
