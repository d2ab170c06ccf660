"""
The transformers side of `cpu_vs_transformers.py`'s prediction and start-up figures: what a user of transformers' LUKE
writes to find the named entities of sentences, using torch, numpy and transformers only (no import of this project
or of allennlp, so that its start-up is transformers' own). Every span of up to 16 words is an entity span of
`LukeTokenizer` (128 a pass), `LukeForEntitySpanClassification` scores them under `torch.inference_mode`, and the
paper's greedy decoding keeps the best non-overlapping spans not labelled `O`.

    python benchmarks/transformers_ner.py EXPORTED_DIR word word ...   # prints the entities of one sentence
"""

import sys
from typing import List, Tuple

import numpy as np
import torch
import transformers

MAX_SPAN_WORDS, SPANS_PER_PASS = 16, 128


class TransformersNer:
    def __init__(self, directory: str) -> None:
        self.tokenizer = transformers.LukeTokenizer.from_pretrained(directory, task="entity_span_classification")
        self.model = transformers.LukeForEntitySpanClassification.from_pretrained(directory).eval()
        config = self.model.config
        self.labels = [config.id2label[i] for i in range(config.num_labels)]
        self.outside = self.labels.index("O")

    def predict(self, batch: List[List[str]]) -> List[List[Tuple[int, int, str]]]:
        """Each sentence's entities: (first word, last word + 1, type)."""
        texts, spans, owners = [], [], []
        for index, words in enumerate(batch):
            starts, position = [], 0
            for word in words:
                starts.append(position)
                position += len(word) + 1
            word_spans = [
                (i, j) for i in range(len(words)) for j in range(i + 1, min(len(words), i + MAX_SPAN_WORDS) + 1)
            ]
            for chunk in range(0, len(word_spans), SPANS_PER_PASS):
                part = word_spans[chunk : chunk + SPANS_PER_PASS]
                texts.append(" ".join(words))
                spans.append([(starts[i], starts[j - 1] + len(words[j - 1])) for i, j in part])
                owners.append((index, part))
        # (no truncation: transformers 5's LukeTokenizer fails on it, and a CoNLL sentence alone fits in 512 subwords)
        encoded = self.tokenizer(texts, entity_spans=spans, padding=True, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**encoded).logits.numpy()
        sentences: List[Tuple[list, list]] = [([], []) for _ in batch]
        for row, (index, part) in enumerate(owners):
            sentences[index][0].extend(part)
            sentences[index][1].append(logits[row, : len(part)])
        return [self.decode(part, np.concatenate(rows)) if part else [] for part, rows in sentences]

    def decode(self, spans: List[Tuple[int, int]], logits: np.ndarray) -> List[Tuple[int, int, str]]:
        """Spans not labelled `O`, by descending logit, each kept unless it overlaps one kept before."""
        best = logits.argmax(-1)
        score = logits.max(-1)
        taken: set = set()
        chosen = []
        for k in sorted((k for k in range(len(spans)) if best[k] != self.outside), key=lambda k: -score[k]):
            start, end = spans[k]
            if not taken.intersection(range(start, end)):
                taken.update(range(start, end))
                chosen.append((start, end, self.labels[best[k]]))
        return sorted(chosen)


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(TransformersNer(sys.argv[1]).predict([sys.argv[2:]]))
