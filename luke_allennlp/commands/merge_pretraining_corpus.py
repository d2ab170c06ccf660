"""`allennlp merge-pretraining-corpus PART_DIR... OUT_DIR`: the corpora of a dump's parts joined into one."""

import argparse

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input, print_table
from luke_allennlp.wikipedia.corpus import merge_pretraining_corpus


@Subcommand.register("merge-pretraining-corpus")
class MergePretrainingCorpus(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Join the pretraining corpora built from the parts of a dump (build-pretraining-corpus PART ... --titles "
            "PART_FILES, in dump order) into the corpus one run over the whole dump gives: rows in order, counts "
            "added up in metadata.json."
        )
        summary = "Join the corpora of a dump's parts."
        subparser = parser.add_parser(self.name, description=description, help=summary)
        subparser.add_argument("parts", nargs="+", help="the parts' corpus directories, in dump order")
        subparser.add_argument("output_dir", help="the corpus directory to create (must not exist or be empty)")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    metadata = merge_pretraining_corpus(args.parts, args.output_dir)
    print_table([(name, metadata[name]) for name in ("pages", "sequences", "words", "entities")])
    print(f"wrote the corpus of {len(args.parts)} parts to {args.output_dir}")
