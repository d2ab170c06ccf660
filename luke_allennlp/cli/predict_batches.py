"""
`allennlp predict` batches inputs of similar length; outputs stay in input order.

allennlp's `_PredictManager.run` batches JSON inputs in file order (`--batch-size`), so the longest input of each batch
pads all the others: on CoNLL-2003 sentences at batch 32 a sentence cost 2.2 times what it did at batch 8. Here the
inputs of a file are read in windows of `WINDOW_BATCHES` batches; each window is sorted by the predictor's
`input_length` (`LukePredictor.input_length`, else the length of the input's JSON text), cut into batches, predicted,
and written back in the order of the file. Standard input keeps allennlp's order (one batch at a time: an interactive
user waits for no window). With `--use-dataset-reader`, allennlp's own loop runs. An input error still names its line
(`predict_errors`), and every line before it is predicted and written first, as in allennlp's loop.
"""

import json
import types
from typing import Any, Callable, Dict, List

from luke_allennlp_compat.patch import repaired, replace

WINDOW_BATCHES = 16  # batches sorted together (a window holds at least MIN_WINDOW inputs)
MIN_WINDOW = 256


def length_key(predictor: Any) -> Callable[[Dict[str, Any]], int]:
    """The predictor's `input_length`, or the length of an input's JSON text."""
    return getattr(predictor, "input_length", None) or (lambda inputs: len(json.dumps(inputs, ensure_ascii=False)))


def by_length(window: List[Any], batch_size: int, key: Callable[[Any], int]) -> List[List[int]]:
    """Batches of the window's positions, each of `batch_size` inputs of similar `key` (the last may be shorter)."""
    order = sorted(range(len(window)), key=lambda i: key(window[i]))  # stable: equal lengths keep the file's order
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def repair_predict_batches(module: types.ModuleType) -> None:
    manager = module._PredictManager
    if repaired(manager.run):
        return
    allennlp_run = manager.run

    def run(self: Any) -> None:
        if self._dataset_reader is not None or self._input_file == "-":
            return allennlp_run(self)
        key = length_key(self._predictor)
        size = max(1, self._batch_size)
        window_size = max(MIN_WINDOW, WINDOW_BATCHES * size)
        lines = self._get_json_data()
        written = 0
        try:
            while True:
                window: List[Any] = []
                reading_error = None
                try:
                    for inputs in lines:
                        window.append(inputs)
                        if len(window) == window_size:
                            break
                except Exception as error:  # noqa: BLE001  (a bad line: what was read before it is predicted first)
                    reading_error = error
                written = predict_window(self, window, size, key, written)
                if reading_error is not None:
                    raise reading_error
                if len(window) < window_size:
                    return
        finally:
            if self._output_file is not None:
                self._output_file.close()

    def predict_window(self: Any, window: List[Any], size: int, key: Callable[[Any], int], written: int) -> int:
        """Predicts the window by batches of similar length and writes it in input order; returns the count written.
        On an error, the lines are predicted one by one in the file's order up to it, so that every line before the
        bad one is written (as allennlp's loop does) and the error names that line."""
        results: List[Any] = [None] * len(window)
        lines = getattr(self, "_luke_lines", {})  # (predict_errors' line of each input, dropped once predicted)
        named = {id(inputs): lines[id(inputs)] for inputs in window if id(inputs) in lines}
        try:
            for positions in by_length(window, size, key):
                for i, result in zip(positions, self._predict_json([window[i] for i in positions])):
                    results[i] = result
        except Exception:
            lines.update(named)
            for i, inputs in enumerate(window):
                if results[i] is None:
                    results[i] = next(iter(self._predict_json([inputs])))  # (raises at the bad line)
                self._maybe_print_to_console_and_file(written + i, results[i], json.dumps(inputs))
            raise
        for i, (inputs, result) in enumerate(zip(window, results)):
            self._maybe_print_to_console_and_file(written + i, result, json.dumps(inputs))
        return written + len(window)

    replace(manager, "run", run)
