"""`allennlp build-mention-dictionary DUMP OUT`: names linked on each page, their link probabilities and p(entity | name)."""

import argparse
import json

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, make_output_folder
from luke_allennlp.wikipedia.markup import LINK_SCOPES
from luke_allennlp.wikipedia.mention_dictionary import build_mention_dictionary, read_page_titles


@Subcommand.register("build-mention-dictionary")
class BuildMentionDictionary(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Build the mention dictionary of LUKE's SQuAD entity inputs and of entity disambiguation from a Wikipedia "
            "XML dump: for each page, the names linked on it and their targets (through redirects; names ambiguous on "
            "a page dropped); each name's link probability (times linked / times it occurs in the articles' running text); and, over "
            "the whole dump, the entities each name links to with p(entity | name), the candidates of entity "
            "disambiguation and linking."
        )
        subparser = parser.add_parser(
            self.name, description=description, help="Build a mention dictionary from a dump."
        )
        subparser.add_argument("dump", help="a pages-articles XML dump (.xml, .xml.bz2 or .xml.gz)")
        subparser.add_argument("output", help="the JSON file to write")
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
        subparser.add_argument("--links-in", choices=LINK_SCOPES, default="page",
                               help="a page's names: from every link it shows (default: running text, infoboxes, "
                                    "tables, references, image captions) or from its running text only (as LUKE)")  # fmt: skip
        subparser.add_argument("--max-pages", type=int, help="read only the first N pages of the dump")
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    make_output_folder(args.output)
    page_titles = read_page_titles(args.page_titles) if args.page_titles else None
    dictionary = build_mention_dictionary(
        args.dump, min_link_probability=args.min_link_probability, num_workers=args.num_workers,
        page_titles=page_titles, max_pages=args.max_pages, include_missing_pages=args.include_missing_pages,
        links_in=args.links_in,
    )  # fmt: skip
    dictionary.save(args.output)
    print(json.dumps(dictionary.stats, indent=2, ensure_ascii=False))
    print(f"wrote {len(dictionary.pages)} pages to {args.output}")
