"""
`allennlp build-tokenizer INPUT... OUT_DIR [--model bpe|unigram] [--vocab-size N]`: a word tokenizer for a language
no downloadable tokenizer covers, trained offline with the `tokenizers` library on the running text of Wikipedia dumps
(what `build-pretraining-corpus` reads of them) and plain text files (a line a text). `OUT_DIR` is a transformers 5
tokenizer directory (`tokenizer.json`, `tokenizer_config.json`): RoBERTa's byte-level BPE (`bpe`, LUKE's) or XLM-R's
SentencePiece-style unigram model (`unigram`, mLUKE's), see `luke_allennlp.resources.tokenizer_training`.
"""

import argparse
import logging
from pathlib import Path
from typing import Iterator, List

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, print_table
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.resources.tokenizer_training import KINDS, TextCounts, train_tokenizer, unknown_pieces
from luke_allennlp.wikipedia.text import article_texts, is_dump, text_file_lines

logger = logging.getLogger(__name__)


@Subcommand.register("build-tokenizer")
class BuildTokenizer(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Train a word tokenizer on the articles of Wikipedia dumps and on text files (a line a text), offline: "
            "RoBERTa's byte-level BPE or XLM-R's SentencePiece-style unigram model, written as a transformers "
            "tokenizer directory for build-tiny-checkpoint, build-pretraining-corpus and export-luke."
        )
        subparser = parser.add_parser(
            self.name, description=description, help="Train a word tokenizer on dumps and text files."
        )
        subparser.add_argument(
            "inputs",
            nargs="+",
            metavar="INPUT",
            help="a pages-articles XML dump (.xml, .bz2, .gz: its articles' running text) or a UTF-8 text file "
            "(plain, .bz2, .gz: each non-blank line a text)",
        )
        subparser.add_argument("output_dir", help="the tokenizer directory to write (must be empty or absent)")
        subparser.add_argument(
            "--model",
            choices=KINDS,
            default="bpe",
            help="bpe: RoBERTa's byte-level BPE (LUKE's; LukeTokenizer on export); unigram: XLM-R's "
            "SentencePiece-style unigram model (mLUKE's; MLukeTokenizer on export)",
        )
        subparser.add_argument(
            "--vocab-size", type=int, default=32_000, help="pieces, the special tokens included (default 32000)"
        )
        subparser.add_argument(
            "--min-frequency", type=int, default=2, help="bpe: the fewest occurrences of a pair merged (default 2)"
        )
        subparser.add_argument(
            "--max-length", type=int, default=512, help="the subwords a model takes (model_max_length, default 512)"
        )
        subparser.add_argument("--max-pages", type=int, help="read only the first N articles of each dump")
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    for path in args.inputs:
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: no such file")
    kinds = ["dump" if is_dump(path) else "text" for path in args.inputs]
    with lock_output(args.output_dir):  # one writer; built beside the output, renamed into place
        if Path(args.output_dir).exists() and any(Path(args.output_dir).iterdir()):
            raise ValueError(f"{args.output_dir} is not empty")
        texts = TextCounts(_texts(args, kinds))
        tokenizer = train_tokenizer(texts, args.model, args.vocab_size, args.min_frequency, args.max_length)
        if texts.texts == 0:
            raise ValueError(f"no text in {', '.join(args.inputs)}")
        with replaced_output(args.output_dir, directory=True) as building:
            tokenizer.save_pretrained(building)
    unknown, pieces = unknown_pieces(tokenizer, texts.sample)
    print_table(
        [
            ("inputs (dumps, text files)", f"{kinds.count('dump')}, {kinds.count('text')}"),
            ("texts (articles, lines)", texts.texts),
            ("characters", texts.characters),
            (f"vocabulary ({args.model})", len(tokenizer)),
            (f"unknown pieces in the first {len(texts.sample):,} texts", f"{unknown:,} of {pieces:,}"),
        ]
    )
    if len(tokenizer) > args.vocab_size:
        print(f"note: {len(tokenizer):,} pieces, more than --vocab-size: a unigram model keeps every character")
    print(f"wrote {args.output_dir}: a {args.model} tokenizer (use it as build-tiny-checkpoint --tokenizer)")


def _texts(args: argparse.Namespace, kinds: List[str]) -> Iterator[str]:
    for path, kind in zip(args.inputs, kinds):
        logger.info("reading %s (%s)", path, kind)
        if kind == "dump":
            yield from article_texts(path, args.num_workers, args.max_pages)
        else:
            yield from text_file_lines(path)
