"""
`allennlp squad-predictions PREDICTIONS OUT [--dataset FILE]`: the predictions of `allennlp evaluate ...
--predictions-output-file PREDICTIONS` (one JSON line per question, from a `luke_squad` model) as the official
SQuAD prediction file `{question_id: answer_text}`, which the official `evaluate-v1.1.py` scores. With
`--dataset` (the SQuAD JSON the predictions are for), it also prints the official scores (percentages; a
question without a prediction scores 0, as in the official script).
"""

import argparse
import json
from typing import Dict

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.resources.output import writing_output
from luke_allennlp.training.metrics.squad_em_and_f1 import exact_match_score, f1_score, max_over_golds


@Subcommand.register("squad-predictions")
class SquadPredictions(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Turn the predictions file of `allennlp evaluate --predictions-output-file` (luke_squad) into the official "
            "SQuAD prediction JSON {question_id: answer_text}; with --dataset, print the official EM and F1."
        )
        subparser = parser.add_parser(self.name, description=description, help="Write official SQuAD predictions.")
        subparser.add_argument(
            "predictions", help="the JSON lines written by allennlp evaluate --predictions-output-file"
        )
        subparser.add_argument("output", help="the JSON file to write")
        subparser.add_argument(
            "--dataset", help="the SQuAD JSON file the predictions are for: print the official scores"
        )
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


def read_predictions(path: str) -> Dict[str, str]:
    """{question id: answer} from evaluate's JSON lines; a malformed or repeated line raises naming file and line."""
    answers: Dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                prediction = json.loads(line)
                question_id, answer = prediction["id"], prediction["answer"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(
                    f'{path}:{number}: expected a JSON object with "id" and "answer" ({type(e).__name__}: {e})'
                ) from None
            if not isinstance(answer, str):
                raise ValueError(f"{path}:{number}: the answer of {question_id} is not a string: {answer!r}")
            if question_id in answers:
                raise ValueError(f"{path}:{number}: question {question_id} is predicted twice")
            answers[question_id] = answer
    return answers


def official_scores(dataset_path: str, predictions: Dict[str, str]) -> Dict[str, float]:
    """The official v1.1 evaluation: EM and F1 in percent over every question of the dataset."""
    with open(dataset_path, encoding="utf-8") as f:
        articles = json.load(f)["data"]
    em = f1 = total = missing = 0.0
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    missing += 1
                    continue
                golds = [answer["text"] for answer in qa["answers"]]
                em += max_over_golds(exact_match_score, predictions[qa["id"]], golds)
                f1 += max_over_golds(f1_score, predictions[qa["id"]], golds)
    return {
        "exact_match": 100.0 * em / total,
        "f1": 100.0 * f1 / total,
        "questions": int(total),
        "unanswered": int(missing),
    }


def _run(args: argparse.Namespace) -> None:
    predictions = read_predictions(args.predictions)
    with writing_output(args.output) as temporary, open(temporary, "w", encoding="utf-8") as f:
        json.dump(predictions, f, ensure_ascii=False)
    print(f"wrote {len(predictions)} predictions to {args.output}")
    if args.dataset:
        print(json.dumps(official_scores(args.dataset, predictions)))
