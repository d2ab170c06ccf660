"""
`allennlp predict` and `allennlp evaluate --predictions-output-file` write text as UTF-8: `"Сопот"`, not
`"\\u0421\\u043e\\u043f\\u043e\\u0442"`.

A repair of allennlp itself. allennlp writes each prediction with `json.dumps` (`Predictor.dump_line`, evaluate's
`SimpleSerializer`), whose `ensure_ascii` escapes every character outside ASCII: a Bulgarian, Japanese or Arabic
prediction was unreadable in the file (and three times its size in Cyrillic). And `allennlp predict` opens `--output-file` in the
locale's encoding (`open(output_file, "w")`), which under a Latin-1 locale could not hold the text at all. Here
`Predictor.dump_line` and `SimpleSerializer.__call__` write the characters themselves (what they write is otherwise
unchanged: the same JSON values), and predict's output file is opened as UTF-8 whatever the locale (a console whose
encoding cannot show the text, under the C locale say, prints `\\u` escapes instead of failing). A predictor or
serializer with its own `dump_line` or `__call__` keeps it (the project's `luke_per_instance` serializer writes
UTF-8 itself).
"""

import json
import sys
import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace


def repair_dump_line(module: types.ModuleType) -> None:
    """`allennlp.predictors.predictor`: a prediction's JSON line with its characters, not `\\u` escapes."""
    predictor = module.Predictor
    if repaired(predictor.dump_line):
        return

    def dump_line(self: Any, outputs: Any) -> str:
        return json.dumps(outputs, ensure_ascii=False) + "\n"

    replace(predictor, "dump_line", dump_line)


def repair_serializer(module: types.ModuleType) -> None:
    """`allennlp.evaluation.serializers.serializers`: `SimpleSerializer`'s JSON with its characters."""
    serializer = module.SimpleSerializer
    serialize = serializer.__call__
    if repaired(serialize):
        return

    def call(self: Any, *args: Any, **kwargs: Any) -> str:
        text = serialize(self, *args, **kwargs)
        return json.dumps(json.loads(text), ensure_ascii=False) if "\\u" in text else text

    replace(serializer, "__call__", call)


def repair_predict_output(module: types.ModuleType) -> None:
    """`allennlp.commands.predict`: `--output-file` opened as UTF-8, not in the locale's encoding."""
    manager = module._PredictManager
    initialise = manager.__init__
    if repaired(initialise):
        return

    def __init__(self: Any, predictor: Any, input_file: str, output_file: Any, *args: Any, **kwargs: Any) -> None:
        initialise(self, predictor, input_file, None, *args, **kwargs)  # (its checks first: nothing opened yet)
        self._output_file = None if output_file is None else open(output_file, "w", encoding="utf-8")
        encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
        if self._print_to_console and encoding != "utf8" and hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="backslashreplace")  # a console that cannot show the text gets escapes

    replace(manager, "__init__", __init__)
