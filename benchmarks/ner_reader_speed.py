"""
Time to read CoNLL-2003 eng.train into instances with `luke_conll2003`, against the floor: tokenising the
same words with the same fast tokenizer in one batched call. Prints both and the ratio (target <= 3x).

    python benchmarks/ner_reader_speed.py [--data ../shared/data/conll2003/eng.train] [--model DIR]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_readers.luke_conll2003 import LukeConll2003Reader  # noqa: E402
from luke_allennlp.testing import shared_data_dir, write_tiny_checkpoint  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument(
        "--model", help="checkpoint directory whose tokenizer to use (default: RoBERTa's, from shared data)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = args.data or shared_data_dir() / "conll2003" / "eng.train"
    model = args.model or write_tiny_checkpoint(tempfile.mkdtemp(), "luke")
    reader = LukeConll2003Reader(str(model))
    tokenizer = reader.tokenizer
    sentences = [s.words for doc in reader.read_documents(str(data)) for s in doc]
    words = sum(len(s) for s in sentences)

    floors, reads = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        tokenizer(sentences, is_split_into_words=True, add_special_tokens=False)
        floors.append(time.perf_counter() - start)
        start = time.perf_counter()
        instances = sum(1 for _ in reader.read(str(data)))
        reads.append(time.perf_counter() - start)
    floor, read = statistics.median(floors), statistics.median(reads)
    print(f"{data}: {len(sentences)} sentences, {words} words -> {instances} instances")
    print(f"tokenise all words in one batched call (floor): {floor:.2f} s")
    print(f"read into instances (luke_conll2003):         {read:.2f} s")
    print(f"ratio: {read / floor:.2f}x the floor (target <= 3x)")


if __name__ == "__main__":
    main()
