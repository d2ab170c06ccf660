"""
`allennlp build-tiny-checkpoint OUT_DIR --tokenizer DIR
[--kind luke|mluke|luke-japanese|luke-japanese-lite|roberta|bert] [--size tiny|base] [--entity-vocab FILE]
[--jglue DIR] [--seed N]`: a randomly initialised checkpoint built offline from a tokenizer, for smoke
runs of the configs where no pretrained checkpoint can be downloaded. `OUT_DIR` works as `MODEL_NAME` for every
config (`config.json`, `model.safetensors` and the tokenizer's files). `--kind mluke` takes an XLM-R-style
sentencepiece tokenizer (e.g. `xlm-roberta-base`'s files) and writes the layout of a released
`studio-ousia/mluke-*` checkpoint: `MLukeTokenizer` files and an `entity_vocab.json` keyed by `language:title`
(from `--entity-vocab`, LUKE's multilingual JSONL, or a small built-in sample of multilingual entities).
`--kind luke-japanese` (`luke-japanese-lite`) writes the layout of `studio-ousia/luke-japanese-base` (`-base-lite`):
`MLukeTokenizer` files over a Japanese SentencePiece model, either `--tokenizer` (XLM-R-style; `tokenizer.json`
suffices) or one trained in the call on the training text of `--jglue DIR` (JGLUE v1.3 as distributed), and an
`entity_vocab.json` keyed `ja:title` (from `--entity-vocab`, or the article titles of JGLUE's JSQuAD; lite: the four
special entities alone); see `luke_allennlp.fixtures.luke_japanese`. `--entity-vocab` may also be a LUKE checkpoint directory
(either layout, transformers 5's included), whose tokenizer's entity vocabulary it takes. `--size tiny` is 2 layers
of width 32 (seconds per step on a CPU); `--size base` the paper's shape (12 layers, hidden 768). The weights are
random: what a run with it measures is that it runs, not what LUKE learns.
"""

import argparse
from pathlib import Path

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.fixtures.luke_japanese import write_tiny_luke_japanese_checkpoint
from luke_allennlp.fixtures.tiny_checkpoints import BASE, write_tiny_checkpoint
from luke_allennlp.resources.output import lock_output, replaced_output

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
            "--tokenizer",
            help="a tokenizer directory (RoBERTa's, a LUKE checkpoint's, ...); luke-japanese: or --jglue",
        )
        subparser.add_argument(
            "--kind",
            choices=["luke", "mluke", "luke-japanese", "luke-japanese-lite", "roberta", "bert"],
            default="luke",
            help="the model (default luke; mluke: mLUKE's layout over an XLM-R-style sentencepiece tokenizer; "
            "luke-japanese(-lite): studio-ousia/luke-japanese-base(-lite)'s layout)",
        )
        subparser.add_argument(
            "--size", choices=sorted(SIZES), default="tiny", help="tiny (2 layers, hidden 32) or base"
        )
        subparser.add_argument(
            "--entity-vocab",
            help="luke: an entity vocabulary file giving the entity table (default 40 rows); mluke: LUKE's JSONL "
            "(multilingual lines) or an mLUKE entity_vocab.json (default: a built-in multilingual sample); "
            "luke-japanese: a luke-japanese entity_vocab.json or a Japanese TSV/JSONL (default: JSQuAD's article "
            "titles); any of them: a LUKE checkpoint directory, whose tokenizer's vocabulary it takes",
        )
        subparser.add_argument(
            "--jglue",
            help="luke-japanese: train the SentencePiece model on this JGLUE directory's training text (JSTS, "
            "JCommonsenseQA) instead of --tokenizer",
        )
        subparser.add_argument("--seed", type=int, default=0, help="the random seed of the weights")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    with lock_output(args.output_dir):  # one writer; the checkpoint built beside the output, renamed into place
        if Path(args.output_dir).exists() and any(Path(args.output_dir).iterdir()):
            raise ValueError(f"{args.output_dir} is not empty")
        with replaced_output(args.output_dir, directory=True) as building:
            _build(args, Path(building))
    print(
        f"wrote {args.output_dir}: a random {args.size} {args.kind} checkpoint (use it as MODEL_NAME={args.output_dir})"
    )


def _build(args: argparse.Namespace, output: Path) -> None:
    japanese = args.kind.startswith("luke-japanese")
    if args.tokenizer is None and not (japanese and args.jglue is not None):
        raise ValueError("--tokenizer is required" + (" (or --jglue for luke-japanese)" if japanese else ""))
    if args.tokenizer is not None and not Path(args.tokenizer).is_dir():
        raise ValueError(f"{args.tokenizer} is not a tokenizer directory")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # its "Writing model shards" bar, for one small file
    if args.jglue is not None and not japanese:
        raise ValueError("--jglue is for --kind luke-japanese or luke-japanese-lite")
    if japanese:
        write_tiny_luke_japanese_checkpoint(
            output,
            args.kind.endswith("-lite"),
            args.seed,
            args.tokenizer,
            args.jglue,
            args.entity_vocab,
            **SIZES[args.size],
        )
    else:
        write_tiny_checkpoint(
            output,
            args.kind,
            seed=args.seed,
            tokenizer=args.tokenizer,
            entity_vocab=args.entity_vocab,
            **SIZES[args.size],
        )
