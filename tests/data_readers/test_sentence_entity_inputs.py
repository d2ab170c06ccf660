"""Optional entity inputs of the sentence-level readers (`mention_dictionary`): the dictionary's names found in the
real JGLUE text become entities over their subwords, the word inputs unchanged; without a dictionary the instances
have no entity inputs."""

import json

import pytest

from data_readers import LukeMultipleChoiceReader, LukeSentenceClassificationReader
from luke_allennlp.data.inputs import COUNTS, InputCounts
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from tests.jglue import JAPANESE_CHECKPOINT, MENTION_NAMES, write_mention_dictionary, write_slice

ENTITY_FIELDS = {
    "entity_ids",
    "entity_attention_mask",
    "entity_type_ids",
    "entity_start_positions",
    "entity_end_positions",
}


@pytest.fixture
def model_dir(request):
    return request.getfixturevalue(JAPANESE_CHECKPOINT)


def entities_of(instance, tokenizer, titles, row=None):
    """(title, decoded subwords, token type) of each real entity of an instance (of one `row` of a stacked one)."""
    get = lambda name: instance[name].tensor if row is None else instance[name].tensor[row]  # noqa: E731
    words, types = get("word_ids").tolist(), get("word_type_ids").tolist()
    found = []
    names = ("entity_ids", "entity_start_positions", "entity_end_positions", "entity_attention_mask", "entity_type_ids")
    for entity, start, end, real, kind in zip(*(get(n).tolist() for n in names)):
        if real:
            assert kind == types[start] == types[end]
            found.append((titles[entity], tokenizer.decode(words[start : end + 1]).replace(" ", "")))
    return found


def expected_names(text, kept_text):
    """The dictionary's names in `text`, in order (longest first at a position, no overlaps; none are nested here)."""
    hits = sorted(
        (text.index(name, i), name) for name in MENTION_NAMES for i in range(len(text)) if text.find(name, i) == i
    )
    return [name for _, name in hits if name != "トイレ"]


def test_sentence_pairs_get_the_entities_of_the_names_they_contain(model_dir, tmp_path):
    mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
    titles = {i: t for t, i in json.loads(vocab.read_text(encoding="utf-8")).items()}
    data = write_slice("jsts_train", tmp_path, 16)
    tokenizer = load_fast_tokenizer(str(model_dir))
    plain = LukeSentenceClassificationReader(str(model_dir), regression=True, id_field="sentence_pair_id")
    reader = LukeSentenceClassificationReader(
        str(model_dir),
        regression=True,
        id_field="sentence_pair_id",
        mention_dictionary=str(mentions),
        entity_vocab=str(vocab),
    )
    without, with_entities = list(plain.read(str(data))), list(reader.read(str(data)))
    total = 0
    for a, b in zip(without, with_entities):
        assert set(a.fields) | ENTITY_FIELDS == set(b.fields) and not ENTITY_FIELDS & set(a.fields)
        for name in a.fields:  # the word inputs do not change
            if name != "metadata":
                assert a[name].tensor.tolist() == b[name].tensor.tolist()
        metadata = b["metadata"].metadata
        names = expected_names(metadata["sentence1"], None) + expected_names(metadata["sentence2"], None)
        found = entities_of(b, tokenizer, titles)
        assert [title for title, _ in found] == names  # first sentence's names first
        assert all(title in text for title, text in found)  # each span's subwords cover its name
        # an instance without names has one padding entity, so that every batch has entity inputs
        assert b["entity_ids"].tensor.shape[0] == max(1, len(names))
        total += len(names)
    assert total > 10 and reader.stats["mentions"] == total
    assert reader.stats["mentions_not_in_entity_vocab"] == 1  # "トイレ" (line 0)
    assert plain.stats == {k: v for k, v in reader.stats.items() if not k.startswith("mentions")}


def test_entities_are_cut_with_the_text_and_by_max_entities(model_dir, tmp_path):
    mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
    options = dict(mention_dictionary=str(mentions), entity_vocab=str(vocab))
    sentence = "男性がテニスをしています。" + "とても" * 30 + "ドーナツ"
    reader = LukeSentenceClassificationReader(
        str(model_dir), sentence_fields=["sentence"], max_seq_length=16, **options
    )
    instance = reader.text_to_instance(sentence)
    assert instance["entity_ids"].tensor.tolist() == [3, 4]  # ドーナツ was cut with the end of the sentence
    small = LukeSentenceClassificationReader(str(model_dir), sentence_fields=["sentence"], max_entities=1, **options)
    assert small.text_to_instance(sentence)["entity_ids"].tensor.tolist() == [3]
    assert small.stats["mentions_cut_by_max_entities"] == 2
    with pytest.raises(ValueError, match="only used with mention_dictionary"):
        LukeSentenceClassificationReader(str(model_dir), entity_vocab=str(vocab))


def test_multiple_choice_entities_per_choice(model_dir, tmp_path):
    mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
    titles = {i: t for t, i in json.loads(vocab.read_text(encoding="utf-8")).items()}
    data = write_slice("jcommonsenseqa_train", tmp_path, 4)
    tokenizer = load_fast_tokenizer(str(model_dir))
    plain = list(LukeMultipleChoiceReader(str(model_dir), id_field="q_id").read(str(data)))
    reader = LukeMultipleChoiceReader(
        str(model_dir), id_field="q_id", mention_dictionary=str(mentions), entity_vocab=str(vocab)
    )
    instances = list(reader.read(str(data)))
    first = instances[0]  # choices: 世界, 写真集, 絵本, 論文, 図鑑
    assert first["entity_ids"].tensor.shape == (5, 1)
    assert [entities_of(first, tokenizer, titles, row) for row in range(5)] == [
        [],
        [("写真集", "写真集")],
        [("絵本", "絵本")],
        [],
        [],
    ]
    assert plain[0]["word_ids"].tensor.tolist() == first["word_ids"].tensor.tolist()
    assert not ENTITY_FIELDS & set(plain[0].fields) and reader.stats["mentions"] == 2
    # The counts the model sizes its passes and position ids by: a pass per choice, the longest mention in subwords.
    lengths = first["entity_end_positions"].tensor - first["entity_start_positions"].tensor + 1
    longest = int(lengths[first["entity_attention_mask"].tensor].max())
    assert first["metadata"][COUNTS] == InputCounts(passes=5, longest_mention=longest) and longest > 1
    assert plain[0]["metadata"][COUNTS] == InputCounts(passes=5, longest_mention=1)


def test_a_sqlite_mention_dictionary_gives_the_same_entities(model_dir, tmp_path):
    """configs/jglue/*_entities with the `.sqlite` file `build-mention-dictionary` writes: the same instances as with
    the JSON file on real JSTS pairs, names found inside Japanese text without spaces."""
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary

    mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
    MentionDictionary.from_file(mentions).save(tmp_path / "mentions.sqlite")
    data = write_slice("jsts_valid", tmp_path, 300)
    read = []
    for dictionary in (mentions, tmp_path / "mentions.sqlite"):
        reader = LukeSentenceClassificationReader(
            str(model_dir),
            regression=True,
            id_field="sentence_pair_id",
            mention_dictionary=str(dictionary),
            entity_vocab=str(vocab),
        )
        instances = [
            {n: f.tensor.tolist() for n, f in i.fields.items() if n in ENTITY_FIELDS} for i in reader.read(str(data))
        ]
        read.append((instances, dict(reader.stats)))
    assert read[1] == read[0] and read[0][1]["mentions"] > 50
