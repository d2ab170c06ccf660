"""`allennlp build-pretraining-corpus DUMP TOKENIZER ENTITY_VOCAB OUT_DIR`: LUKE's pretraining corpus."""

import argparse
import os

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import add_num_workers, exit_on_bad_input, print_table
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
from luke_allennlp.wikipedia.corpus_rows import CorpusOptions


@Subcommand.register("build-pretraining-corpus")
class BuildPretrainingCorpus(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Turn a Wikipedia XML dump into LUKE's pretraining corpus: subword sequences with the entities linked in "
            "them, as a Hugging Face dataset in OUT_DIR (datasets.load_from_disk) with a metadata.json of counts, "
            "and copies of the tokenizer and entity vocabulary."
        )
        defaults = CorpusOptions()
        summary = "Build LUKE's pretraining corpus from a dump."
        subparser = parser.add_parser(self.name, description=description, help=summary)
        subparser.add_argument("dump", help="a pages-articles XML dump (.xml, .xml.bz2 or .xml.gz)")
        subparser.add_argument("tokenizer", help="a fast tokenizer: directory or hub name")
        subparser.add_argument(
            "entity_vocab",
            help="the entity vocabulary (LUKE JSONL/TSV, transformers' JSON, or a LUKE checkpoint directory)",
        )
        subparser.add_argument("output_dir", help="the corpus directory to create (must not exist or be empty)")
        subparser.add_argument(
            "--max-seq-length",
            type=int,
            default=defaults.max_seq_length,
            help="sequences get at most this minus 2 subwords (room for special tokens)",
        )
        subparser.add_argument("--max-entities", type=int, default=defaults.max_entities, help="entities per sequence")
        subparser.add_argument(
            "--max-mention-length",
            type=int,
            default=defaults.max_mention_length,
            help="subword positions kept per entity",
        )
        subparser.add_argument(
            "--min-sentence-length",
            type=int,
            default=defaults.min_sentence_length,
            help="skip sentences of fewer subwords (as the original LUKE)",
        )
        subparser.add_argument(
            "--unknown-entities",
            choices=("unk", "drop"),
            default=defaults.unknown_entities,
            help="links that find no entity in the vocabulary: [UNK] or dropped",
        )
        subparser.add_argument(
            "--include-sequences-without-entities",
            action="store_true",
            help="keep sequences without any entity (skipped by default, as the original LUKE)",
        )
        subparser.add_argument(
            "--sentence-splitter",
            choices=("rules", "spacy"),
            default=defaults.sentence_splitter,
            help="punctuation rules, or spaCy's sentencizer (slower)",
        )
        subparser.add_argument(
            "--language",
            help="the dump's language code (de, ja, ...): selects its titles in a multilingual entity vocabulary and "
            "the sentence rules (default: what the dump says, if anything)",
        )
        subparser.add_argument("--max-pages", type=int, help="stop after N articles")
        subparser.add_argument(
            "--titles",
            nargs="+",
            metavar="PART_FILE",
            help="for a dump part: the part files of every part of the dump, in order (from "
            "build-entity-vocab --stage count, or build-mention-dictionary --stage links), "
            "whose titles and redirects resolve the links, or the title index merged from "
            "them once (build-entity-vocab --stage titles); join the parts' corpora with "
            "merge-pretraining-corpus",
        )
        add_num_workers(subparser)
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def _run(args: argparse.Namespace) -> None:
    options = CorpusOptions(
        max_seq_length=args.max_seq_length,
        max_entities=args.max_entities,
        max_mention_length=args.max_mention_length,
        min_sentence_length=args.min_sentence_length,
        unknown_entities=args.unknown_entities,
        include_sequences_without_entities=args.include_sequences_without_entities,
        sentence_splitter=args.sentence_splitter,
        language=args.language,
    )
    metadata = build_pretraining_corpus(
        args.dump,
        args.tokenizer,
        args.entity_vocab,
        args.output_dir,
        options,
        num_workers=args.num_workers,
        max_pages=args.max_pages,
        titles=args.titles,
    )
    skipped = [(f"skipped: {name.replace('_', ' ')}", count) for name, count in metadata["skipped"].items() if count]
    print_table([(name, metadata[name]) for name in ("pages", "sequences", "words", "entities")] + skipped)
    print(
        f"wrote the corpus to {args.output_dir}; the full summary to {os.path.join(args.output_dir, 'metadata.json')}"
    )
