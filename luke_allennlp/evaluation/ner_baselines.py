"""Baselines that put an NER score in context: what a lookup of the training entities scores on the same data."""

from collections import Counter, defaultdict
from typing import Dict, Iterable, Sequence, Tuple

from luke_allennlp.data.tags import tags_to_spans
from luke_allennlp.training.metrics import SpanF1

Sentences = Iterable[Tuple[Sequence[str], Sequence[str]]]  # (words, tags) in the files' encoding


def dictionary_baseline(train: Sentences, dev: Sentences, encoding: str = "iob1") -> Dict[str, float]:
    """
    Span precision, recall and F1 on `dev` of tagging every entity string seen in `train` with its most frequent
    type, longest match first, left to right. (Everything `O`, the trivial baseline, scores 0.)
    """
    types: Dict[Tuple[str, ...], Counter] = defaultdict(Counter)
    for words, tags in train:
        for (a, b), kind in tags_to_spans(list(tags), encoding).items():
            types[tuple(words[a:b])][kind] += 1
    lexicon = {name: kinds.most_common(1)[0][0] for name, kinds in types.items()}
    longest = max(map(len, lexicon), default=0)
    metric = SpanF1()
    for words, tags in dev:
        predicted, i = {}, 0
        while i < len(words):
            for length in range(min(longest, len(words) - i), 0, -1):
                kind = lexicon.get(tuple(words[i : i + length]))
                if kind:
                    predicted[(i, i + length)] = kind
                    i += length
                    break
            else:
                i += 1
        metric([predicted], [tags_to_spans(list(tags), encoding)])
    scores = metric.get_metric()
    return {name: scores[name] for name in ("precision", "recall", "f1")}
