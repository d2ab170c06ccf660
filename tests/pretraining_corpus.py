"""
Small pretraining corpora for the tests, in the format of `allennlp build-pretraining-corpus` (a `datasets`
dataset on disk + metadata.json + copies of the tokenizer and entity vocabulary), built from real text:
CoNLL-2003 sentences, with their named-entity spans standing in for Wikipedia links (the span's text is
the entity's title). Independent of the Wikipedia corpus builder. And a tiny RoBERTa with its MLM head.
"""

import collections
import json
from pathlib import Path
from typing import Dict, List, Tuple

from luke_allennlp.data.tags import tags_to_spans
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.testing import ROBERTA_VOCAB_SIZE, TINY, save_roberta_tokenizer


def conll_sentences(path: Path, documents: int) -> List[Tuple[int, List[str], List[Tuple[int, int]]]]:
    """(document, words, entity spans as (start, end) words, end exclusive) of the first `documents` documents."""
    sentences, words, tags, document = [], [], [], -1

    def flush():
        if words:
            sentences.append((document, list(words), list(tags_to_spans(tags, "iob1"))))
        words.clear(), tags.clear()

    for line in path.read_text().splitlines():
        if line.startswith("-DOCSTART-"):
            flush()
            document += 1
            if document == documents:
                break
        elif not line.strip():
            flush()
        else:
            parts = line.split()
            words.append(parts[0]), tags.append(parts[-1])
    flush()
    return sentences


def write_corpus(
    directory: Path, conll_file: Path, documents: int = 40, max_seq_length: int = 128, vocab_size: int = 60
) -> Path:
    """Writes the corpus; sentences of a document are packed into rows of at most `max_seq_length - 2` subwords."""
    import datasets

    from luke_allennlp.resources.tokenization import load_fast_tokenizer

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_roberta_tokenizer(directory / "tokenizer")
    tokenizer = load_fast_tokenizer(str(directory / "tokenizer"))
    sentences = conll_sentences(conll_file, documents)
    counts = collections.Counter(" ".join(w[a:b]) for _, w, spans in sentences for a, b in spans)
    titles = [t for t, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[: vocab_size - 3]]
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]"] + titles, [0, 0, 0] + [counts[t] for t in titles])
    vocab.save_jsonl(directory / "entity_vocab.jsonl")

    rows: Dict[str, list] = {"word_ids": [], "entity_ids": [], "entity_position_ids": [], "page_id": []}
    current = {"word_ids": [], "entity_ids": [], "entity_position_ids": []}
    page = None

    def emit():
        if current["word_ids"]:
            for key in current:
                rows[key].append(current[key])
            rows["page_id"].append(page)
        for key in current:
            current[key] = []

    for document, words, spans in sentences:
        encoding = tokenizer(words, is_split_into_words=True, add_special_tokens=False)
        ids, word_index = encoding["input_ids"], encoding.word_ids()
        if document != page or len(current["word_ids"]) + len(ids) > max_seq_length - 2:
            emit()
            page = document
        offset = len(current["word_ids"])
        current["word_ids"] += ids[: max_seq_length - 2]
        for start, end in spans:
            positions = [offset + i for i, w in enumerate(word_index) if start <= w < end]
            if positions and positions[-1] < offset + max_seq_length - 2:
                current["entity_ids"].append(vocab.get(" ".join(words[start:end]), vocab.unk_id))
                current["entity_position_ids"].append(positions)
    emit()
    datasets.Dataset.from_dict(rows).save_to_disk(str(directory))
    metadata = {
        "tokenizer": {"path": "tokenizer", "name_or_path": str(directory / "tokenizer")},
        "entity_vocab": "entity_vocab.jsonl",
        "entity_vocab_size": len(vocab),
        "max_seq_length": max_seq_length,
        "max_entities": max(len(e) for e in rows["entity_ids"]),
        "max_mention_length": max(len(p) for r in rows["entity_position_ids"] for p in r),
        "pages": len(set(rows["page_id"])),
        "sequences": len(rows["word_ids"]),
        "words": sum(len(w) for w in rows["word_ids"]),
        "entities": sum(len(e) for e in rows["entity_ids"]),
        "skipped": {},
    }
    (directory / "metadata.json").write_text(json.dumps(metadata, indent=2))
    return directory


def write_tiny_roberta_mlm(directory: Path) -> Path:
    """A tiny random `RobertaForMaskedLM` (the checkpoint pretraining starts from) with the RoBERTa tokenizer."""
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=ROBERTA_VOCAB_SIZE, max_position_embeddings=514, type_vocab_size=1, **TINY)
    RobertaForMaskedLM(config).save_pretrained(directory)
    save_roberta_tokenizer(directory)
    return Path(directory)
