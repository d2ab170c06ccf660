import json
from collections import Counter

import datasets
import pytest

from data_readers.luke_entity_disambiguation import NO_GOLD, LukeEntityDisambiguationReader
from luke_allennlp.resources.entity_disambiguation import read_benchmark
from luke_allennlp.testing import write_tiny_luke_mlm
from tests.data_readers.subwords import decodes_to
from tests.resources.test_entity_disambiguation import HANDWRITTEN


def reader(ed, **kwargs):
    return LukeEntityDisambiguationReader(str(ed["model"]), mention_dictionary=str(ed["dictionary"]), **kwargs)


def mentions_of(instance):
    """(text of the mention's subwords, metadata) of each mention of an instance."""
    words = instance["word_ids"].tensor.tolist()
    out = []
    for positions, meta in zip(instance["entity_position_ids"].tensor.tolist(), instance["metadata"]["mentions"]):
        out.append((READER.tokenizer.decode([words[p] for p in positions if p >= 0]).strip(), meta))
    return out


READER = None


@pytest.fixture(autouse=True)
def _reader(ed_wikipedia):
    global READER
    READER = reader(ed_wikipedia)


def test_a_corpus_name_is_trimmed_of_punctuation_never_of_a_combining_mark(monkeypatch):
    names = {"Scott, James C.": [("James C. Scott", 1.0)], "Cafe": [("Cafe", 1.0)]}
    monkeypatch.setattr(READER, "_dictionary_candidates", lambda name: names.get(name, []))
    READER.stats.clear()
    assert READER._corpus_candidates("Scott, James C.,") == [("James C. Scott", 1.0)]
    assert READER._corpus_candidates("Cafe\u0301") == []  # decomposed "Café" is not "Cafe"
    assert READER.stats["corpus_names_trimmed"] == 1


def test_reads_the_corpus_links_as_gold_mentions(ed_wikipedia):
    instances = list(READER.read(str(ed_wikipedia["corpus"])))
    metadata = json.loads((ed_wikipedia["corpus"] / "metadata.json").read_text())
    stats = READER.stats
    assert len(instances) == stats["instances"] == metadata["sequences"] == 198
    assert stats["mentions"] == metadata["entities"] == 964
    # The dictionary was built from the same pages: every gold entity is a candidate; 5 names end in a subword
    # that goes past the anchor ("Scott, James C.,") and are found once trimmed.
    assert (stats["mentions_without_candidates"], stats["gold_outside_candidates"], stats["corpus_names_trimmed"]) == (
        0,
        0,
        5,
    )
    # Each field pads as the reader declared it inline before the LUKE fields took the declared padding table.
    padding = {name: field.padding_value for name, field in instances[0].fields.items() if name != "metadata"}
    assert padding == {
        "word_ids": READER.tokenizer.pad_token_id,
        "word_attention_mask": False,
        "entity_position_ids": -1,
        "entity_attention_mask": False,
        "gold_entity_ids": NO_GOLD,
        "candidate_ids": -1,
        "candidate_priors": 0.0,
    }
    found = {}
    for instance in instances:
        golds = instance["gold_entity_ids"].tensor.tolist()
        candidates = instance["candidate_ids"].tensor.tolist()
        for (text, meta), gold, ids in zip(mentions_of(instance), golds, candidates):
            assert text == meta["text"] and READER.entity_vocab.title(gold) == meta["gold"]
            assert gold in ids and meta["candidates"] == [READER.entity_vocab.title(i) for i in ids if i >= 0]
            found[text] = meta["candidates"]
    # "Free Territory": twice to Free Territory, once to Free Territory (Ukraine) in these pages
    assert found["Free Territory"] == ["Free Territory", "Free Territory (Ukraine)"]
    free = next(i for i in instances if any(m["text"] == "Free Territory" for m in i["metadata"]["mentions"]))
    k = [m["text"] for m in free["metadata"]["mentions"]].index("Free Territory")
    assert free["candidate_priors"].tensor[k, :2].tolist() == pytest.approx([2 / 3, 1 / 3])


def test_pages_split_the_corpus(ed_wikipedia):
    rows = datasets.load_from_disk(str(ed_wikipedia["corpus"]))["page_id"]
    train = list(reader(ed_wikipedia, pages="train").read(str(ed_wikipedia["corpus"])))
    held_out = list(reader(ed_wikipedia, pages="held_out", held_out_every=2).read(str(ed_wikipedia["corpus"])))
    # page ids 12 ("Anarchism") and 25 ("Autism"): every 10th and every 2nd page from the first is page 12
    assert len(held_out) == rows.count(12) and len(train) == rows.count(25) and len(train) + len(held_out) == 198


def test_benchmark_file_counts_what_cannot_be_right(tmp_path):
    model = write_tiny_luke_mlm(tmp_path / "model", ["[PAD]", "[UNK]", "[MASK]", "Japan", "China", "AT&T"])
    (tmp_path / "aida.csv").write_text(HANDWRITTEN, encoding="utf-8")
    ed_reader = LukeEntityDisambiguationReader(str(model))
    soccer, att = ed_reader.read(str(tmp_path / "aida.csv"))
    stats = ed_reader.stats
    # JAPAN (gold: the national team, outside the vocabulary, a candidate outside it too), CHINA (gold outside the
    # vocabulary), DEFEAT (no candidates; gold outside), AT&T (right); SURPRISE is NIL.
    assert (
        stats["mentions"],
        stats["nil_mentions"],
        stats["gold_outside_vocabulary"],
        stats["mentions_without_candidates"],
        stats["candidates_outside_vocabulary"],
        stats["gold_outside_candidates"],
    ) == (4, 1, 3, 1, 1, 0)
    assert soccer["gold_entity_ids"].tensor.tolist() == [-1, -1, -1] and att["gold_entity_ids"].tensor.tolist() == [5]
    assert soccer["candidate_ids"].tensor.tolist() == [[3], [4], [-1]]
    assert [text for text, _ in mentions_of(soccer)] == ["JAPAN", "CHINA", "DEFEAT"]
    assert soccer["metadata"]["mentions"][0] == {
        "start": 9,
        "end": 14,
        "text": "JAPAN",
        "gold": "Japan national football team",
        "candidates": ["Japan"],
    }


def test_long_documents_are_windowed_without_losing_mentions(ed_wikipedia):
    path = ed_wikipedia["benchmark"]
    (document,) = read_benchmark(path)
    ed_reader = reader(ed_wikipedia, max_seq_length=64, max_entities=4)
    instances = list(ed_reader.read(str(path)))
    seen = Counter()
    for instance in instances:
        assert len(instance["word_ids"].tensor) <= 64 and len(instance["metadata"]["mentions"]) <= 4
        for text, meta in mentions_of(instance):
            seen[meta["start"], meta["end"]] += 1
            assert text == meta["text"] == document.text[meta["start"] : meta["end"]]  # not cut by a window edge
    assert seen == Counter((m.start, m.end) for m in document.mentions) and len(seen) == 299
    stats = ed_reader.stats
    assert (
        stats["documents_split_into_windows"] == 1
        and stats["windows"] > 100
        and stats["windows_split_for_max_entities"] > 0
    )
    assert stats["mentions_cut_at_window_end"] == 0 and stats["instances"] == len(instances)


def test_mention_detection_scores_against_the_gold_links(ed_wikipedia):
    path = ed_wikipedia["benchmark"]
    (document,) = read_benchmark(path)
    ed_reader = reader(ed_wikipedia, mention_detection=True, max_seq_length=128, max_entities=8)
    instances = list(ed_reader.read(str(path)))
    links = Counter(tuple(link) for i in instances for link in i["metadata"]["gold_links"])
    assert links == Counter((m.start, m.end, m.gold) for m in document.mentions)  # each gold link once
    detected = [(m["start"], m["end"]) for i in instances for m in i["metadata"]["mentions"]]
    assert len(detected) == len(set(detected)) > 299  # names are found where they are not linked, too
    assert all(i["gold_entity_ids"].tensor.eq(NO_GOLD).all() for i in instances)
    # A gold link travels with the mention of its span, whichever instance that is.
    for instance in instances:
        spans = {(m["start"], m["end"]) for m in instance["metadata"]["mentions"]}
        assert all((s, e) in spans for s, e, _ in instance["metadata"]["gold_links"] if (s, e) in set(detected))


def test_raw_text(ed_wikipedia):
    text = "Proudhon wrote on the Free Territory and on syndicalism, far from Oranienburg."
    (instance,) = READER.text_to_instances(text)
    found = [(text[m["start"] : m["end"]], m["candidates"]) for m in instance["metadata"]["mentions"]]
    assert found == [
        ("Proudhon", ["Pierre-Joseph Proudhon"]),
        ("Free Territory", ["Free Territory", "Free Territory (Ukraine)"]),
        ("syndicalism", ["Anarcho-syndicalism", "Syndicalism"]),
        ("Oranienburg", ["Oranienburg", "Oranienburg concentration camp"]),
    ]
    # Given spans get the dictionary's candidates for their text.
    from luke_allennlp.resources.entity_disambiguation import EdMention

    (given,) = READER.text_to_instances(text, [EdMention(0, 8)])
    assert given["metadata"]["mentions"][0]["candidates"] == ["Pierre-Joseph Proudhon"]
    assert READER.text_to_instances("No names here at all.") == []
    with pytest.raises(ValueError, match="covers no subword"):
        READER.text_to_instances("a  b", [EdMention(1, 2)])


def test_bad_input_is_named(ed_wikipedia, tmp_path):
    with pytest.raises(ValueError, match="mention_detection needs text"):
        list(reader(ed_wikipedia, mention_detection=True).read(str(ed_wikipedia["corpus"])))
    with pytest.raises(ValueError, match="come from a mention_dictionary"):
        list(LukeEntityDisambiguationReader(str(ed_wikipedia["model"])).read(str(ed_wikipedia["corpus"])))
    (tmp_path / "old.json").write_text(json.dumps({"version": 1, "pages": {}, "link_probability": {}}))
    old = LukeEntityDisambiguationReader(str(ed_wikipedia["model"]), mention_dictionary=str(tmp_path / "old.json"))
    with pytest.raises(ValueError, match="version-1 mention dictionary.*rebuild"):
        list(old.read(str(ed_wikipedia["corpus"])))
    with pytest.raises(ValueError, match="pages must be one of"):
        reader(ed_wikipedia, pages="test")
    # A corpus tokenised with another vocabulary (two subwords' ids swapped).
    import shutil

    shutil.copytree(ed_wikipedia["corpus"], tmp_path / "corpus")
    tokenizer_file = tmp_path / "corpus" / "tokenizer" / "tokenizer.json"
    tokenizer = json.loads(tokenizer_file.read_text())
    vocab = tokenizer["model"]["vocab"]
    vocab["the"], vocab["The"] = vocab["The"], vocab["the"]
    tokenizer_file.write_text(json.dumps(tokenizer))
    with pytest.raises(ValueError, match="tokenised with another vocabulary than the model's"):
        list(READER.read(str(tmp_path / "corpus")))


def test_benchmark_with_an_mluke_checkpoint(ed_conll, xlmr_tokenizer_dir, tmp_path):
    """
    An mLUKE checkpoint (sentencepiece subwords, entity_vocab.json keyed by `en:title`) over the CoNLL benchmark:
    the same mentions, candidates and golds as the LUKE checkpoint whose vocabulary has the same titles unprefixed.
    """
    from luke_allennlp.testing import write_tiny_checkpoint

    titles = json.loads((ed_conll["model"] / "entity_vocab.json").read_text())
    lines = [{"id": i, "entities": [[title, "en"]], "count": 0} for title, i in titles.items()]
    (tmp_path / "entity_vocab.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = write_tiny_checkpoint(
        tmp_path / "mluke", "mluke", tokenizer=xlmr_tokenizer_dir, entity_vocab=tmp_path / "entity_vocab.jsonl"
    )
    written = json.loads((model / "entity_vocab.json").read_text())
    assert all(key.startswith("en:") or key.startswith("[") for key in written)
    mluke, luke = LukeEntityDisambiguationReader(str(model)), LukeEntityDisambiguationReader(str(ed_conll["model"]))
    ours, theirs = list(mluke.read(str(ed_conll["benchmark"]))), list(luke.read(str(ed_conll["benchmark"])))
    counts = (
        "documents",
        "mentions",
        "mentions_without_candidates",
        "gold_outside_vocabulary",
        "gold_outside_candidates",
        "candidates_outside_vocabulary",
    )
    assert {k: mluke.stats[k] for k in counts} == {k: luke.stats[k] for k in counts} and mluke.stats["mentions"] > 50
    # (the windows differ: the same text is another number of subwords)
    assert sorted(json.dumps(m, sort_keys=True) for i in ours for m in i["metadata"]["mentions"]) == sorted(
        json.dumps(m, sort_keys=True) for i in theirs for m in i["metadata"]["mentions"]
    )
    for instance in ours:
        ids = instance["word_ids"].tensor.tolist()
        assert ids[0] == 0 and ids[-1] == 2  # <s> ... </s>
        golds = instance["gold_entity_ids"].tensor.tolist()
        for positions, meta, gold in zip(
            instance["entity_position_ids"].tensor.tolist(), instance["metadata"]["mentions"], golds
        ):
            assert decodes_to(mluke.tokenizer, [ids[p] for p in positions if p >= 0], meta["text"])
            assert gold < 0 or mluke.entity_vocab.title(gold) == meta["gold"]
