"""
`allennlp build-entity-vocab DUMP OUT`: the entity vocabulary of a Wikipedia dump (LUKE's JSONL or TSV);
`allennlp build-entity-vocab DUMP_1 DUMP_2 ... OUT.jsonl [--interlanguage-links WIKIDATA]`: mLUKE's multilingual
one, entities merged across languages.
"""

import argparse
import json
from typing import List, Optional

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, make_output_folder, print_table
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.wikipedia.entity_vocab_builder import (
    PART_KIND,
    build_entity_vocab,
    count_part_links,
    merge_entity_vocab_parts,
)
from luke_allennlp.wikipedia.markup import LINK_SCOPES
from luke_allennlp.wikipedia.multilingual_entity_vocab import build_multilingual_entity_vocab, group_parts
from luke_allennlp.wikipedia.parts import TitleIndex, read_part_meta


@Subcommand.register("build-entity-vocab")
class BuildEntityVocab(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Count the links of a Wikipedia XML dump (through redirects) and write the most linked articles, after "
            "[PAD]=0, [UNK]=1, [MASK]=2, as LUKE's entity vocabulary: JSONL if OUT ends with .jsonl, TSV if .tsv. "
            "Given dumps of several languages (or vocabularies built from them), write mLUKE's multilingual "
            "vocabulary (JSONL): articles about one thing in different languages merged into one entity by "
            "inter-language links (a Wikidata JSON dump's sitelinks, and the dumps' own [[de:Tokio]] links)."
        )
        summary = "Build LUKE's (or mLUKE's multilingual) entity vocabulary from dumps."
        subparser = parser.add_parser(self.name, description=description, help=summary)
        subparser.add_argument(
            "dump",
            nargs="+",
            help="a pages-articles XML dump (.xml, .xml.bz2 or .xml.gz); several for a multilingual "
            "vocabulary, one per language, or per-language vocabularies (.jsonl, .tsv)",
        )
        subparser.add_argument("output", help="the vocabulary file to write (.jsonl or .tsv)")
        subparser.add_argument(
            "--vocab-size",
            type=int,
            help="entities kept, the 3 special ones included (default: the paper's 500K; "
            "mLUKE's 1.2M for several languages)",
        )
        subparser.add_argument("--min-count", type=int, default=1, help="keep entities linked at least this often")
        subparser.add_argument(
            "--language",
            help="the language of each input, comma-separated (en,de,ja), written with each title "
            "in JSONL; default: the dump's <dbname> (jawiki), else its file name (jawiki-...), "
            "else en for a single dump",
        )
        subparser.add_argument(
            "--interlanguage-links",
            metavar="WIKIDATA_JSON",
            help="a Wikidata JSON dump (latest-all.json.bz2): its sitelinks merge the languages' articles",
        )
        subparser.add_argument(
            "--min-languages",
            type=int,
            default=1,
            help="keep only entities with an article in at least N of the languages",
        )
        subparser.add_argument(
            "--no-inline-links",
            action="store_true",
            help="do not merge by the dumps' own inter-language links ([[de:Tokio]])",
        )
        subparser.add_argument(
            "--include-missing-pages",
            action="store_true",
            help="also keep linked titles the dump has no page for (for sample dumps)",
        )
        subparser.add_argument(
            "--links-in",
            choices=LINK_SCOPES,
            default="text",
            help="count the links of the running text (default, as LUKE: the corpus's entities come "
            "only from there) or every link the page shows (infoboxes, tables, references, "
            "image captions too)",
        )
        subparser.add_argument("--max-pages", type=int, help="read only the first N pages of the dump")
        subparser.add_argument(
            "--stage",
            choices=("count", "merge", "titles"),
            help="build over dump parts (docs/pretraining.md: a whole Wikipedia in parts): 'count' writes one part's "
            "titles and link counts to OUTPUT (a part file); 'merge' reads the part files "
            "(in dump order) and writes the vocabulary one run over the whole dump gives; "
            "'titles' merges their titles and redirects into the title index OUTPUT (SQLite), "
            "for build-pretraining-corpus --titles",
        )
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    make_output_folder(args.output)
    with lock_output(args.output):  # one builder per output, for the whole run (its summary file too)
        _build(args)


def _build(args: argparse.Namespace) -> None:
    if args.stage == "count":
        if len(args.dump) != 1:
            raise ValueError(f"--stage count reads one dump part, not {len(args.dump)} files")
        with replaced_output(args.output) as temporary:  # (renamed into place when complete)
            count_part_links(args.dump[0], temporary, args.num_workers, args.max_pages, args.links_in, args.language)
        print(f"wrote the titles and link counts of {args.dump[0]} to {args.output}")
        return
    if args.stage == "titles":
        for path in args.dump:
            read_part_meta(path, PART_KIND)
        with replaced_output(args.output) as temporary:
            index = TitleIndex.build(args.dump, temporary)
            articles, redirects = index.num_articles, index.stats.redirects
            index.close()
        print(
            f"wrote the title index of {len(args.dump)} parts ({articles:,} articles, {redirects:,} redirects) to "
            f"{args.output}"
        )
        return
    if not args.output.endswith((".jsonl", ".tsv")):
        raise ValueError(f"{args.output}: the output must end with .jsonl or .tsv")
    languages = args.language.split(",") if args.language else None
    # (mLUKE's vocabulary from dumps in parts: a language's consecutive part files are one input)
    inputs = group_parts(args.dump) if args.stage is None and len(args.dump) > 1 else args.dump
    if languages is not None and len(languages) != len(inputs):
        raise ValueError(f"--language names {len(languages)} languages for {len(inputs)} inputs")
    if args.stage == "merge":
        vocab, summary = merge_entity_vocab_parts(
            args.dump, _or(args.vocab_size, 500_000), args.min_count, args.include_missing_pages
        )
        summary_path = _write(vocab, summary, args.output)
        print(
            f"wrote {len(vocab):,} entities from {len(args.dump)} parts to {args.output}; the summary to {summary_path}"
        )
        return
    if len(inputs) > 1:
        _run_multilingual(args, inputs, languages)
        return
    if isinstance(inputs[0], list):
        raise ValueError("these are part files of one dump (--stage count): merge them with --stage merge")
    if args.interlanguage_links or args.min_languages > 1 or args.dump[0].endswith((".jsonl", ".tsv")):
        raise ValueError("--interlanguage-links, --min-languages and vocabulary inputs need two or more languages")
    vocab, summary = build_entity_vocab(
        args.dump[0],
        vocab_size=_or(args.vocab_size, 500_000),
        min_count=args.min_count,
        num_workers=args.num_workers,
        max_pages=args.max_pages,
        language=languages[0] if languages else None,
        include_missing_pages=args.include_missing_pages,
        links_in=args.links_in,
    )
    summary_path = _write(vocab, summary, args.output)
    pages, links = summary["pages"], summary["links"]
    top = ", ".join(f"{title} ({count})" for title, count in summary["top_entities"][:5])
    print_table(
        [
            (
                "pages read (articles, redirects)",
                f"{pages['pages']:,} ({pages['article_pages']:,}, {pages['redirect_pages']:,})",
            ),
            ("links to articles", summary["links_to_articles"]),
            ("links to pages not in the dump", summary["links_to_missing_pages"]),
            ("entities (with [PAD], [UNK], [MASK])", len(vocab)),
            (
                "cut by --vocab-size / --min-count",
                f"{summary['entities_over_vocab_size']:,} / {summary['entities_below_min_count']:,}",
            ),
            ("most linked", top or "-"),
        ]
    )
    if not args.include_missing_pages and links and summary["links_to_missing_pages"] > links / 2:
        print(
            f"note: {summary['links_to_missing_pages'] / links:.0%} of the links point to pages this dump lacks (a sample "
            "dump?): --include-missing-pages counts them as entities"
        )
    print(f"wrote {len(vocab):,} entities to {args.output}; the full summary to {summary_path}")


def _write(vocab: EntityVocab, summary: dict, output: str) -> str:
    """Writes the vocabulary and its summary, each under a temporary name renamed into place."""
    summary_path = summary_file(output)
    with replaced_output(output) as temporary, replaced_output(summary_path) as summary_temporary:
        vocab.save(temporary)
        with open(summary_temporary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2, ensure_ascii=False)
    return summary_path


def _run_multilingual(args: argparse.Namespace, inputs: list, languages: Optional[List[str]]) -> None:
    if not args.output.endswith(".jsonl"):
        raise ValueError(
            f"{args.output}: a multilingual vocabulary is written as JSONL (.jsonl), one id with several titles"
        )
    vocab, summary = build_multilingual_entity_vocab(
        inputs,
        wikidata=args.interlanguage_links,
        languages=languages,
        vocab_size=_or(args.vocab_size, 1_200_000),
        min_count=args.min_count,
        min_languages=args.min_languages,
        inline_links=not args.no_inline_links,
        num_workers=args.num_workers,
        max_pages=args.max_pages,
        include_missing_pages=args.include_missing_pages,
        links_in=args.links_in,
    )
    summary_path = _write(vocab, summary, args.output)
    merge = summary["merge"]
    top = ", ".join(
        " / ".join(f"{lang}:{title}" for title, lang in pairs) + f" ({count})"
        for pairs, count in summary["top_entities"][:3]
    )
    print_table(
        [
            ("languages", ", ".join(summary["languages"])),
            (
                "linked titles per language",
                ", ".join(f"{c['language']} {c['linked_titles']:,}" for c in summary["inputs"]),
            ),
            (
                "merged by Wikidata / inline links",
                f"{merge.get('wikidata_links_joined', 0):,} / {merge.get('inline_links_joined', 0):,}",
            ),
            ("merge conflicts (links left out)", merge["conflicts"]),
            (
                "entities by languages",
                ", ".join(f"{n}: {count:,}" for n, count in summary["entities_by_languages"].items()),
            ),
            (
                "cut by --min-languages / --min-count / --vocab-size",
                f"{summary['entities_below_min_languages']:,} / {summary['entities_below_min_count']:,} / "
                f"{summary['entities_over_vocab_size']:,}",
            ),
            ("entities (with [PAD], [UNK], [MASK])", len(vocab)),
            ("most linked", top or "-"),
        ]
    )
    print(f"wrote {len(vocab):,} ids to {args.output}; the full summary to {summary_path}")


def summary_file(output: str) -> str:
    """`entity_vocab.jsonl` -> `entity_vocab.summary.json`."""
    stem, _, _ = output.rpartition(".")
    return f"{stem}.summary.json"


def _or(value: Optional[int], default: int) -> int:
    """An option's value, or its default when not given (0 is given: it is an error, not the default)."""
    return default if value is None else value
