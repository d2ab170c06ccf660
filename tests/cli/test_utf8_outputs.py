"""Predictions written as UTF-8 text (luke_allennlp/cli/utf8_outputs.py); the real `allennlp predict` and `evaluate
--predictions-output-file` are run on Bulgarian text by tests/test_own_language.py."""

import importlib
import json

from allennlp.evaluation.serializers.serializers import SimpleSerializer
from allennlp.predictors.predictor import Predictor

from luke_allennlp.cli import utf8_outputs
from luke_allennlp.evaluation.per_instance_serializer import PerInstanceSerializer

OUTPUT = {"words": ["Иван", "Вазов", "е", "роден", "в", "Сопот", "."], "language": "bg", "score": 0.5}


def test_a_prediction_line_holds_the_characters():
    line = Predictor.dump_line(None, OUTPUT)  # (allennlp's own method, repaired: no predictor needed)
    assert line == json.dumps(OUTPUT, ensure_ascii=False) + "\n" and "Сопот" in line and "\\u" not in line
    assert json.loads(line) == OUTPUT


def test_evaluates_serializers_write_the_characters():
    batch = {"metadata": [{"id": "bg-1"}]}
    simple = SimpleSerializer()({**batch}, {"words": [OUTPUT["words"]]}, None)
    assert "Сопот" in simple and "\\u" not in simple
    assert json.loads(simple) == {"metadata": [{"id": "bg-1"}], "words": [OUTPUT["words"]]}
    per_instance = PerInstanceSerializer()(batch, {"id": ["bg-1"], "words": [OUTPUT["words"]]}, None)
    assert per_instance == json.dumps({"id": "bg-1", "words": OUTPUT["words"]}, ensure_ascii=False)


def test_the_repairs_apply_once():
    predictor = importlib.import_module("allennlp.predictors.predictor")
    serializers = importlib.import_module("allennlp.evaluation.serializers.serializers")
    predict = importlib.import_module("allennlp.commands.predict")
    before = (predictor.Predictor.dump_line, serializers.SimpleSerializer.__call__, predict._PredictManager.__init__)
    utf8_outputs.repair_dump_line(predictor)
    utf8_outputs.repair_serializer(serializers)
    utf8_outputs.repair_predict_output(predict)
    assert (predictor.Predictor.dump_line, serializers.SimpleSerializer.__call__, predict._PredictManager.__init__) == (
        before
    )
