"""
Data for the entity disambiguation tests: real CoNLL-2003 documents as a benchmark file; the first pages of the real
206-page Wikipedia dump through the project's own commands (entity vocabulary, mention dictionary with
p(entity | name), pretraining corpus); tiny LUKEs with the masked-entity head (`LukeForMaskedLM` layout) whose entity
tables are those vocabularies.
"""

from pathlib import Path

from luke_allennlp.resources.entity_disambiguation import EdDocument, EdMention, write_benchmark
from luke_allennlp.resources.titles import normalize_title
from luke_allennlp.testing import save_roberta_tokenizer, shared_data_dir, write_tiny_luke_mlm
from tests.pretraining_corpus import conll_sentences

DUMP = "wikipedia/enwiki-pages-articles-shortened-206.xml.bz2"


def conll_documents(path, count):
    """The first documents of a CoNLL-2003 file as ED documents: their named entities as mentions, with made-up
    candidates (the mention itself, and "X (disambiguation)"), golds among them, outside them or NIL."""
    documents = {}
    for document, words, spans in conll_sentences(path, count):
        documents.setdefault(document, []).append((words, spans))
    result = []
    for number, sentences in documents.items():
        words, mentions = [], []
        for sentence, spans in sentences:
            for start, end in spans:
                mentions.append((len(words) + start, len(words) + end))
            words += sentence
        text = " ".join(words)
        offsets = [0]
        for word in words:
            offsets.append(offsets[-1] + len(word) + 1)
        ed = []
        for i, (start, end) in enumerate(mentions):
            name = normalize_title(" ".join(words[start:end]))  # (titles are read back normalised)
            candidates = [(name, 0.75), (f"{name} (disambiguation)", 0.25)] if i % 5 else []
            gold = None if i % 7 == 3 else name if i % 3 else f"{name} (band)"
            ed.append(EdMention(offsets[start], offsets[end] - 1, gold, candidates))
        result.append(EdDocument(f"{number} doc", text, ed))
    return result


def write_conll_benchmark(directory: Path, documents: int = 6) -> dict:
    """The first CoNLL-2003 testa documents as a benchmark file (`conll_documents`; every mention that has candidates
    has two, so that every one teaches something), and a tiny checkpoint whose vocabulary holds their titles."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ed_documents = conll_documents(shared_data_dir() / "conll2003" / "eng.testa", documents)
    write_benchmark(ed_documents, directory / "conll.csv")
    titles = sorted({title for d in ed_documents for m in d.mentions for title, _ in m.candidates})
    model = write_tiny_luke_mlm(directory / "model", ["[PAD]", "[UNK]", "[MASK]"] + titles)
    return {"benchmark": directory / "conll.csv", "model": model, "documents": ed_documents}


def build_wikipedia_ed_data(directory: Path, max_pages: int = 12, max_seq_length: int = 128) -> dict:
    # (the first 12 pages of the dump are 2 articles, "Anarchism" and "Autism", and 10 redirects)
    """
    From the first `max_pages` articles of the real 206-page dump: `entity_vocab.jsonl` (every linked title, the dump
    lacking most pages), `mentions.json` (no link-probability threshold), a corpus of `max_seq_length`-subword rows,
    a tiny checkpoint over that vocabulary, and the article "Autism" as a benchmark file. Returns their paths.
    """
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
    from luke_allennlp.wikipedia.linked_documents import linked_documents
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_dictionary

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    dump = shared_data_dir() / DUMP
    vocab, _ = build_entity_vocab(dump, max_pages=max_pages, include_missing_pages=True)
    vocab.save_jsonl(directory / "entity_vocab.jsonl")
    dictionary = build_mention_dictionary(
        dump, min_link_probability=0.0, max_pages=max_pages, include_missing_pages=True
    )
    dictionary.save(directory / "mentions.json")
    save_roberta_tokenizer(directory / "tokenizer")
    # (`max_pages` counts pages of every kind there, articles here: the corpus takes the articles the dictionary read)
    build_pretraining_corpus(
        dump,
        str(directory / "tokenizer"),
        directory / "entity_vocab.jsonl",
        directory / "corpus",
        CorpusOptions(max_seq_length=max_seq_length),
        max_pages=dictionary.stats["pages"],
    )
    model = write_tiny_luke_mlm(directory / "model", list(vocab))
    # The article "Autism" (page 25) in the ED benchmarks' format, its links as gold mentions.
    documents = linked_documents(dump, dictionary, page_ids=[25], include_missing_pages=True)
    write_benchmark(documents, directory / "autism.csv")
    return {
        "dump": dump,
        "vocab": vocab,
        "dictionary": directory / "mentions.json",
        "corpus": directory / "corpus",
        "model": model,
        "benchmark": directory / "autism.csv",
    }
