"""
Entity cloze (mLAMA style, beyond the LUKE and mLUKE papers' tasks): "Dante was born in [MASK]." -> the entities the
masked entity head (paper §3.3) ranks highest for a `[MASK]` entity over the `[MASK]` word, in any language of the
checkpoint's entity vocabulary.
"""

import logging
from typing import Any, Dict, List, Optional

import torch
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.entity_vocab import EntityVocab

logger = logging.getLogger(__name__)

MASK = "[MASK]"


class EntityCloze:
    """
    Masked entity prediction at the `[MASK]` of a sentence: the word is replaced by the tokenizer's mask token, a
    `[MASK]` entity is put over it, and the masked entity head scores every entity of the vocabulary at that
    entity (its logits softmaxed over the entities ranked: those with a title in `language` if one is asked for;
    the special entities never). Works on any LUKE checkpoint whose weights hold the head (`LukeForMaskedLM`'s
    `entity_predictions.*`, as `allennlp export-luke` and the released LUKE / mLUKE checkpoints have).

    # Parameters

    model : `LukeForPretraining`
        The encoder with its heads.
    tokenizer : `PreTrainedTokenizerFast`
        The word tokenizer (with a mask token).
    entity_vocab : `EntityVocab`
        The vocabulary of the model's entity table (mLUKE's multilingual one: titles of several languages an id).
    """

    def __init__(self, model: Any, tokenizer: Any, entity_vocab: EntityVocab) -> None:
        rows = model.config.entity_vocab_size
        if len(entity_vocab) > rows:
            raise ValueError(f"the entity vocabulary has {len(entity_vocab)} ids but the entity table {rows} rows")
        if tokenizer.mask_token_id is None:
            raise ValueError(f"the tokenizer {type(tokenizer).__name__} has no mask token")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.entity_vocab = entity_vocab
        self.max_length = model.config.max_position_embeddings - 2
        special = [entity_vocab.get(name) for name in (*EntityVocab.SPECIAL_TOKENS, "[MASK2]")]
        self._special = [i for i in special if i is not None]
        self._by_language: Dict[Optional[str], torch.Tensor] = {}
        self._languages = [entity_vocab.language] if entity_vocab.language is not None else entity_vocab.languages

    @classmethod
    def from_pretrained(cls, name_or_path: str, entity_vocab: Optional[str] = None) -> "EntityCloze":
        """A checkpoint directory or hub name with its tokenizer and entity vocabulary (or `entity_vocab`); a checkpoint
        without the masked entity head is refused."""
        from luke_allennlp.modeling import LukeForPretraining
        from luke_allennlp.modeling.checkpoint_files import read_config
        from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
        from luke_allennlp.resources.tokenization import load_fast_tokenizer

        if read_config(name_or_path).get("model_type") != "luke":
            raise ValueError(f"{name_or_path} is not a LUKE checkpoint: entity cloze needs the masked entity head")
        if not _has_entity_head(name_or_path):
            raise ValueError(
                f"{name_or_path} has no masked entity head (entity_predictions.*): entity cloze needs a checkpoint "
                "saved with it (LukeForMaskedLM, e.g. what `allennlp export-luke` writes of a pretraining archive)"
            )
        model = LukeForPretraining.from_pretrained(name_or_path)
        return cls(model, load_fast_tokenizer(name_or_path), checkpoint_entity_vocab(name_or_path, entity_vocab))

    @torch.no_grad()
    def predict(self, sentence: str, language: Optional[str] = None, top_k: int = 10) -> JsonDict:
        """
        `{"sentence", "language", "entities": [{"entity", "title", "language", "id", "score"}, ...]}`, the `top_k`
        best first: `entity` is the title with its language prefix as mLUKE's vocabulary writes it (`"en:Florence"`;
        the bare title for a vocabulary of one language), named in `language` if asked (only entities with a title
        there are ranked), else by their first title.
        """
        if not isinstance(sentence, str) or sentence.count(MASK) != 1:
            raise ValueError(f'the sentence must hold "{MASK}" once (the entity to predict): {str(sentence)[:80]!r}')
        if top_k < 1:
            raise ValueError(f"top_k must be positive, not {top_k}")
        candidates = self._candidates(language)
        encoded = self.tokenizer(sentence.replace(MASK, self.tokenizer.mask_token), add_special_tokens=True)
        ids: List[int] = encoded["input_ids"]
        if len(ids) > self.max_length:
            raise ValueError(f"the sentence has {len(ids)} subwords, more than the model's {self.max_length}")
        positions = [i for i, token in enumerate(ids) if token == self.tokenizer.mask_token_id]
        if len(positions) != 1:
            raise ValueError(
                f"the sentence has {len(positions)} mask tokens once tokenised, not one: {sentence[:80]!r}"
            )
        from luke_allennlp.modeling.inputs import LukeInputs

        device = next(self.model.parameters()).device
        words = torch.tensor([ids], device=device)  # (1, words)
        entity_ids = torch.tensor([[self.entity_vocab[EntityVocab.MASK]]], device=device)  # (1, 1)
        entity_positions = torch.tensor([[positions]], device=device)  # (1, 1, 1)
        out = self.model.luke(LukeInputs(words, entity_ids=entity_ids, entity_position_ids=entity_positions))
        table = self.model.luke.entity_embeddings.entity_embeddings.weight
        logits = self.model.entity_predictions(out.entity_last_hidden_state[0, 0], table)  # (entity vocab,)
        ranked = candidates.to(device)
        scores = torch.softmax(logits[ranked].float(), dim=-1)  # (candidates,)
        best = torch.topk(scores, min(top_k, len(ranked)))
        entities = []
        for score, index in zip(best.values.tolist(), best.indices.tolist()):
            entity_id = int(ranked[index])
            title, lang = self._name(entity_id, language)
            entity = f"{lang}:{title}" if lang is not None and self.entity_vocab.language is None else title
            entities.append({"entity": entity, "title": title, "language": lang, "id": entity_id, "score": score})
        return {"sentence": sentence, "language": language, "entities": entities}

    def _candidates(self, language: Optional[str]) -> torch.Tensor:
        """The ids ranked: every entity but the special ones, or those with a title in `language`."""
        if language not in self._by_language:
            vocab = self.entity_vocab
            if language is not None and language not in self._languages:
                raise ValueError(
                    f"the entity vocabulary has no titles in {language!r} (its languages: "
                    f"{', '.join(self._languages[:20]) or 'none'})"
                )
            ids = sorted({vocab[title] for title in vocab} - set(self._special))
            if language is not None:
                ids = [i for i in ids if vocab.get(vocab.title(i, language=language), language=language) == i]
            self._by_language[language] = torch.tensor(ids, dtype=torch.long)
        return self._by_language[language]

    def _name(self, entity_id: int, language: Optional[str]) -> "tuple[str, Optional[str]]":
        vocab = self.entity_vocab
        title = vocab.title(entity_id, language=language)
        if language is not None:
            return title, language
        for lang in self._languages:
            if vocab.get(title, language=lang) == entity_id:
                return title, lang
        return title, None


def _has_entity_head(name_or_path: str) -> bool:
    """Whether the checkpoint's weights hold `entity_predictions.*` (read from the safetensors header if it has one)."""
    from luke_allennlp.modeling.checkpoint_files import checkpoint_file, read_state_dict

    path = checkpoint_file(name_or_path, "model.safetensors")
    if path is not None:
        from safetensors import safe_open

        with safe_open(path, framework="pt") as f:
            keys = list(f.keys())
    else:
        keys = list(read_state_dict(name_or_path))
    return any(key.startswith("entity_predictions.") for key in keys)


@Predictor.register("luke_entity_cloze")
class LukeEntityClozePredictor(LukePredictor):
    """
    Entity cloze (`EntityCloze`) with a `luke_pretraining` archive: `allennlp predict model.tar.gz input.jsonl
    --predictor luke_entity_cloze`.

    Input: `{"sentence": "Dante was born in [MASK].", "language": "en", "top_k": 5}` (`language` and `top_k`
    optional); output: `{"sentence", "language", "entities": [{"entity", "title", "language", "id", "score"}, ...]}`.

    # Parameters

    model : `Model`
        A `luke_pretraining` model (it has the masked entity head).
    dataset_reader : `DatasetReader`
        Unused (the pretraining reader reads a corpus).
    tokenizer : `str`, optional (default = `None`)
        The word tokenizer; `None`: the training corpus's, else the model's `model_name`'s.
    entity_vocab : `str`, optional (default = `None`)
        The entity vocabulary (a file or a corpus directory); `None`: the model's (its training corpus's).
    top_k : `int`, optional (default = `10`)
        Entities per sentence, unless the input gives `top_k`.
    """

    output_keys = ("sentence", "language", "entities")

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        tokenizer: Optional[str] = None,
        entity_vocab: Optional[str] = None,
        top_k: int = 10,
    ) -> None:
        super().__init__(model, dataset_reader)
        pretraining = getattr(model, "pretraining", None)
        if pretraining is None or not hasattr(pretraining, "entity_predictions"):
            raise ValueError(
                f"a {type(model).__name__} model has no masked entity head: entity cloze needs a "
                "luke_pretraining archive (or EntityCloze.from_pretrained on a LUKE checkpoint)"
            )
        tokenizer_path, vocab_path = _model_vocabularies(model, tokenizer, entity_vocab)
        from luke_allennlp.resources.tokenization import load_fast_tokenizer

        self.cloze = EntityCloze(pretraining, load_fast_tokenizer(tokenizer_path), EntityVocab.from_file(vocab_path))
        self.top_k = top_k

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        sentence, language, top_k = inputs.get("sentence"), inputs.get("language"), inputs.get("top_k", self.top_k)
        if not isinstance(sentence, str):
            raise ValueError(f'{self.input_id(inputs)}: the input needs "sentence" (a string with "{MASK}")')
        if language is not None and not isinstance(language, str) or not isinstance(top_k, int):
            raise ValueError(f'{self.input_id(inputs)}: "language" must be a string and "top_k" an integer')
        return self.cloze.predict(sentence, language, top_k)

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return [self.predict_json(item) for item in inputs]

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        raise NotImplementedError("entity cloze predicts from JSON (predict_json), not from instances")


def _model_vocabularies(model: Model, tokenizer: Optional[str], entity_vocab: Optional[str]) -> "tuple[str, str]":
    """The tokenizer and entity vocabulary of a `luke_pretraining` model: those given, else its corpus's (the model's
    `entity_vocab`, a corpus directory as the configs give it), else its `model_name`'s (a LUKE checkpoint's)."""
    from luke_allennlp.resources.pretraining_corpus import PretrainingCorpus, corpus_directories

    source = entity_vocab or getattr(model, "entity_vocab_source", None)
    corpus = None
    if source is not None:
        try:
            corpus = PretrainingCorpus(corpus_directories(source)[0])
        except (OSError, ValueError):
            corpus = None
    model_name = getattr(model, "model_name", None)
    vocab_path = corpus.entity_vocab_path if corpus is not None else source or model_name  # (a LUKE checkpoint's)
    tokenizer_path = tokenizer or (corpus.tokenizer_path if corpus is not None else model_name)
    if vocab_path is None or tokenizer_path is None:
        raise ValueError(
            "the model does not name its tokenizer and entity vocabulary: pass them with --predictor-args "
            '\'{"tokenizer": ..., "entity_vocab": ...}\''
        )
    return tokenizer_path, vocab_path
