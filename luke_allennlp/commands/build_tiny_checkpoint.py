"""
`allennlp build-tiny-checkpoint OUT_DIR --tokenizer DIR [--kind luke|mluke|roberta|bert] [--size tiny|base]
[--entity-vocab FILE] [--seed N]`: a randomly initialised checkpoint built offline from a tokenizer, for smoke
runs of the configs where no pretrained checkpoint can be downloaded. `OUT_DIR` works as `MODEL_NAME` for every
config (`config.json`, `model.safetensors` and the tokenizer's files). `--kind mluke` takes an XLM-R-style
sentencepiece tokenizer (e.g. `xlm-roberta-base`'s files) and writes the layout of a released
`studio-ousia/mluke-*` checkpoint: `MLukeTokenizer` files and an `entity_vocab.json` keyed by `language:title`
(from `--entity-vocab`, LUKE's multilingual JSONL, or a small built-in sample of multilingual entities). `--size tiny` is 2 layers of width 32
(seconds per step on a CPU); `--size base` the paper's shape (12 layers, hidden 768). The weights are random:
what a run with it measures is that it runs, not what LUKE learns.
"""

import argparse
from pathlib import Path

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.testing import BASE, write_tiny_checkpoint

SIZES = {"tiny": {}, "base": BASE}


@Subcommand.register("build-tiny-checkpoint")
class BuildTinyCheckpoint(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Write a randomly initialised LUKE (mLUKE, RoBERTa, BERT) checkpoint with the tokenizer of --tokenizer, "
            "for smoke runs without a pretrained model."
        )
        subparser = parser.add_parser(
            self.name, description=description, help="Build a random checkpoint for smoke runs."
        )
        subparser.add_argument("output_dir", help="the checkpoint directory to write (must be empty or absent)")
        subparser.add_argument(
            "--tokenizer", required=True, help="a tokenizer directory (RoBERTa's, a LUKE checkpoint's, ...)"
        )
        subparser.add_argument(
            "--kind",
            choices=["luke", "mluke", "roberta", "bert"],
            default="luke",
            help="the model (default luke; mluke: mLUKE's layout over an XLM-R-style sentencepiece tokenizer)",
        )
        subparser.add_argument(
            "--size", choices=sorted(SIZES), default="tiny", help="tiny (2 layers, hidden 32) or base"
        )
        subparser.add_argument(
            "--entity-vocab",
            help="luke: an entity vocabulary file giving the entity table (default 40 rows); mluke: LUKE's JSONL "
            "(multilingual lines) or an mLUKE entity_vocab.json (default: a built-in multilingual sample); either: "
            "a LUKE checkpoint directory, whose tokenizer's vocabulary it takes",
        )
        subparser.add_argument("--seed", type=int, default=0, help="the random seed of the weights")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    output = Path(args.output_dir)
    if output.exists() and any(output.iterdir()):
        raise ValueError(f"{output} is not empty")
    if not Path(args.tokenizer).is_dir():
        raise ValueError(f"{args.tokenizer} is not a tokenizer directory")
    write_tiny_checkpoint(output, args.kind, seed=args.seed, tokenizer=args.tokenizer, entity_vocab=args.entity_vocab,
                          **SIZES[args.size])  # fmt: skip
    print(f"wrote {output}: a random {args.size} {args.kind} checkpoint (use it as MODEL_NAME={output})")
