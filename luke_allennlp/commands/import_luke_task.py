"""
`allennlp import-luke-task CHECKPOINT OUT_DIR [--task ner|relation|typing|squad|sequence-classification|multiple-choice]`:
a transformers LUKE task checkpoint as an AllenNLP archive `OUT_DIR/model.tar.gz` of the matching model (see
`luke_allennlp.archival.import_luke_task`).
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.archival.import_luke_task import import_luke_task
from luke_allennlp.resources.task_checkpoints import TASKS


@Subcommand.register("import-luke-task")
class ImportLukeTask(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Write a transformers LUKE task checkpoint as an AllenNLP archive of the matching model."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("checkpoint", help="a transformers LukeFor* task checkpoint: directory or hub name")
        subparser.add_argument("output_dir", help="the directory to write (model.tar.gz)")
        subparser.add_argument("--task", choices=sorted(TASKS), help="default: from the config's architectures")
        subparser.add_argument("--outside-label", help="NER: the checkpoint's label for 'no entity' (default O or NIL)")
        subparser.add_argument("--batch-size", type=int, default=8, help="the archive's data loader batch size")
        subparser.set_defaults(
            func=lambda args: import_luke_task(
                args.checkpoint, args.output_dir, args.task, args.outside_label, args.batch_size
            )
        )
        return subparser
