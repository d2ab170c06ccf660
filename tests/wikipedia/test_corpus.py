import json
from collections import Counter

import datasets
import pytest
import transformers

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.testing import save_roberta_tokenizer
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
from luke_allennlp.wikipedia.corpus_rows import CorpusOptions, PageProcessor
from luke_allennlp.wikipedia.dump import DumpError, WikiDump, WikiPage, write_dump
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from luke_allennlp.wikipedia.redirects import WikiIndex
from tests.wikipedia.crafted import write_crafted_dump

LINK_SKIPS = (
    "links_to_missing_pages",
    "links_through_redirect_loops",
    "links_outside_vocabulary",
    "links_across_sentences",
    "links_in_short_sentences",
    "mentions_without_subwords",
    "entities_over_max_entities",
    "non_entity_links",
    "links_in_headings",
    "links_in_templates",
    "links_in_tables",
    "links_in_references",
    "links_in_image_captions",
    "links_in_comments",
    "links_in_nowiki",
    "links_in_other_elements",
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus-inputs")
    dump = write_crafted_dump(root / "crafted.xml")
    save_roberta_tokenizer(root / "tokenizer")
    vocab, _ = build_entity_vocab(dump)
    vocab.save_jsonl(root / "vocab.jsonl")
    return dump, str(root / "tokenizer"), root / "vocab.jsonl"


def build(tmp_path, inputs, name="corpus", num_workers=1, **options):
    dump, tokenizer, vocab = inputs
    metadata = build_pretraining_corpus(dump, tokenizer, vocab, tmp_path / name, CorpusOptions(**options), num_workers)
    assert json.loads((tmp_path / name / "metadata.json").read_text()) == metadata
    return datasets.load_from_disk(str(tmp_path / name)), metadata


def mention_texts(row, tokenizer):
    return [
        tokenizer.decode([row["word_ids"][p] for p in positions]).strip() for positions in row["entity_position_ids"]
    ]


def accounted(metadata):
    """Every link is an entity of a row or counted where it went."""
    return (
        metadata["entities"]
        + sum(metadata["skipped"][k] for k in LINK_SKIPS)
        - metadata["adjusted"]["mentions_split_at_sequence_boundary"]
    )


def test_rows_hold_the_linked_entities_at_their_subwords(tmp_path, inputs):
    corpus, metadata = build(tmp_path, inputs)
    tokenizer = load_fast_tokenizer(inputs[1])
    vocab = EntityVocab.from_file(tmp_path / "corpus" / "entity_vocab.jsonl")
    assert corpus.column_names == ["word_ids", "entity_ids", "entity_position_ids", "page_id"]
    assert corpus["page_id"] == [10, 20, 30]
    assert tokenizer.decode(corpus[0]["word_ids"]) == (
        " A lantern is a portable lighting device with a candle inside. Some lanterns burn oil instead of wax. "
        "The paper lanterns of China are hung at festivals."
    )
    assert [[vocab.title(i) for i in row["entity_ids"]] for row in corpus] == [
        ["Candle", "Paper lantern", "China"],
        ["Candle", "Wick", "China", "Rome"],
        ["China", "Lantern", "Rome", "Wick"],
    ]
    assert [mention_texts(row, tokenizer) for row in corpus] == [
        ["candle", "paper lanterns", "China"],
        ["candle", "wick", "China", "Rome"],
        ["China", "lanterns", "Rome", "wick"],
    ]
    # 19 links: 17 of the running text (one of them to a category), and the one in the infobox.
    assert (metadata["pages"], metadata["sequences"], metadata["entities"], metadata["links"]) == (5, 3, 11, 19)
    assert metadata["words"] == sum(len(row["word_ids"]) for row in corpus)
    skipped = metadata["skipped"]
    assert (
        skipped["links_to_missing_pages"],
        skipped["links_through_redirect_loops"],
        skipped["links_in_short_sentences"],
    ) == (4, 1, 1)
    assert (skipped["pages_without_text"], skipped["redirect_pages"], skipped["non_article_pages"]) == (1, 4, 1)
    assert (skipped["sequences_without_entities"], skipped["short_sentences"], skipped["headings"]) == (2, 2, 1)
    assert accounted(metadata) == metadata["links"]
    assert metadata["markup_links"] == {"category": 1} and skipped["non_entity_links"] == 1
    assert metadata["links_outside_text"] == {"template": {"entity": 1}} and skipped["links_in_templates"] == 1


def test_metadata_and_copies_make_the_directory_self_contained(tmp_path, inputs):
    _, metadata = build(tmp_path, inputs)
    out = tmp_path / "corpus"
    # transformers 5 names the one RoBERTa tokenizer class RobertaTokenizer (RobertaTokenizerFast is its alias).
    assert metadata["tokenizer"] == {
        "name": inputs[1],
        "name_or_path": inputs[1],
        "path": "tokenizer",
        "class": transformers.RobertaTokenizerFast.__name__,
    }
    copied = load_fast_tokenizer(str(out / metadata["tokenizer"]["path"]))
    assert copied("Hello world")["input_ids"] == [0, 20920, 232, 2]
    assert metadata["entity_vocab"] == "entity_vocab.jsonl" and metadata["entity_vocab_size"] == 9
    assert list(EntityVocab.from_file(out / metadata["entity_vocab"])) == list(EntityVocab.from_file(inputs[2]))
    for key, value in dict(max_seq_length=512, max_entities=128, max_mention_length=30, min_sentence_length=5).items():
        assert metadata[key] == value
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        build(tmp_path, inputs)


def test_unknown_entities_as_unk(tmp_path, inputs):
    corpus, metadata = build(tmp_path, inputs, unknown_entities="unk")
    # oil, Latin, Rome (band) and the loop become [UNK]; "Nowhere land" is a short sentence, like "Lamps".
    assert metadata["entities"] == 15 and metadata["unk_entities"] == 4
    assert metadata["unk_links"] == {"links_to_missing_pages": 4, "links_through_redirect_loops": 1}
    assert metadata["skipped"]["links_in_short_sentences"] == 2
    assert accounted(metadata) == metadata["links"]
    assert sum(row["entity_ids"].count(1) for row in corpus) == 4


def test_limits_cut_and_count(tmp_path, inputs):
    tokenizer = load_fast_tokenizer(inputs[1])
    corpus, metadata = build(
        tmp_path,
        inputs,
        max_seq_length=12,
        max_entities=1,
        max_mention_length=1,
        include_sequences_without_entities=True,
    )
    for row in corpus:
        assert 0 < len(row["word_ids"]) <= 10 and len(row["entity_ids"]) <= 1
        for positions in row["entity_position_ids"]:
            assert len(positions) == 1 and positions[0] < len(row["word_ids"])
    adjusted, skipped = metadata["adjusted"], metadata["skipped"]
    # "paper lanterns", "wick" and "lanterns" are several subwords; 3 entities do not fit in max_entities
    assert adjusted["long_sentences_split"] == 6 and adjusted["mentions_truncated_to_max_mention_length"] == 3
    assert skipped["entities_over_max_entities"] == 3 and skipped["sequences_without_entities"] == 0
    assert accounted(metadata) == metadata["links"]
    # "... around a [[wick]]." is cut before the mention, not inside it ("Ġw", "ick")
    first_subwords = [mention_texts(row, tokenizer)[0] for row in corpus if row["entity_ids"]]
    assert first_subwords == ["candle", "paper", "candle", "w", "China", "China", "lantern", "Rome"]
    assert tokenizer.decode(corpus[6]["word_ids"]) == " wick."


def test_bad_input_is_counted_not_fatal(tmp_path, inputs):
    text = inputs[0].read_text()
    (tmp_path / "cut.xml").write_text(text[: text.index("Rome is the capital")])
    dump, tokenizer, vocab = tmp_path / "cut.xml", inputs[1], inputs[2]
    metadata = build_pretraining_corpus(dump, tokenizer, vocab, tmp_path / "out", CorpusOptions())
    assert (
        metadata["skipped"]["dump_errors"] == 1
        and "dump ends early" in metadata["dump_stats"]["dump_error_messages"][0]
    )
    assert metadata["pages"] == 4 and metadata["sequences"] == 3
    with pytest.raises(ValueError, match="unknown_entities must be"):
        CorpusOptions(unknown_entities="keep")
    # a file that is not a dump: an error naming it, and no half-built corpus left behind
    (tmp_path / "notes.txt").write_text("not a dump\n")
    with pytest.raises(DumpError, match="notes.txt: not a MediaWiki XML export"):
        build_pretraining_corpus(tmp_path / "notes.txt", tokenizer, vocab, tmp_path / "never", CorpusOptions())
    assert not (tmp_path / "never").exists()


def test_a_dump_without_links_gives_an_empty_corpus(tmp_path, inputs):
    write_dump(tmp_path / "plain.xml", [WikiPage("Rome", 1, 0, "Rome is the capital of Italy. It is old.")])
    metadata = build_pretraining_corpus(tmp_path / "plain.xml", inputs[1], inputs[2], tmp_path / "out", CorpusOptions())
    assert datasets.load_from_disk(str(tmp_path / "out")).num_rows == 0
    assert (metadata["pages"], metadata["sequences"], metadata["skipped"]["sequences_without_entities"]) == (1, 0, 1)


def test_output_is_the_same_with_two_workers(tmp_path, shared_data, inputs):
    dump = shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    vocab, _ = build_entity_vocab(dump, vocab_size=2000, include_missing_pages=True)
    vocab.save_jsonl(tmp_path / "vocab.jsonl")
    articles = [page for page in WikiDump(dump) if page.is_article and page.text.strip()][:12]
    corpora = []
    for workers in (1, 2):
        out = tmp_path / f"workers-{workers}"
        metadata = build_pretraining_corpus(
            dump, inputs[1], tmp_path / "vocab.jsonl", out, CorpusOptions(), workers, max_pages=12
        )
        corpora.append(datasets.load_from_disk(str(out)))
        assert metadata["pages"] == 12 and metadata["skipped"]["pages_after_max_pages"] == 106 - 12
        # Every `[[` of the 12 articles, tables, infoboxes, references and captions included.
        assert metadata["links"] == sum(page.text.count("[[") for page in articles) == accounted(metadata)
        assert metadata["links_outside_text"]["table"]["entity"] > 0 and metadata["skipped"]["links_in_templates"] > 0
    assert corpora[0].num_rows > 50
    assert corpora[0].to_dict() == corpora[1].to_dict()


def test_a_sentence_split_inside_a_mention_is_undone(inputs):
    tokenizer = load_fast_tokenizer(inputs[1])
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Stop. Go (film)"])
    processor = PageProcessor(tokenizer, vocab, WikiIndex({"Stop. Go (film)"}, {}), Namespaces(), CorpusOptions())
    page = WikiPage("Cinema", 5, 0, "They watched [[Stop. Go (film)|Stop. Go]] at home. It was a long film indeed.")
    stats = Counter()
    rows = processor.process(page, stats)
    assert stats["sentences_joined_at_mentions"] == 1 and stats["sentences"] == 2
    assert rows["entity_ids"] == [[3]] and rows["page_id"] == [5]
    assert mention_texts({k: v[0] for k, v in rows.items()}, tokenizer) == ["Stop. Go"]


def test_spacy_sentence_splitter_gives_the_same_entities(tmp_path, inputs):
    corpus, metadata = build(tmp_path, inputs, sentence_splitter="spacy")
    assert metadata["sentence_splitter"] == "spacy"
    assert (metadata["sequences"], metadata["entities"]) == (3, 11)
    assert [row["entity_ids"] for row in corpus] == [[4, 8, 3], [4, 7, 3, 6], [3, 5, 6, 7]]
