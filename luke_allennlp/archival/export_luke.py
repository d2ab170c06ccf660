"""
An AllenNLP archive as a `transformers` LUKE checkpoint (`allennlp export-luke ARCHIVE OUT_DIR [--lite]`).

A `luke_pretraining` archive becomes `LukeForMaskedLM`; a fine-tuned `luke_span_ner`, `luke_relation_classifier`,
`luke_entity_typing`, `luke_squad`, `luke_sequence_classifier` or `luke_multiple_choice` archive the matching task
class (`LukeForEntitySpanClassification`, `LukeForEntityPairClassification`, `LukeForEntityClassification`,
`LukeForQuestionAnswering`, `LukeForSequenceClassification` (`problem_type: "regression"` for a regression model),
`LukeForMultipleChoice`, see `task_checkpoints.TASKS`), with `id2label` and its tokenizer's `task=` mode. The directory holds `config.json`,
`model.safetensors` and the tokenizer's files: `LukeTokenizer`'s (`vocab.json`, `merges.txt`, `entity_vocab.json`,
`tokenizer_config.json`, `special_tokens_map.json`) for RoBERTa's BPE, `MLukeTokenizer`'s (`tokenizer.json`,
`sentencepiece.bpe.model` where the training tokenizer has one, `entity_vocab.json` with `language:title` keys)
for an XLM-R-style sentencepiece tokenizer. As transformers' conversion of the original LUKE checkpoints does,
the release also gets what fine-tuning uses but pretraining does not train (entity-aware queries, `<ent>`/`<ent2>`,
`[MASK2]`; see `luke_allennlp.resources.release`).

A task checkpoint's entities are the special ones (`[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]`, ids 0-3): `[MASK]` is the
readers' `[MASK]` (a relation's `[HEAD]`), `[MASK2]` a relation's `[TAIL]`. `--lite` keeps only these four
entities of a pretrained (or `luke_squad`) model as well: a "lite" checkpoint, like `studio-ousia/luke-base-lite`.
"""

import copy
import json
import os
import tempfile
from typing import Dict, Optional

from luke_allennlp.modeling.checkpoint_files import write_checkpoint
from luke_allennlp.resources.archive_config import ArchiveConfigError, read_archive_config
from luke_allennlp.resources.archive_paths import inside
from luke_allennlp.resources.archives import extract_archive
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.resources.release import add_marker_rows, checkpoint_entity_rows, entity_aware_queries, release_state
from luke_allennlp.resources.task_checkpoints import (
    BY_MODEL_TYPE,
    CHECKPOINT_SPECIAL_ENTITIES,
    TaskCheckpoint,
    uses_markers,
)
from luke_allennlp.resources.tokenization import load_word_tokenizer, word_model, write_luke_tokenizer


def export_luke(
    archive_file: str,
    output_dir: str,
    tokenizer: Optional[str] = None,
    entity_vocab: Optional[str] = None,
    lite: bool = False,
    force: bool = False,
) -> None:
    """Writes the transformers directory (see the module's docstring); `tokenizer` and `entity_vocab` default to
    those of the corpus a pretraining archive was trained on, a task archive's tokenizer to its reader's.
    `output_dir` must be absent or an empty directory unless `force` (its files of the same names are replaced)."""
    from allennlp.models import Model

    from luke_allennlp.archival import load_archive

    # One writer per output directory (`OUTPUT_DIR.lock`, held for the export); extracted once, safely (see
    # luke_allennlp_compat.extract_archive), and loaded from the directory, checked as any archive (named as given).
    with lock_output(output_dir), tempfile.TemporaryDirectory() as extracted:
        if os.path.exists(output_dir) and not os.path.isdir(output_dir):
            raise ValueError(f"{output_dir} is a file, not a directory: choose another output directory")
        if not force and os.path.isdir(output_dir) and os.listdir(output_dir):
            raise ValueError(
                f"{output_dir} is not empty ({', '.join(sorted(os.listdir(output_dir))[:4])}"
                f"{', ...' if len(os.listdir(output_dir)) > 4 else ''}): export into a new directory, or pass --force "
                "to write into it (its files of the same names, config.json among them, are replaced)"
            )
        extract_archive(archive_file, extracted)
        model = read_archive_config(extracted, archive_file).get("model")
        if not isinstance(model, dict):
            raise ValueError(f"{archive_file} is not an allennlp model archive (its config.json has no model section)")
        model_type = model.get("type")
        overrides = json.dumps(_load_overrides(model_type))
        archive = load_archive(extracted, cuda_device=-1, overrides=overrides, name=archive_file)
        # (the class registered as luke_pretraining, found by that name: `models` is this layer's sibling)
        if model_type not in BY_MODEL_TYPE and not isinstance(archive.model, Model.by_name("luke_pretraining")):
            raise ValueError(
                f"{archive_file} holds a {type(archive.model).__name__}, not a luke_pretraining model or one of "
                f"{sorted(BY_MODEL_TYPE)}"
            )
        # Written beside OUTPUT_DIR and renamed into place (file by file into an existing directory) when complete.
        with replaced_output(output_dir, directory=True, merge=True) as building:
            if model_type in BY_MODEL_TYPE:
                written = _export_task(archive, BY_MODEL_TYPE[model_type], archive_file, building, tokenizer, lite)
            else:
                written = _export_pretraining(archive, archive_file, building, tokenizer, entity_vocab, lite, extracted)
    print(f"Wrote {output_dir}: {written}")


def _inside(path: str, extracted: str, archive_file: str) -> str:
    """`path` (the corpus, tokenizer or entity vocabulary the archive's config names), if it lies in the archive."""
    if not inside(str(path), extracted):
        raise ArchiveConfigError(
            f"{archive_file}: its corpus names {str(path)!r}, outside the archive: pass --tokenizer and --entity-vocab"
        )
    return path


def _load_overrides(model_type: Optional[str]) -> Dict[str, bool]:
    """The weights come from the archive: the checkpoint training started from need only give its config."""
    if model_type == "luke_pretraining":
        return {"model.load_weights": False}
    if model_type in BY_MODEL_TYPE:
        return {"model.embedder.load_weights": False}
    return {}


def _export_pretraining(
    archive,
    archive_file: str,
    output_dir: str,
    tokenizer: Optional[str],
    entity_vocab: Optional[str],
    lite: bool,
    extracted: str,
) -> str:
    from luke_allennlp.modeling import LukeForPretraining
    from luke_allennlp.resources.entity_vocab import EntityVocab

    corpus = archive.config.get("train_data_path")
    tokenizer_path, entity_vocab_path = tokenizer, entity_vocab
    if tokenizer_path is None or entity_vocab_path is None:
        from luke_allennlp.resources.pretraining_corpus import PretrainingCorpus, corpus_directories

        try:  # (several corpora, one per language, share their tokenizer and entity vocabulary: the reader checks)
            found = PretrainingCorpus(_inside(corpus_directories(str(corpus))[0], extracted, archive_file))
            tokenizer_path = tokenizer_path or _inside(found.tokenizer_path, extracted, archive_file)
            entity_vocab_path = entity_vocab_path or _inside(found.entity_vocab_path, extracted, archive_file)
        except ArchiveConfigError:
            raise
        except (OSError, ValueError, TypeError) as error:
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
    word_tokenizer = load_word_tokenizer(tokenizer_path)
    # MLukeTokenizer's keys are "language:title" (the original conversion prefixes every title, LUKE-Japanese's
    # "ja:東京" too), a one-language vocabulary's included; LukeTokenizer's are bare titles.
    prefixed = word_model(word_tokenizer) == "Unigram"
    entities = vocab.to_transformers_json(language_prefixed=True if prefixed else None)
    rows = None
    if lite:  # the special entities alone, [PAD] [UNK] [MASK] at LUKE's ids 0-2
        special = [vocab.pad_id, vocab.unk_id, vocab.mask_id]
        rows, entities = special, {name: i for i, name in enumerate(EntityVocab.SPECIAL_TOKENS)}
    entities.setdefault("[MASK2]", max(entities.values()) + 1)
    os.makedirs(output_dir, exist_ok=True)
    # (a LukeTokenizer's titles have no prefix: the vocabulary's one language is recorded, Bulgarian's "bg" say)
    language = None if prefixed or lite else vocab.language
    luke_tokenizer = write_luke_tokenizer(
        word_tokenizer, entities, output_dir, source_dir=tokenizer_path, language=language
    )
    state, config = release_state(model, luke_tokenizer, word_tokenizer.get_vocab(), vocab, rows)
    release = LukeForPretraining(config)
    release.load_state_dict(state)
    release.save_pretrained(output_dir)
    return (
        f"LukeForMaskedLM with {config.vocab_size} words and {config.entity_vocab_size} entities "
        f"(entity-aware attention), and {type(luke_tokenizer).__name__} files"
    )


def _export_task(
    archive, spec: TaskCheckpoint, archive_file: str, output_dir: str, tokenizer: Optional[str], lite: bool
) -> str:
    """A fine-tuned task archive as the matching transformers class (see `task_checkpoints`)."""
    from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder
    from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB

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
        entities, rows = checkpoint_entity_rows(reader_config.get("model_name"), state[table].size(0), lite)
    if rows is not None:
        state[table] = state[table][rows]
    config.entity_vocab_size = state[table].size(0)
    entity_aware_queries(state, config, "luke.")

    mode = spec.tokenizer_task if spec.task == "ner" or uses_markers(spec, reader_config) else None
    word_tokenizer = load_word_tokenizer(tokenizer_path)
    luke_tokenizer = write_luke_tokenizer(word_tokenizer, entities, output_dir, mode, source_dir=tokenizer_path)
    config.vocab_size = add_marker_rows(
        state, "luke.embeddings.word_embeddings.weight", [], luke_tokenizer, word_tokenizer.get_vocab()
    )
    labels = [model.vocab.get_token_from_index(i, "labels") for i in range(model.vocab.get_vocab_size("labels"))]
    out = {**config.to_dict(), "architectures": [spec.architecture]}
    if getattr(model, "regression", False):  # LukeForSequenceClassification with one score
        labels = ["LABEL_0"]
        out["problem_type"] = "regression"
    if spec.task not in ("squad", "multiple-choice"):
        out.update(id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    write_checkpoint(output_dir, out, state)
    return (
        f"{spec.architecture} with {len(labels)} labels and {config.entity_vocab_size} entities, "
        f"and {type(luke_tokenizer).__name__} files (task={mode})"
    )
