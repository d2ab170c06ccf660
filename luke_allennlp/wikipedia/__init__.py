"""
Wikipedia dump processing for LUKE, in plain Python (no AllenNLP): streaming a MediaWiki XML dump
(`dump`, which also writes small dumps: `write_dump`), wiki markup to text with link annotations (`markup`),
titles and namespaces (`titles`), redirects (`redirects`), sentence splitting (`sentences`), the ordered
process pool (`parallel`), the entity vocabulary (`entity_vocab_builder`; mLUKE's
multilingual one, `multilingual_entity_vocab`), the pretraining corpus (`corpus`)
and the mention dictionary used for SQuAD's entity inputs and entity disambiguation (`mention_dictionary`; its
SQLite file, queried lazily, `mention_store`). Builds over dump parts, and the on-disk counts and title index
that keep the builders' memory bounded: `parts`. The `allennlp build-*` commands in `luke_allennlp.commands`
wrap them.
"""

from luke_allennlp.wikipedia.titles import normalize_title

__all__ = ["normalize_title"]
