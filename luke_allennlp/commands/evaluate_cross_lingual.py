"""
`allennlp evaluate-cross-lingual ARCHIVE FILE... --output-dir DIR`: one trained model evaluated on many files (a
language each, or a G-XLT pair), in one process, with one table: per file its language, its examples and its scores
(EM/F1 for extractive QA, micro/macro F1 for relation classification, span F1 for NER) and their average over the
files. Writes `DIR/results.json`, `DIR/results.md` (the scores in percent, saying what scored them) and `DIR/predictions/<file name>.jsonl` (one line per question or
example, `id` first, as `allennlp evaluate --predictions-output-file` writes them with the `luke_per_instance`
serializer).

A file's language is `LANG=FILE`'s, else its name's (MLQA's `test-context-de-question-en.json` is `de`, the answers'
language; XQuAD's `xquad.de.json`; RELX's `RELX_de.txt`; CoNLL's `esp.testb`; see
`luke_allennlp.evaluation.cross_lingual`), else `--language`'s. `--scoring mlqa` scores extractive QA with MLQA's
official script in each file's language (`squad`: SQuAD v1.1's); without it, the archive's own scoring. Every file
is read whole: a `max_instances` the archive's reader carries from training is dropped.
"""

import argparse
import copy
import json
import logging
import os
from typing import Any, Dict, List, Optional, Tuple

from allennlp.commands.subcommand import Subcommand
from allennlp.common import Params
from allennlp.common.util import prepare_environment
from allennlp.data import DataLoader
from allennlp.evaluation import SimpleEvaluator
from allennlp.models.archival import load_archive

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.evaluation.cross_lingual import (
    languages_from_name,
    markdown_table,
    parse_input,
    scoring_of,
    summarise,
)
from luke_allennlp.evaluation.per_instance_serializer import PerInstanceSerializer
from luke_allennlp.models.luke_squad import LukeSquad
from luke_allennlp.resources.hf_datasets import parse_hub_path, source_name
from luke_allennlp.training.metrics.squad_em_and_f1 import SCORINGS, check_mlqa_language

logger = logging.getLogger(__name__)


@Subcommand.register("evaluate-cross-lingual")
class EvaluateCrossLingual(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Evaluate one archive on many files (one language each, or G-XLT pairs) and write one table: per file "
            "and language the scores and their average, as JSON and Markdown, with each file's predictions."
        )
        subparser = parser.add_parser(self.name, description=description, help="Evaluate on many languages.")
        subparser.add_argument("archive", help="the model archive (model.tar.gz or its serialization directory)")
        subparser.add_argument(
            "inputs",
            nargs="+",
            metavar="[LANG=]FILE",
            help="evaluation files; LANG= gives a file's language where its name does not (xquad.de.json, "
            "test-context-de-question-en.json, RELX_de.txt, esp.testb name theirs)",
        )
        subparser.add_argument("--output-dir", required=True, help="where results.json, results.md, predictions/ go")
        subparser.add_argument(
            "--scoring",
            choices=[s for s in SCORINGS if s != "jglue"],
            help="extractive QA: 'squad' (SQuAD v1.1's script) or 'mlqa' (MLQA's, in each file's answer language); "
            "default: the archive's",
        )
        subparser.add_argument("--language", help="the language of the files whose name does not tell it")
        subparser.add_argument("--cuda-device", type=int, default=-1, help="GPU id (-1: the CPU)")
        subparser.add_argument("--batch-size", type=int, help="examples per batch (default: the archive's)")
        subparser.add_argument("-o", "--overrides", default="", help="a JSON(net) overriding the archive's config")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def resolve_inputs(arguments: List[str], default_language: Optional[str]) -> List[Tuple[str, str, Optional[str]]]:
    """(path, language, question language) of each input; a file whose language is unknown raises."""
    resolved = []
    for argument in arguments:
        given, path = parse_input(argument)
        language, question_language = languages_from_name(path)
        language = given or language or default_language
        if language is None:
            raise ValueError(f"{path}: its name does not tell its language: give it as LANG={path} or with --language")
        resolved.append((path, language.lower(), question_language))
    return resolved


def _prediction_paths(paths: List[str], folder: str) -> List[str]:
    """predictions/<name>.jsonl per input; names repeated across folders get a numbered suffix."""
    names: Dict[str, int] = {}
    out = []
    for path in paths:
        # (a Hub dataset by its configuration: hf://xquad:xquad.de@validation -> xquad.de)
        stem = source_name(path) if parse_hub_path(path) else os.path.splitext(os.path.basename(path))[0]
        names[stem] = names.get(stem, 0) + 1
        out.append(os.path.join(folder, f"{stem}{'' if names[stem] == 1 else '.' + str(names[stem])}.jsonl"))
    return out


def evaluate_cross_lingual(
    archive_path: str,
    inputs: List[Tuple[str, str, Optional[str]]],
    output_dir: str,
    scoring: Optional[str] = None,
    cuda_device: int = -1,
    batch_size: Optional[int] = None,
    overrides: str = "",
) -> Dict[str, Any]:
    """Evaluates the archive on each (path, language, question language) and writes the results (see the module's
    doc). Returns the summary that `results.json` holds."""
    if os.path.isdir(output_dir) and os.listdir(output_dir):
        raise ValueError(f"{output_dir}: the output directory is not empty")
    archive = load_archive(archive_path, cuda_device=cuda_device, overrides=overrides)
    model = archive.model
    is_qa = isinstance(model, LukeSquad)
    if scoring is not None and not is_qa:
        raise ValueError(
            f"--scoring is for extractive QA (luke_squad) models; {archive_path} holds {type(model).__name__}"
        )
    scoring = scoring or (model.answer_scoring if is_qa else None)
    if scoring == "mlqa":  # every language checked before the first file is read
        for path, language, _ in inputs:
            try:
                check_mlqa_language(language)
            except ValueError as error:
                raise ValueError(f"{path}: {error}") from None
    config = copy.deepcopy(archive.config)
    prepare_environment(config)
    model.eval()
    reader = archive.validation_dataset_reader
    if reader.max_instances is not None:  # a training-time cap (a smoke run's) would cut every file short
        logger.warning("reading every file whole: the archive's reader had max_instances %d", reader.max_instances)
        reader.max_instances = None
    loader_params = config.get("validation_data_loader", None) or config.get("data_loader")
    loader_params = loader_params.as_dict(quiet=True) if isinstance(loader_params, Params) else dict(loader_params)
    if batch_size:
        loader_params.pop("batch_sampler", None)
        loader_params["batch_size"] = batch_size
    evaluator = SimpleEvaluator(batch_serializer=PerInstanceSerializer(), cuda_device=cuda_device)

    predictions_dir = os.path.join(output_dir, "predictions")
    os.makedirs(predictions_dir, exist_ok=True)
    rows = []
    for (path, language, question_language), predictions_path in zip(
        inputs, _prediction_paths([i[0] for i in inputs], predictions_dir)
    ):
        if is_qa:
            model.set_answer_scoring(scoring, language if scoring == "mlqa" else None)
        logger.info("Evaluating %s (%s)", path, language)
        loader = DataLoader.from_params(Params(copy.deepcopy(loader_params)), reader=reader, data_path=path)
        loader.index_with(model.vocab)
        metrics = evaluator(model, loader, predictions_output_file=predictions_path)
        with open(predictions_path, encoding="utf-8") as f:
            examples = sum(1 for line in f if line.strip())
        row: Dict[str, Any] = {
            "file": path,
            "language": language,
            "question_language": question_language,
            "examples": examples,
            "predictions": predictions_path,
            "metrics": metrics,
        }
        if is_qa:
            row["scoring"] = scoring
        stats = getattr(reader, "stats", None)
        if isinstance(stats, dict):  # the reader's counts: skipped examples, truncations
            row["reader"] = dict(stats)
        rows.append(row)
    summary = summarise(rows, scoring_of(rows[0]["metrics"] if rows else {}, scoring if is_qa else None))
    with open(os.path.join(output_dir, "results.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, ensure_ascii=False, indent=2)
    with open(os.path.join(output_dir, "results.md"), "w", encoding="utf-8") as f:
        f.write(markdown_table(summary))
    return summary


def _run(args: argparse.Namespace) -> None:
    inputs = resolve_inputs(args.inputs, args.language)
    summary = evaluate_cross_lingual(
        args.archive, inputs, args.output_dir, args.scoring, args.cuda_device, args.batch_size, args.overrides
    )
    print(markdown_table(summary), end="")
    print(f"wrote {os.path.join(args.output_dir, 'results.json')}, results.md and predictions/")
