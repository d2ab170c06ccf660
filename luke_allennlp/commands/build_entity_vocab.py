"""`allennlp build-entity-vocab DUMP OUT`: the entity vocabulary of a Wikipedia dump (LUKE's JSONL or TSV)."""

import argparse
import json

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, print_table
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from luke_allennlp.wikipedia.markup import LINK_SCOPES


@Subcommand.register("build-entity-vocab")
class BuildEntityVocab(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Count the links of a Wikipedia XML dump (through redirects) and write the most linked articles, after "
            "[PAD]=0, [UNK]=1, [MASK]=2, as LUKE's entity vocabulary: JSONL if OUT ends with .jsonl, TSV if .tsv."
        )
        summary = "Build LUKE's entity vocabulary from a dump."
        subparser = parser.add_parser(self.name, description=description, help=summary)
        subparser.add_argument("dump", help="a pages-articles XML dump (.xml, .xml.bz2 or .xml.gz)")
        subparser.add_argument("output", help="the vocabulary file to write (.jsonl or .tsv)")
        subparser.add_argument("--vocab-size", type=int, default=500_000,
                               help="entities kept, the 3 special ones included (the paper's 500K)")  # fmt: skip
        subparser.add_argument("--min-count", type=int, default=1, help="keep entities linked at least this often")
        subparser.add_argument("--language", default="en", help="the language written with each title in JSONL")
        subparser.add_argument("--include-missing-pages", action="store_true",
                               help="also keep linked titles the dump has no page for (for sample dumps)")  # fmt: skip
        subparser.add_argument("--links-in", choices=LINK_SCOPES, default="text",
                               help="count the links of the running text (default, as LUKE: the corpus's entities come "
                                    "only from there) or every link the page shows (infoboxes, tables, references, "
                                    "image captions too)")  # fmt: skip
        subparser.add_argument("--max-pages", type=int, help="read only the first N pages of the dump")
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    if not args.output.endswith((".jsonl", ".tsv")):
        raise ValueError(f"{args.output}: the output must end with .jsonl or .tsv")
    vocab, summary = build_entity_vocab(
        args.dump, vocab_size=args.vocab_size, min_count=args.min_count, num_workers=args.num_workers,
        max_pages=args.max_pages, language=args.language, include_missing_pages=args.include_missing_pages,
        links_in=args.links_in,
    )  # fmt: skip
    vocab.save(args.output)
    summary_path = summary_file(args.output)
    with open(summary_path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False)
    pages, links = summary["pages"], summary["links"]
    top = ", ".join(f"{title} ({count})" for title, count in summary["top_entities"][:5])
    print_table([
        ("pages read (articles, redirects)", f"{pages['pages']:,} ({pages['article_pages']:,}, {pages['redirect_pages']:,})"),
        ("links to articles", summary["links_to_articles"]),
        ("links to pages not in the dump", summary["links_to_missing_pages"]),
        ("entities (with [PAD], [UNK], [MASK])", len(vocab)),
        ("cut by --vocab-size / --min-count", f"{summary['entities_over_vocab_size']:,} / {summary['entities_below_min_count']:,}"),
        ("most linked", top or "-"),
    ])  # fmt: skip
    if not args.include_missing_pages and links and summary["links_to_missing_pages"] > links / 2:
        print(f"note: {summary['links_to_missing_pages'] / links:.0%} of the links point to pages this dump lacks (a sample "
              "dump?): --include-missing-pages counts them as entities")  # fmt: skip
    print(f"wrote {len(vocab):,} entities to {args.output}; the full summary to {summary_path}")


def summary_file(output: str) -> str:
    """`entity_vocab.jsonl` -> `entity_vocab.summary.json`."""
    stem, _, _ = output.rpartition(".")
    return f"{stem}.summary.json"
