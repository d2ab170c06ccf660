"""
`allennlp build-gxlt-pairs FILE... OUT_DIR`: the G-XLT files (question in one language, context in another) of
parallel SQuAD files such as XQuAD's `xquad.{ar,de,...}.json`, whose question ids are the same in every language:
`OUT_DIR/xquad-context-{c}-question-{q}.json` for every ordered pair of the files' languages (the diagonal too, so the
grid is whole), each the context file with its questions taken from the question file. MLQA ships its G-XLT files
(`test-context-de-question-en.json`); `allennlp evaluate-cross-lingual` reads both kinds and tabulates the grid.
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.evaluation.cross_lingual import languages_from_name, parse_input, write_gxlt_pairs


@Subcommand.register("build-gxlt-pairs")
class BuildGxltPairs(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Build G-XLT files (question language x context language) from parallel SQuAD files with the same "
            "question ids in every language, such as XQuAD's."
        )
        subparser = parser.add_parser(self.name, description=description, help="Build XQuAD's G-XLT pairs.")
        subparser.add_argument(
            "inputs",
            nargs="+",
            metavar="[LANG=]FILE",
            help="one SQuAD file per language (xquad.de.json names its language; otherwise LANG=FILE)",
        )
        subparser.add_argument("output_dir", help="the folder to write the pairs into")
        subparser.add_argument("--prefix", default="xquad", help="file names start with it (default: xquad)")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    files = {}
    for argument in args.inputs:
        language, path = parse_input(argument)
        language = language or languages_from_name(path)[0]
        if language is None:
            raise ValueError(f"{path}: its name does not tell its language: give it as LANG={path}")
        if language in files:
            raise ValueError(f"two files for the language {language}: {files[language]} and {path}")
        files[language] = path
    written = write_gxlt_pairs(files, args.output_dir, args.prefix)
    print(f"wrote {len(written)} files ({len(files)} x {len(files)} languages) to {args.output_dir}")
