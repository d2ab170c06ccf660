"""
`allennlp predict` names the bad input line.

A repair of allennlp itself rather than of the stack it runs on. `allennlp predict` reads its JSON-lines input in
`_PredictManager._get_json_data` and predicts batches in `_PredictManager._predict_json`; an error in either
(malformed JSON, an input the predictor refuses, bytes that are not UTF-8) stopped the run without saying which line
(allennlp reads each line with a bare `json.loads`, `Predictor.load_line`: a line nested too deeply was a
`RecursionError`'s traceback). Both are wrapped here: an input error
(ValueError, KeyError, TypeError, IndexError, bytes that are not UTF-8) is raised again as a ValueError "FILE, line N:
message" (lines numbered from 1, blank lines counted, as an editor shows them); for a batch (`--batch-size`), the
first line whose input the predictor refuses is named. An input named `.gz`, `.bz2` or `.xz` is decompressed as it
is read (by the name given: cached_path's download of a URL has another), standard input when its
first bytes are compressed data; compressed data under another name, or a file that is not what its name says or is
cut short, is one line naming the file (it was "not UTF-8 text", or a decompressor's traceback), as in the readers'
`luke_allennlp.resources.files`. A byte-order mark before the first line is ignored. Blank
lines are skipped and counted (logged at the end). The output file is closed whatever happens, so that an error keeps
every prediction written before it (allennlp closed it only after the last input: on an error the process exited
with the predictions still in the file's buffer, and the output file was left empty). An input that is a dataset
(`luke_allennlp.resources.hf_datasets.is_dataset_path`: `hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, a
Parquet, Arrow, CSV or TSV file) is read with the archive's dataset reader, as `--use-dataset-reader` reads it
(allennlp read it as JSON lines: "not UTF-8", or a JSON error on its first line). Nothing else changes.
"""

import importlib
import sys
import types
from typing import Any, BinaryIO, Iterator, List

from luke_allennlp.cli import logger
from luke_allennlp.cli.overwrite_guard import guard_predict
from luke_allennlp.resources.files import COMPRESSIONS, TOO_DEEP  # (the compressions the readers read)
from luke_allennlp.resources.hf_datasets import is_dataset_path
from luke_allennlp_compat.patch import repaired, replace


def input_lines(raw: BinaryIO, name: str, stdin: bool) -> Iterator[bytes]:
    """
    The lines of the input `name`, decompressed as they are read if its name ends with `.gz`, `.bz2` or `.xz` (the
    suffix of the name given, not of cached_path's download of a URL) or, for standard input, if its first bytes are
    compressed data. Compressed data under another name, and data that is not what its name says (or is cut short), are
    an error naming the file, rather than "not UTF-8 text" or a decompressor's traceback.
    """
    head = raw.peek(8)[:8]  # type: ignore[attr-defined]
    suffix = next((suffix for suffix in COMPRESSIONS if name.endswith(suffix)), None)
    if suffix is None:
        suffix = next((suffix for suffix, (_, _, magic) in COMPRESSIONS.items() if head.startswith(magic)), None)
        if suffix is not None and not stdin:
            raise ValueError(
                f"{name}: {COMPRESSIONS[suffix][0]}-compressed data, not text: name it with {suffix} to read it "
                "compressed, or decompress it"
            )
    if suffix is None:
        yield from raw
        return
    label, decompressor, _ = COMPRESSIONS[suffix]
    opener = importlib.import_module(decompressor)
    try:
        yield from opener.open(raw, "rb")
    except (OSError, EOFError, getattr(opener, "LZMAError", OSError)) as error:  # (gzip.BadGzipFile, cut short)
        raise ValueError(f"{name}: not {label} data, or truncated, as its name says ({error})") from None


def repair_predict(module: types.ModuleType) -> None:
    manager = module._PredictManager
    if repaired(manager._get_json_data):
        return
    predict_batch = manager._predict_json
    run_all = manager.run
    input_errors = (ValueError, KeyError, TypeError, IndexError)

    def get_json_data(self: Any) -> Any:
        stdin = self._input_file == "-"
        name = "<stdin>" if stdin else self._input_file
        self._luke_lines = {}  # id of each parsed input -> (file, line number)
        self._luke_blank_lines = 0
        # Bytes, decoded line by line, so that bytes that are not UTF-8 are found on their own line.
        lines = sys.stdin.buffer if stdin else open(module.cached_path(name), "rb")
        try:
            for number, raw in enumerate(input_lines(lines, name, stdin), start=1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark is dropped
                except UnicodeDecodeError as error:
                    raise ValueError(f"{name}, line {number}: not UTF-8 text ({error.reason})") from None
                if not line or line.isspace():
                    self._luke_blank_lines += 1
                    continue
                try:
                    inputs = self._predictor.load_line(line)
                except input_errors as error:  # json.JSONDecodeError is a ValueError
                    raise ValueError(f"{name}, line {number}: {error}") from None
                except RecursionError:  # (any predictor's json.loads of a line nested too deeply)
                    raise ValueError(f"{name}, line {number}: {TOO_DEEP}") from None
                self._luke_lines[id(inputs)] = (name, number)
                yield inputs
        finally:
            if not stdin:
                lines.close()
            if self._luke_blank_lines:
                logger.info("%s: %d blank lines skipped", name, self._luke_blank_lines)

    def where(self: Any, batch: List[Any]) -> str:
        named = [self._luke_lines.get(id(inputs), ("input", 0)) for inputs in batch]
        if len(batch) == 1:
            return f"{named[0][0]}, line {named[0][1]}"
        for (name, number), inputs in zip(named, batch):
            try:
                self._predictor._json_to_instance(inputs)
            except Exception:  # noqa: BLE001  (any refusal names this line)
                return f"{name}, line {number}"
        return f"{named[0][0]}, lines {named[0][1]}-{named[-1][1]}"

    def predict_json(self: Any, batch: List[Any]) -> Any:
        try:
            results = list(predict_batch(self, batch))
        except input_errors as error:
            kind = "" if isinstance(error, ValueError) else f"{type(error).__name__}: "
            raise ValueError(f"{where(self, batch)}: {kind}{error}") from error
        finally:
            for inputs in batch:
                getattr(self, "_luke_lines", {}).pop(id(inputs), None)
        yield from results

    # (so named for `user_errors.PHASES`: an interruption anywhere in it is "while predicting")
    def predict(self: Any) -> None:
        if self._dataset_reader is None and self._input_file != "-" and is_dataset_path(self._input_file):
            logger.info(
                "%s: a dataset, not JSON lines: read with the archive's dataset reader (as --use-dataset-reader)",
                self._input_file,
            )
            self._dataset_reader = self._predictor._dataset_reader
        try:
            run_all(self)
        finally:  # the predictions written before an error are kept
            if self._output_file is not None and not self._output_file.closed:
                self._output_file.close()

    replace(manager, "_get_json_data", get_json_data)
    replace(manager, "run", predict)
    replace(manager, "_predict_json", predict_json)
    guard_predict(module)  # the overwrite guard's
