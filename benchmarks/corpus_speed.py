"""
Pretraining-corpus building speed on the 206-page real dump: pages per second per worker.

For 1 and 2 workers, the whole `build_pretraining_corpus` (both passes over the dump, the workers, writing
Arrow, `save_to_disk`) is timed; pages/s/worker = articles / seconds / workers. The per-page work alone, in
this process without a pool, is timed too, with its stages (markup cleaning, sentence splitting and
tokenisation, the rest), so the pool's overhead and where the time goes can be read off. The entity
vocabulary is built from the same dump first (`include_missing_pages`: the shortened dump lacks most pages).

    python benchmarks/corpus_speed.py [--dump PATH] [--workers 1 2] [--sentence-splitter rules|spacy]
"""

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from luke_allennlp.resources.tokenization import load_fast_tokenizer  # noqa: E402
from luke_allennlp.testing import save_roberta_tokenizer, shared_data_dir  # noqa: E402
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus  # noqa: E402
from luke_allennlp.wikipedia.corpus_rows import CorpusOptions, PageProcessor  # noqa: E402
from luke_allennlp.wikipedia.dump import WikiDump  # noqa: E402
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab  # noqa: E402
from luke_allennlp.wikipedia.markup import clean_wikitext  # noqa: E402
from luke_allennlp.wikipedia.redirects import WikiIndex  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--sentence-splitter", choices=("rules", "spacy"), default="rules")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    dump = args.dump or shared_data_dir() / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    work = Path(tempfile.mkdtemp())
    save_roberta_tokenizer(work / "tokenizer")
    vocab, _ = build_entity_vocab(dump, vocab_size=500_000, include_missing_pages=True)
    vocab.save_jsonl(work / "vocab.jsonl")
    options = CorpusOptions(sentence_splitter=args.sentence_splitter)

    # The per-page work alone (no pool, no writing), by stage.
    wiki_dump = WikiDump(dump)
    pages = list(wiki_dump)  # (reading the pages fills in the dump's namespaces)
    articles = [page for page in pages if page.is_article and page.text.strip()]
    processor = PageProcessor(
        load_fast_tokenizer(str(work / "tokenizer")), vocab, WikiIndex.from_pages(pages), wiki_dump.namespaces, options
    )
    clean_times, page_times = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for page in articles:
            clean_wikitext(page.text, wiki_dump.namespaces, headings=False)
        clean_times.append(time.perf_counter() - start)
        stats: Counter = Counter()
        start = time.perf_counter()
        for page in articles:
            processor.process(page, stats)
        page_times.append(time.perf_counter() - start)
    clean, per_page = statistics.median(clean_times), statistics.median(page_times)
    print(
        f"{dump.name}: {len(articles)} articles, {stats['sequences']} sequences, {stats['words']} subwords, "
        f"{stats['entities']} entities (sentence splitter: {args.sentence_splitter})"
    )
    print(
        f"per-page work in one process: {per_page:.2f} s = {len(articles) / per_page:.1f} pages/s "
        f"(markup cleaning {clean:.2f} s, the rest {per_page - clean:.2f} s)"
    )

    for workers in args.workers:
        times = []
        for repeat in range(args.repeats):
            out = work / f"corpus-{workers}-{repeat}"
            start = time.perf_counter()
            metadata = build_pretraining_corpus(
                dump, str(work / "tokenizer"), work / "vocab.jsonl", out, options, workers
            )
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        rate = metadata["pages"] / seconds
        print(
            f"build_pretraining_corpus, {workers} worker(s): {seconds:.2f} s = {rate:.1f} pages/s = "
            f"{rate / workers:.1f} pages/s/worker"
        )


if __name__ == "__main__":
    main()
