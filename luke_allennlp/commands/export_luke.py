"""
`allennlp export-luke ARCHIVE OUT_DIR`: a `luke_pretraining` archive as a `transformers` LUKE checkpoint.

The directory holds `config.json` (`LukeForMaskedLM`), `model.safetensors` and `LukeTokenizer`'s files
(`vocab.json`, `merges.txt`, `entity_vocab.json`, `tokenizer_config.json`, `special_tokens_map.json`). As
transformers' conversion of the original LUKE checkpoints does, the release also gets what fine-tuning uses
but pretraining does not train, none of which changes the model's outputs on pretraining inputs:

- the entity-aware query matrices (`w2e_query`, `e2w_query`, `e2e_query`), copies of the word query when
  pretraining used the plain attention (with equal queries the two attentions compute the same thing);
- the `<ent>` and `<ent2>` word tokens of `LukeTokenizer`, initialised from `@` and `#`;
- the `[MASK2]` entity, initialised from `[MASK]`.
"""
import argparse
import json
import os
import shutil
import tempfile
from typing import Dict, Optional

import torch
from allennlp.commands.subcommand import Subcommand

from luke_allennlp.modeling.loading import EXTRA_QUERIES
from luke_allennlp_compat import extract_archive

# Word tokens LukeTokenizer adds, and the token each is initialised from (transformers' LUKE conversion).
ENTITY_MARKERS = {"<ent>": "@", "<ent2>": "#"}


@Subcommand.register("export-luke")
class ExportLuke(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Write a luke_pretraining archive as a transformers LukeForMaskedLM directory (+ LukeTokenizer)."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="the model.tar.gz of a luke_pretraining run")
        subparser.add_argument("output_dir", help="the directory to write")
        subparser.add_argument("--tokenizer", help="the model's tokenizer (default: the training corpus's)")
        subparser.add_argument("--entity-vocab", help="its entity vocabulary file (default: the training corpus's)")
        subparser.set_defaults(
            func=lambda args: export_luke(args.archive_file, args.output_dir, args.tokenizer, args.entity_vocab)
        )
        return subparser


def export_luke(
    archive_file: str, output_dir: str, tokenizer: Optional[str] = None, entity_vocab: Optional[str] = None
) -> None:
    """Writes the transformers directory (see the module's docstring); `tokenizer` and `entity_vocab` default to
    those of the corpus the archive was trained on."""
    from allennlp.models.archival import load_archive

    from luke_allennlp.data.entity_vocab import EntityVocab
    from luke_allennlp.data.tokenization import load_fast_tokenizer
    from luke_allennlp.models.luke_pretraining import LukePretraining

    # Extracted once, safely (see luke_allennlp_compat.extract_archive), and loaded from the directory.
    with tempfile.TemporaryDirectory() as extracted:
        extract_archive(archive_file, extracted)
        try:
            with open(os.path.join(extracted, "config.json"), encoding="utf-8") as f:
                model_type = json.load(f)["model"].get("type")
        except (OSError, ValueError, KeyError, AttributeError) as error:
            raise ValueError(f"{archive_file} is not an allennlp model archive (config.json: {error})") from None
        # The weights come from the archive: the checkpoint pretraining started from need only give its config.
        overrides = {"model.load_weights": False} if model_type == "luke_pretraining" else {}
        archive = load_archive(extracted, cuda_device=-1, overrides=json.dumps(overrides))
    if not isinstance(archive.model, LukePretraining):
        raise ValueError(f"{archive_file} holds a {type(archive.model).__name__}, not a luke_pretraining model")
    corpus = archive.config.get("train_data_path")
    tokenizer_path, entity_vocab_path = tokenizer, entity_vocab
    if tokenizer_path is None or entity_vocab_path is None:
        from luke_allennlp.data.pretraining_corpus import PretrainingCorpus

        try:
            found = PretrainingCorpus(corpus)
            tokenizer_path = tokenizer_path or found.tokenizer_path
            entity_vocab_path = entity_vocab_path or found.entity_vocab_path
        except (OSError, ValueError) as error:
            raise ValueError(
                f"{archive_file} was trained on {corpus!r}, whose tokenizer and entity vocabulary cannot be found "
                f"({error}): pass --tokenizer and --entity-vocab"
            ) from None
    model = archive.model.pretraining
    vocab = EntityVocab.from_file(entity_vocab_path)
    if len(vocab) != model.config.entity_vocab_size:
        raise ValueError(
            f"{entity_vocab_path} has {len(vocab)} entities, the model's entity table {model.config.entity_vocab_size} rows"
        )
    word_tokenizer = load_fast_tokenizer(tokenizer_path)
    if type(word_tokenizer.backend_tokenizer.model).__name__ != "BPE":
        raise ValueError(
            f"{tokenizer_path}: LukeTokenizer is RoBERTa's byte-level BPE; a model trained with "
            f"{type(word_tokenizer).__name__} cannot be exported as a LUKE checkpoint"
        )
    os.makedirs(output_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        luke_tokenizer = _luke_tokenizer(word_tokenizer, vocab, work)
        state, config = _release(model, luke_tokenizer, word_tokenizer.get_vocab(), vocab)
        luke_tokenizer.save_pretrained(output_dir)
        # transformers 5 saves tokenizer.json alone; LukeTokenizer of transformers 4 reads these files.
        for name in ("vocab.json", "merges.txt", "entity_vocab.json"):
            shutil.copyfile(os.path.join(work, name), os.path.join(output_dir, name))
    from luke_allennlp.modeling import LukeForPretraining

    release = LukeForPretraining(config)
    release.load_state_dict(state)
    release.save_pretrained(output_dir)
    print(
        f"Wrote {output_dir}: LukeForMaskedLM with {config.vocab_size} words and {config.entity_vocab_size} entities "
        f"(entity-aware attention), and LukeTokenizer files"
    )


def _luke_tokenizer(word_tokenizer, vocab, work: str):
    """LukeTokenizer over the training tokenizer's BPE files and special tokens, and the entity vocabulary
    (+ `[MASK2]`)."""
    from transformers import LukeTokenizer

    word_tokenizer.backend_tokenizer.model.save(work)  # the BPE's vocab.json and merges.txt
    entities = vocab.to_transformers_json()
    entities.setdefault("[MASK2]", len(vocab))
    entity_vocab_file = os.path.join(work, "entity_vocab.json")
    with open(entity_vocab_file, "w", encoding="utf-8") as f:
        json.dump(entities, f, ensure_ascii=False)
    special = {name: getattr(word_tokenizer, name) for name in
               ("bos_token", "eos_token", "sep_token", "cls_token", "unk_token", "pad_token", "mask_token")}  # fmt: skip
    return LukeTokenizer.from_pretrained(work, **special)  # vocab.json, merges.txt, entity_vocab.json


def _release(model, luke_tokenizer, trained_words: Dict[str, int], vocab):
    """The state dict and config of the release (see the module's docstring); `trained_words` is the training
    tokenizer's vocabulary."""
    import copy

    config = copy.deepcopy(model.config)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if not config.use_entity_aware_attention:
        for layer in range(config.num_hidden_layers):
            prefix = f"luke.encoder.layer.{layer}.attention.self."
            for name in EXTRA_QUERIES:
                for param in ("weight", "bias"):
                    state[prefix + f"{name}.{param}"] = state[prefix + f"query.{param}"].clone()
        config.use_entity_aware_attention = True

    word_table, word_bias = "luke.embeddings.word_embeddings.weight", "lm_head.bias"
    for token, source in ENTITY_MARKERS.items():
        if token in trained_words:
            continue  # the training tokenizer had it: keep what was trained
        index, source_index = luke_tokenizer.convert_tokens_to_ids([token, source])
        size = state[word_table].size(0)
        if index > size:
            raise ValueError(f"LukeTokenizer gives {token} the id {index}, beyond the next free row {size}")
        for key in (word_table, word_bias):
            row = state[key][source_index : source_index + 1]
            # A new row, or a row of an id the training vocabulary left unused.
            if index == size:
                state[key] = torch.cat([state[key], row])
            else:
                state[key] = state[key].index_copy(0, torch.tensor([index]), row)
        config.vocab_size = state[word_table].size(0)

    entity_table, entity_bias = "luke.entity_embeddings.entity_embeddings.weight", "entity_predictions.bias"
    if "[MASK2]" not in vocab:
        for key in (entity_table, entity_bias):
            state[key] = torch.cat([state[key], state[key][vocab.mask_id : vocab.mask_id + 1]])
        config.entity_vocab_size += 1
    return state, config
