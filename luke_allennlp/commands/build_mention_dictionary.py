"""
`allennlp build-mention-dictionary DUMP OUT`: names linked on each page, their link probabilities and p(entity | name),
as a SQLite file (or JSON when OUT ends with .json); `--stage` runs one stage of a build over dump parts.
"""

import argparse
import json
import os

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, make_output_folder
from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from luke_allennlp.resources.mentions.store import MentionStore
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.resources.titles import read_page_titles
from luke_allennlp.wikipedia.markup import LINK_SCOPES
from luke_allennlp.wikipedia.mention_dictionary import (
    build_mention_store,
    count_name_occurrences,
    merge_mention_parts,
)
from luke_allennlp.wikipedia.mention_links import collect_mention_links, merge_mention_links

STAGES = ("links", "names", "occurrences", "merge")
STAGES_HELP = (
    "run one stage of a build over dump parts (docs/pretraining.md: a whole Wikipedia in parts): 'links' (DUMP_PART OUT: a part's titles "
    "and links), 'names' (LINK_PARTS... OUT: the parts' links merged), 'occurrences' (DUMP_PART OUT --names NAMES: "
    "how often the names occur in a part), 'merge' (NAMES OCCURRENCE_PARTS... OUT: the dictionary)"
)


@Subcommand.register("build-mention-dictionary")
class BuildMentionDictionary(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Build the mention dictionary of LUKE's SQuAD entity inputs and of entity disambiguation from a Wikipedia "
            "XML dump: for each page, the names linked on it and their targets (through redirects; names ambiguous on "
            "a page dropped); each name's link probability (times linked / times it occurs in the articles' running "
            "text); and, over the whole dump, the entities each name links to with p(entity | name), the candidates "
            "of entity disambiguation and linking. Written as a SQLite file that readers query without loading it "
            "(JSON, read whole, if OUT ends with .json). Memory stays bounded: counts go to disk."
        )
        subparser = parser.add_parser(
            self.name, description=description, help="Build a mention dictionary from a dump."
        )
        subparser.add_argument(
            "dump",
            nargs="+",
            help="a pages-articles XML dump (.xml, .xml.bz2 or .xml.gz); with --stage, its input files",
        )
        subparser.add_argument("output", help="the file to write: SQLite (.sqlite, .db, ...) or JSON (.json)")
        subparser.add_argument(
            "--min-link-probability",
            type=float,
            default=0.01,
            help="drop names linked less often than this where they occur",
        )
        subparser.add_argument(
            "--page-titles", help="keep only these pages' names: a file of titles, one per line, or a SQuAD JSON file"
        )
        subparser.add_argument(
            "--include-missing-pages",
            action="store_true",
            help="keep names whose target is not a page of the dump (for sample dumps)",
        )
        subparser.add_argument(
            "--links-in",
            choices=LINK_SCOPES,
            default="page",
            help="a page's names: from every link it shows (default: running text, infoboxes, "
            "tables, references, image captions) or from its running text only (as LUKE)",
        )
        subparser.add_argument("--max-pages", type=int, help="read only the first N pages of the dump")
        subparser.add_argument("--stage", choices=STAGES, help=STAGES_HELP)
        subparser.add_argument("--names", help="the names file of the 'names' stage (for --stage occurrences)")
        subparser.add_argument("--work-dir", help="where the build's temporary files go (default: the output's folder)")
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    make_output_folder(args.output)
    with lock_output(args.output):  # one builder per output, for the whole run
        _build(args)


def _build(args: argparse.Namespace) -> None:
    if args.stage is not None:
        _run_stage(args)
        return
    if len(args.dump) != 1:
        raise ValueError(f"one dump, not {len(args.dump)}: dump parts are built with --stage")
    page_titles = read_page_titles(args.page_titles) if args.page_titles else None
    as_json = args.output.endswith(".json")
    store_path = args.output + ".sqlite" if as_json else args.output
    stats = build_mention_store(
        args.dump[0],
        store_path,
        min_link_probability=args.min_link_probability,
        num_workers=args.num_workers,
        page_titles=page_titles,
        max_pages=args.max_pages,
        include_missing_pages=args.include_missing_pages,
        links_in=args.links_in,
        work_dir=args.work_dir,
    )
    print(json.dumps(stats, indent=2, ensure_ascii=False))
    if as_json:
        store = MentionStore(store_path)
        dictionary = MentionDictionary.from_store(store)
        dictionary.source = ""
        store.connection.close()
        os.remove(store_path)
        with replaced_output(args.output) as temporary:
            dictionary.save(temporary)
    print(f"wrote {stats['pages_with_names']} pages to {args.output}")


def _run_stage(args: argparse.Namespace) -> None:
    inputs, output = args.dump, args.output
    if args.stage in ("links", "occurrences") and len(inputs) != 1:
        raise ValueError(f"--stage {args.stage} reads one dump part, not {len(inputs)} files")
    if (args.stage == "occurrences") != (args.names is not None):
        raise ValueError("--names is given with --stage occurrences, and only there")
    if args.stage in ("links", "names", "occurrences"):
        with replaced_output(output) as temporary:  # (a part file appears complete or not at all)
            if args.stage == "links":
                page_titles = read_page_titles(args.page_titles) if args.page_titles else None
                collect_mention_links(
                    inputs[0], temporary, args.links_in, page_titles, args.max_pages, args.num_workers
                )
            elif args.stage == "names":
                merge_mention_links(inputs, temporary)
            else:
                count_name_occurrences(inputs[0], args.names, temporary, args.max_pages, args.num_workers)
    else:
        if len(inputs) < 2:
            raise ValueError("--stage merge reads the names file and the parts' occurrence files")
        stats = merge_mention_parts(
            inputs[0], inputs[1:], output, args.min_link_probability, args.include_missing_pages
        )
        print(json.dumps(stats, indent=2, ensure_ascii=False))
    print(f"wrote {output} (stage {args.stage})")
