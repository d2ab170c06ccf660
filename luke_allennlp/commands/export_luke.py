"""
`allennlp export-luke ARCHIVE OUT_DIR [--lite]`: an AllenNLP archive as a `transformers` LUKE checkpoint.

A `luke_pretraining` archive becomes `LukeForMaskedLM`; a fine-tuned `luke_span_ner`, `luke_relation_classifier`,
`luke_entity_typing`, `luke_squad`, `luke_sequence_classifier` or `luke_multiple_choice` archive the matching task
class (`LukeForEntitySpanClassification`, `LukeForEntityPairClassification`, `LukeForEntityClassification`,
`LukeForQuestionAnswering`, `LukeForSequenceClassification` (`problem_type: "regression"` for a regression model),
`LukeForMultipleChoice`, see `task_checkpoints.TASKS`), with `id2label` and its tokenizer's `task=` mode. The directory holds `config.json`,
`model.safetensors` and the tokenizer's files: `LukeTokenizer`'s (`vocab.json`, `merges.txt`, `entity_vocab.json`,
`tokenizer_config.json`, `special_tokens_map.json`) for RoBERTa's BPE, `MLukeTokenizer`'s (`tokenizer.json`,
`sentencepiece.bpe.model` where the training tokenizer has one, `entity_vocab.json` with `language:title` keys)
for an XLM-R-style sentencepiece tokenizer. As transformers' conversion of the original LUKE checkpoints does,
the release also gets what fine-tuning uses but pretraining does not train, none of which changes the model's
outputs on its inputs:

- the entity-aware query matrices (`w2e_query`, `e2w_query`, `e2e_query`), copies of the word query when
  pretraining used the plain attention (with equal queries the two attentions compute the same thing);
- the `<ent>` and `<ent2>` word tokens of `LukeTokenizer`, initialised from `@` and `#`;
- the `[MASK2]` entity, initialised from `[MASK]`.

A task checkpoint's entities are the special ones (`[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]`, ids 0-3): `[MASK]` is the
readers' `[MASK]` (a relation's `[HEAD]`), `[MASK2]` a relation's `[TAIL]`. `--lite` keeps only these four
entities of a pretrained (or `luke_squad`) model as well: a "lite" checkpoint, like `studio-ousia/luke-base-lite`.
"""

import argparse
import copy
import json
import os
import shutil
import tempfile
from typing import Dict, List, Optional

import torch
from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.task_checkpoints import (
    BY_MODEL_TYPE,
    CHECKPOINT_SPECIAL_ENTITIES,
    TaskCheckpoint,
    uses_markers,
)
from luke_allennlp.modeling.loading import EXTRA_QUERIES, save_safetensors
from luke_allennlp.resources.archive_config import check_archive_config
from luke_allennlp.resources.archives import extract_archive
from luke_allennlp.resources.output import lock_output, replaced_output

# Word tokens LukeTokenizer adds, and the token each is initialised from (transformers' LUKE conversion).
ENTITY_MARKERS = {"<ent>": "@", "<ent2>": "#"}


@Subcommand.register("export-luke")
class ExportLuke(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Write an AllenNLP LUKE archive (pretraining or a task) as a transformers checkpoint directory."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="the model.tar.gz of a luke_pretraining or LUKE task run")
        subparser.add_argument("output_dir", help="the directory to write")
        subparser.add_argument("--tokenizer", help="the model's tokenizer (default: the training corpus's / reader's)")
        subparser.add_argument(
            "--entity-vocab", help="its entity vocabulary file or checkpoint directory (default: the corpus's)"
        )
        subparser.add_argument("--lite", action="store_true", help="keep only the special entities (a lite model)")
        subparser.set_defaults(
            func=lambda args: export_luke(
                args.archive_file, args.output_dir, args.tokenizer, args.entity_vocab, args.lite
            )
        )
        return subparser


def export_luke(
    archive_file: str,
    output_dir: str,
    tokenizer: Optional[str] = None,
    entity_vocab: Optional[str] = None,
    lite: bool = False,
) -> None:
    """Writes the transformers directory (see the module's docstring); `tokenizer` and `entity_vocab` default to
    those of the corpus a pretraining archive was trained on, a task archive's tokenizer to its reader's."""
    from allennlp.models.archival import load_archive

    from luke_allennlp.models.luke_pretraining import LukePretraining

    # One writer per output directory (`OUTPUT_DIR.lock`, held for the export); extracted once, safely (see
    # luke_allennlp.resources.archives.extract_archive), and loaded from the directory.
    with lock_output(output_dir), tempfile.TemporaryDirectory() as extracted:
        extract_archive(archive_file, extracted)
        try:
            with open(os.path.join(extracted, "config.json"), encoding="utf-8") as f:
                model_type = json.load(f)["model"].get("type")
        except (OSError, ValueError, KeyError, AttributeError) as error:
            raise ValueError(f"{archive_file} is not an allennlp model archive (config.json: {error})") from None
        check_archive_config(
            os.path.join(extracted, "config.json"), archive_file
        )  # (the archive named, not `extracted`)
        archive = load_archive(extracted, cuda_device=-1, overrides=json.dumps(_load_overrides(model_type)))
        if model_type not in BY_MODEL_TYPE and not isinstance(archive.model, LukePretraining):
            raise ValueError(
                f"{archive_file} holds a {type(archive.model).__name__}, not a luke_pretraining model or one of "
                f"{sorted(BY_MODEL_TYPE)}"
            )
        # Written beside OUTPUT_DIR and renamed into place (file by file into an existing directory) when complete.
        with replaced_output(output_dir, directory=True, merge=True) as building:
            if model_type in BY_MODEL_TYPE:
                written = _export_task(archive, BY_MODEL_TYPE[model_type], archive_file, building, tokenizer, lite)
            else:
                written = _export_pretraining(archive, archive_file, building, tokenizer, entity_vocab, lite)
    print(f"Wrote {output_dir}: {written}")


def _load_overrides(model_type: Optional[str]) -> Dict[str, bool]:
    """The weights come from the archive: the checkpoint training started from need only give its config."""
    if model_type == "luke_pretraining":
        return {"model.load_weights": False}
    if model_type in BY_MODEL_TYPE:
        return {"model.embedder.load_weights": False}
    return {}


def _export_pretraining(archive, archive_file: str, output_dir: str, tokenizer: Optional[str],
                        entity_vocab: Optional[str], lite: bool) -> str:  # fmt: skip
    from luke_allennlp.data.entity_vocab import EntityVocab
    from luke_allennlp.modeling import LukeForPretraining

    corpus = archive.config.get("train_data_path")
    tokenizer_path, entity_vocab_path = tokenizer, entity_vocab
    if tokenizer_path is None or entity_vocab_path is None:
        from luke_allennlp.data.pretraining_corpus import PretrainingCorpus, corpus_directories

        try:  # (several corpora, one per language, share their tokenizer and entity vocabulary: the reader checks)
            found = PretrainingCorpus(corpus_directories(corpus)[0])
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
    word_tokenizer = _word_tokenizer(tokenizer_path)
    # MLukeTokenizer's keys are "language:title" (the original conversion prefixes every title, LUKE-Japanese's
    # "ja:東京" too), a one-language vocabulary's included; LukeTokenizer's are bare titles.
    entities = vocab.to_transformers_json(language_prefixed=True if _word_model(word_tokenizer) == "Unigram" else None)
    rows = None
    if lite:  # the special entities alone, [PAD] [UNK] [MASK] at LUKE's ids 0-2
        special = [vocab.pad_id, vocab.unk_id, vocab.mask_id]
        rows, entities = special, {name: i for i, name in enumerate(EntityVocab.SPECIAL_TOKENS)}
    entities.setdefault("[MASK2]", max(entities.values()) + 1)
    os.makedirs(output_dir, exist_ok=True)
    luke_tokenizer = write_luke_tokenizer(word_tokenizer, entities, output_dir, source_dir=tokenizer_path)
    state, config = _release(model, luke_tokenizer, word_tokenizer.get_vocab(), vocab, rows)
    release = LukeForPretraining(config)
    release.load_state_dict(state)
    release.save_pretrained(output_dir)
    return (
        f"LukeForMaskedLM with {config.vocab_size} words and {config.entity_vocab_size} entities "
        f"(entity-aware attention), and {type(luke_tokenizer).__name__} files"
    )


def _word_tokenizer(tokenizer_path: str):
    from luke_allennlp.data.tokenization import load_fast_tokenizer

    word_tokenizer = load_fast_tokenizer(tokenizer_path)
    if _word_model(word_tokenizer) not in ("BPE", "Unigram"):
        raise ValueError(
            f"{tokenizer_path}: LukeTokenizer is RoBERTa's byte-level BPE and MLukeTokenizer XLM-R's sentencepiece; "
            f"a model trained with {type(word_tokenizer).__name__} cannot be exported as a LUKE checkpoint"
        )
    return word_tokenizer


def _word_model(word_tokenizer) -> str:
    return type(word_tokenizer.backend_tokenizer.model).__name__


def write_luke_tokenizer(word_tokenizer, entities: Dict[str, int], output_dir: str, task: Optional[str] = None,
                         source_dir: Optional[str] = None):  # fmt: skip
    """
    Writes the LUKE tokenizer of a word tokenizer and an entity vocabulary (`{title: id}`, the four special entities
    included) to `output_dir` and returns it, loaded from there: `LukeTokenizer` over a byte-level BPE,
    `MLukeTokenizer` over a sentencepiece (Unigram) tokenizer. `task` is LukeTokenizer's `task=` mode.
    """
    special = {name: str(getattr(word_tokenizer, name)) for name in
               ("bos_token", "eos_token", "sep_token", "cls_token", "unk_token", "pad_token", "mask_token")}  # fmt: skip
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "entity_vocab.json"), "w", encoding="utf-8") as f:
        json.dump(entities, f, ensure_ascii=False)
    if _word_model(word_tokenizer) == "BPE":
        from transformers import LukeTokenizer

        with tempfile.TemporaryDirectory() as work:
            word_tokenizer.backend_tokenizer.model.save(work)  # the BPE's vocab.json and merges.txt
            shutil.copyfile(os.path.join(output_dir, "entity_vocab.json"), os.path.join(work, "entity_vocab.json"))
            luke_tokenizer = LukeTokenizer.from_pretrained(work, task=task, **special)
            luke_tokenizer.save_pretrained(output_dir)
            # transformers 5 saves tokenizer.json alone; LukeTokenizer of transformers 4 reads these files.
            for name in ("vocab.json", "merges.txt"):
                shutil.copyfile(os.path.join(work, name), os.path.join(output_dir, name))
        return LukeTokenizer.from_pretrained(output_dir)
    return _write_mluke_tokenizer(word_tokenizer, output_dir, task, source_dir)


def _write_mluke_tokenizer(word_tokenizer, output_dir: str, task: Optional[str], source_dir: Optional[str]):
    """MLukeTokenizer's files: the word tokenizer's tokenizer.json with `<ent>`/`<ent2>` added (transformers 5 reads
    it; its MLukeTokenizer would number a bare sentencepiece model's pieces one off), its `sentencepiece.bpe.model`
    where the source has one (transformers 4 reads that), and a tokenizer_config.json naming MLukeTokenizer."""
    from transformers import MLukeTokenizer

    words = copy.deepcopy(word_tokenizer)
    words.add_tokens(list(ENTITY_MARKERS), special_tokens=True)
    words.save_pretrained(output_dir)
    spm = os.path.join(source_dir, "sentencepiece.bpe.model") if source_dir and os.path.isdir(source_dir) else None
    if spm and os.path.isfile(spm):
        shutil.copyfile(spm, os.path.join(output_dir, "sentencepiece.bpe.model"))
    config_path = os.path.join(output_dir, "tokenizer_config.json")
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    config.pop("added_tokens_decoder", None)
    config.update(tokenizer_class="MLukeTokenizer", task=task, entity_1_token="<ent>", entity_2_token="<ent2>",
                  entity_unk_token="[UNK]", entity_pad_token="[PAD]", entity_mask_token="[MASK]",
                  entity_mask2_token="[MASK2]", max_entity_length=32, max_mention_length=30)  # fmt: skip
    with open(config_path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    return MLukeTokenizer.from_pretrained(output_dir)


def _release(model, luke_tokenizer, trained_words: Dict[str, int], vocab, rows=None):
    """The state dict and config of the pretraining release (see the module's docstring); `trained_words` is the
    training tokenizer's vocabulary; `rows` the entity rows a lite release keeps."""
    config = copy.deepcopy(model.config)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    _entity_aware_queries(state, config, "luke.")
    config.vocab_size = _add_marker_rows(state, "luke.embeddings.word_embeddings.weight", ["lm_head.bias"],
                                         luke_tokenizer, trained_words)  # fmt: skip
    entity_table, entity_bias = "luke.entity_embeddings.entity_embeddings.weight", "entity_predictions.bias"
    if rows is not None:
        rows = rows + [vocab.mask_id]  # [MASK2]
    elif "[MASK2]" not in vocab:
        rows = list(range(len(vocab))) + [vocab.mask_id]
    if rows is not None:
        for key in (entity_table, entity_bias):
            state[key] = state[key][rows]
        config.entity_vocab_size = len(rows)
    return state, config


def _entity_aware_queries(state: Dict[str, torch.Tensor], config, prefix: str) -> None:
    """A model trained with the plain attention gets entity-aware queries copied from the word query."""
    if config.use_entity_aware_attention:
        return
    for layer in range(config.num_hidden_layers):
        attention = f"{prefix}encoder.layer.{layer}.attention.self."
        for name in EXTRA_QUERIES:
            for param in ("weight", "bias"):
                state[attention + f"{name}.{param}"] = state[attention + f"query.{param}"].clone()
    config.use_entity_aware_attention = True


def _add_marker_rows(state: Dict[str, torch.Tensor], word_table: str, extra: List[str], luke_tokenizer,
                     trained_words: Dict[str, int]) -> int:  # fmt: skip
    """Gives `<ent>`/`<ent2>` (if the training tokenizer lacked them) the rows of `@`/`#` in the word table and in
    the `extra` per-word tensors; returns the new vocabulary size."""
    for token, source in ENTITY_MARKERS.items():
        if token in trained_words:
            continue  # the training tokenizer had it: keep what was trained
        index = luke_tokenizer.convert_tokens_to_ids(token)
        source_index = next((i for i in luke_tokenizer.convert_tokens_to_ids([source, "\u2581" + source])
                             if i is not None and i != luke_tokenizer.unk_token_id), luke_tokenizer.unk_token_id)  # fmt: skip
        size = state[word_table].size(0)
        if index > size:
            raise ValueError(f"the tokenizer gives {token} the id {index}, beyond the next free row {size}")
        for key in [word_table] + [k for k in extra if k in state]:
            row = state[key][source_index : source_index + 1]
            # A new row, or a row of an id the training vocabulary left unused.
            if index == size:
                state[key] = torch.cat([state[key], row])
            else:
                state[key] = state[key].index_copy(0, torch.tensor([index]), row)
    return state[word_table].size(0)


def _export_task(archive, spec: TaskCheckpoint, archive_file: str, output_dir: str, tokenizer: Optional[str],
                 lite: bool) -> str:  # fmt: skip
    """A fine-tuned task archive as the matching transformers class (see `task_checkpoints`)."""
    from luke_allennlp.data.entities import TASK_ENTITY_VOCAB
    from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder

    model = archive.model
    if not isinstance(model.embedder, LukeEmbedder):
        raise ValueError(
            f"{archive_file}: its {spec.model_type} has a {type(model.embedder).__name__}, not the luke embedder"
        )
    expected = spec.model_options.get("feature")
    if expected is not None and model.feature != expected:
        raise ValueError(
            f"{archive_file}: {spec.architecture} classifies feature {expected!r}; this model was trained with {model.feature!r}"
        )
    if spec.task == "relation" and model.classifier.bias is not None:
        raise ValueError(
            f"{archive_file}: its classifier has a bias, which {spec.architecture} lacks: train with "
            f'"bias": false (as configs/relation_classification does)'
        )
    reader_config = archive.config.get("dataset_reader").as_dict(quiet=True)
    tokenizer_path = tokenizer or reader_config.get("model_name")
    encoder = model.embedder.luke
    config = copy.deepcopy(encoder.config)
    state = {"luke." + k: v.detach().clone() for k, v in encoder.state_dict().items()}
    if spec.task == "squad":  # LukeForQuestionAnswering has no pooler
        state = {k: v for k, v in state.items() if not k.startswith("luke.pooler.")}
    for theirs, ours in spec.head.items():
        state[theirs] = getattr(model, ours.split(".")[0]).state_dict()[ours.split(".", 1)[1]].detach().clone()

    table = "luke.entity_embeddings.entity_embeddings.weight"
    if spec.exported_entities is not None:
        if state[table].size(0) != len(TASK_ENTITY_VOCAB):
            raise ValueError(f'{archive_file}: the embedder must keep the task entities (entity_vocab: "task")')
        rows = [TASK_ENTITY_VOCAB[spec.exported_entities[name]] for name in CHECKPOINT_SPECIAL_ENTITIES]
        entities = {name: i for i, name in enumerate(CHECKPOINT_SPECIAL_ENTITIES)}
    else:
        entities, rows = _checkpoint_entities(reader_config.get("model_name"), state[table].size(0), lite)
    if rows is not None:
        state[table] = state[table][rows]
    config.entity_vocab_size = state[table].size(0)
    _entity_aware_queries(state, config, "luke.")

    mode = spec.tokenizer_task if spec.task == "ner" or uses_markers(spec, reader_config) else None
    word_tokenizer = _word_tokenizer(tokenizer_path)
    luke_tokenizer = write_luke_tokenizer(word_tokenizer, entities, output_dir, mode, source_dir=tokenizer_path)
    config.vocab_size = _add_marker_rows(state, "luke.embeddings.word_embeddings.weight", [], luke_tokenizer,
                                         word_tokenizer.get_vocab())  # fmt: skip
    labels = [model.vocab.get_token_from_index(i, "labels") for i in range(model.vocab.get_vocab_size("labels"))]
    out = {**config.to_dict(), "architectures": [spec.architecture]}
    if getattr(model, "regression", False):  # LukeForSequenceClassification with one score
        labels = ["LABEL_0"]
        out["problem_type"] = "regression"
    if spec.task not in ("squad", "multiple-choice"):
        out.update(id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    with open(os.path.join(output_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2, sort_keys=True)
    save_safetensors({k: v.contiguous() for k, v in state.items()}, os.path.join(output_dir, "model.safetensors"))
    return (
        f"{spec.architecture} with {len(labels)} labels and {config.entity_vocab_size} entities, "
        f"and {type(luke_tokenizer).__name__} files (task={mode})"
    )


def _checkpoint_entities(model_name: str, size: int, lite: bool):
    """The entity vocabulary of a model that kept its checkpoint's entity table (luke_squad), and the rows to keep:
    all, with [MASK2] appended if missing; the special entities alone if `lite`."""
    from luke_allennlp.modeling.loading import checkpoint_entities

    found = checkpoint_entities(model_name)
    if found is None:
        raise ValueError(
            f"{model_name}: no entity vocabulary for the model's entity table (neither entity_vocab.json nor an "
            "entity_vocab in tokenizer_config.json)"
        )
    entities, path = found
    if max(entities.values()) + 1 != size:
        raise ValueError(f"{path} has {max(entities.values()) + 1} entities, the model's entity table {size} rows")
    special = {name: entities[name] for name in CHECKPOINT_SPECIAL_ENTITIES if name in entities}
    special.setdefault("[MASK2]", special["[MASK]"])
    if lite:
        return {name: i for i, name in enumerate(CHECKPOINT_SPECIAL_ENTITIES)}, [
            special[n] for n in CHECKPOINT_SPECIAL_ENTITIES
        ]
    if "[MASK2]" in entities:
        return entities, None
    return {**entities, "[MASK2]": size}, list(range(size)) + [special["[MASK]"]]
