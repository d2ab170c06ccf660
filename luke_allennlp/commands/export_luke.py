"""
`allennlp export-luke ARCHIVE OUT_DIR [--tokenizer T] [--entity-vocab V] [--lite] [--force]`: an AllenNLP archive as a
`transformers` LUKE checkpoint (see `luke_allennlp.archival.export_luke`). `OUT_DIR` must be absent or empty (`export-luke
RUN/model.tar.gz RUN` overwrote the run's training `config.json`); `--force` writes into it, replacing the files of the
same names.
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.archival.export_luke import export_luke


@Subcommand.register("export-luke")
class ExportLuke(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Write an AllenNLP LUKE archive (pretraining or a task) as a transformers checkpoint directory."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="the model.tar.gz of a luke_pretraining or LUKE task run")
        subparser.add_argument("output_dir", help="the directory to write (absent or empty, unless --force)")
        subparser.add_argument("--tokenizer", help="the model's tokenizer (default: the training corpus's / reader's)")
        subparser.add_argument(
            "--entity-vocab", help="its entity vocabulary file or checkpoint directory (default: the corpus's)"
        )
        subparser.add_argument("--lite", action="store_true", help="keep only the special entities (a lite model)")
        subparser.add_argument(
            "--force",
            action="store_true",
            help="write into an existing, non-empty OUT_DIR, replacing its files of the same names (config.json, ...)",
        )
        subparser.set_defaults(
            func=lambda args: export_luke(
                args.archive_file, args.output_dir, args.tokenizer, args.entity_vocab, args.lite, force=args.force
            )
        )
        return subparser
