"""
The Wikipedia builders at growing dump sizes: seconds per page and peak memory, and a mention-dictionary reader's
memory after opening the store.

Synthetic dumps repeat the real 206-page dump (`enwiki-pages-articles-shortened-206.xml.bz2`) 10x, 40x, 100x, copy k
of each page titled `TITLE (copy k)` (`luke_allennlp.wikipedia.parts.repeat_dump`). Each builder runs in a fresh
process with one worker (`--num-workers 1`: the peak is one process's, `VmHWM`; seconds are one core's, after
the imports):
`build-entity-vocab --include-missing-pages`, `build-mention-dictionary --include-missing-pages` (the SQLite store)
and `build-pretraining-corpus` (RoBERTa's tokenizer, the vocabulary of the same dump). The reader check opens the
store in a fresh process, reads the names of 50 pages and the candidates of 2,000 names, and reports the memory
it holds (`VmRSS`) and its growth over the interpreter's; the same for the JSON file of the same dictionary
(`MentionDictionary.from_file`, which loads the whole dictionary into each process). Results go to a JSON file as they come.

    nice python benchmarks/wikipedia_scale.py [--sizes 10 40 100] [--builders vocab mentions corpus reader] [--no-json]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from luke_allennlp.testing import save_roberta_tokenizer, shared_data_dir  # noqa: E402
from luke_allennlp.wikipedia.parts import repeat_dump  # noqa: E402

DUMP = "enwiki-pages-articles-shortened-206.xml.bz2"

# Run in a fresh interpreter: the function (timed after the imports), then its time and peak memory as JSON.
CHILD = """
import json, os, sys, threading, time
import luke_allennlp.wikipedia.corpus, luke_allennlp.wikipedia.entity_vocab_builder
import luke_allennlp.resources.mentions.json_dictionary
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024
# RssAnon (the process's own memory, without the file pages it maps: a memory-mapped Arrow or SQLite file
# counts in VmHWM, but those pages are the kernel's page cache), sampled every 20 ms for its peak.
anon = [status("RssAnon")]
def sample():
    while True:
        anon.append(max(anon.pop(), status("RssAnon")))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
started, cpu_started = time.time(), sum(os.times()[:2])
{code}
# (VmHWM, this process's own peak: ru_maxrss would count the peak of the parent it was forked from)
peak = status("VmHWM")
cpu = sum(os.times()[:2])  # (this process's user + system time: the machine may be shared)
print(json.dumps({{"seconds": time.time() - started, "cpu_seconds": cpu - cpu_started, "peak_mb": peak,
                  "peak_anon_mb": max(anon[-1], status("RssAnon"))}}))
"""
BUILDERS = {
    "vocab": """
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
vocab, _ = build_entity_vocab({dump!r}, include_missing_pages=True, num_workers=1)
vocab.save_jsonl({work!r} + "/vocab.jsonl")
""",
    "mentions": """
from luke_allennlp.resources.mentions.json_dictionary import build_mention_store
build_mention_store({dump!r}, {work!r} + "/mentions.sqlite", include_missing_pages=True, num_workers=1)
""",
    "corpus": """
import shutil
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
shutil.rmtree({work!r} + "/corpus", ignore_errors=True)
build_pretraining_corpus({dump!r}, {work!r} + "/../tokenizer", {work!r} + "/vocab.jsonl", {work!r} + "/corpus",
                         num_workers=1)
""",
}
READER = """
import json, os, time
from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
before = rss_mb()
started = time.time()
dictionary = MentionDictionary.from_file({path!r})
opened = time.time() - started
pages = {pages!r}
names = [name for page in pages for name in dictionary.names_for_page(page)]
candidates = sum(len(dictionary.candidates(name, ignore_case=True)) for name in (names * 20)[:2000])
print(json.dumps({{"rss_mb": rss_mb(), "growth_mb": rss_mb() - before, "open_seconds": opened, "names": len(names),
                  "candidates": candidates, "file_mb": os.path.getsize({path!r}) / 2**20}}))
"""


def child(code: str) -> dict:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 40, 100])
    parser.add_argument(
        "--builders",
        nargs="+",
        default=["mentions", "reader", "vocab", "corpus"],
        choices=["vocab", "mentions", "reader", "corpus"],
    )
    parser.add_argument("--out", type=Path, default=Path("wikipedia_scale.json"))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--no-json", action="store_true", help="the reader of the store only, not of the JSON file")
    args = parser.parse_args()
    root = args.work or Path(tempfile.mkdtemp(prefix="wikipedia-scale-"))
    save_roberta_tokenizer(root / "tokenizer")
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    pages = {}
    for size in args.sizes:
        work = root / f"x{size}"
        work.mkdir(exist_ok=True)
        dump = work / "dump.xml"
        if not dump.exists():
            pages[size] = repeat_dump(shared_data_dir() / "wikipedia" / DUMP, dump, size)
        else:
            pages[size] = dump.read_bytes().count(b"<page>")
        print(f"{size}x: {pages[size]:,} pages, {dump.stat().st_size / 2**20:.0f} MB of XML", flush=True)
    for builder in args.builders:
        for size in args.sizes:
            work = root / f"x{size}"
            if builder == "reader":
                result = _readers(work, ("sqlite",) if args.no_json else ("sqlite", "json"))
            else:
                if builder == "corpus" and not (work / "vocab.jsonl").exists():
                    child(CHILD.format(code=BUILDERS["vocab"].format(dump=str(work / "dump.xml"), work=str(work))))
                code = BUILDERS[builder].format(dump=str(work / "dump.xml"), work=str(work))
                result = child(CHILD.format(code=code))
                result["ms_per_page"] = 1000 * result["seconds"] / pages[size]
            result["pages"] = pages[size]
            results.setdefault(builder, {})[str(size)] = result
            print(builder, f"{size}x", json.dumps(result), flush=True)
            args.out.write_text(json.dumps(results, indent=2) + "\n")
    _report(results)


def _readers(work: Path, formats: tuple) -> dict:
    """The reader's memory on the store, and on the same dictionary as JSON."""
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
    from luke_allennlp.resources.mentions.store import MentionStore

    store = MentionStore(work / "mentions.sqlite")
    query = (
        "SELECT DISTINCT page.title FROM page_names p JOIN titles page ON page.id = p.page_id ORDER BY page.title "
        "LIMIT 50"
    )
    titles = [t for (t,) in store.connection.execute(query)]
    if "json" in formats and not (work / "mentions.json").exists():
        MentionDictionary.from_store(store).save(work / "mentions.json")
    return {fmt: child(READER.format(path=str(work / f"mentions.{fmt}"), pages=titles)) for fmt in formats}


def _report(results: dict) -> None:
    for builder, sizes in results.items():
        for size, result in sizes.items():
            if builder == "reader":
                store, raw = result["sqlite"], result.get("json")
                json_figures = f"; JSON {raw['file_mb']:.0f} MB, +{raw['growth_mb']:.0f} MB" if raw else ""
                print(
                    f"reader {size:>4}x: store {store['file_mb']:.0f} MB file, +{store['growth_mb']:.0f} MB "
                    f"(RSS {store['rss_mb']:.0f} MB){json_figures}"
                )
            else:
                print(
                    f"{builder:>8} {size:>4}x: {result['pages']:>6,} pages {result['seconds']:7.1f} s "
                    f"{result['ms_per_page']:6.1f} ms/page ({1000 * result['cpu_seconds'] / result['pages']:5.1f} ms "
                    f"CPU)  peak {result['peak_mb']:6.0f} MB (anonymous {result.get('peak_anon_mb', 0):6.0f} MB)"
                )


if __name__ == "__main__":
    main()
