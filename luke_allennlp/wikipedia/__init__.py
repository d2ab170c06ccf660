"""
Building files from Wikipedia dumps, in plain Python (no AllenNLP): streaming a MediaWiki XML dump (`dump`, which also
writes small dumps: `write_dump`), wiki markup to text with link annotations (`markup`), redirects (`redirects`),
sentence splitting (`sentences`), the ordered process pool (`parallel`), the entity vocabulary
(`entity_vocab_builder`; mLUKE's multilingual one, `multilingual_entity_vocab`), the pretraining corpus (`corpus`, its
pages turned into rows by `corpus_rows`), the mention dictionary used for SQuAD's entity inputs and entity
disambiguation (`mention_dictionary`, its first stages in `mention_links`) and ED documents from linked articles
(`linked_documents`). Builds over dump parts, and the on-disk counts and title index that keep the builders' memory
bounded: `parts`. The formats these builders write, with their readers, are in `luke_allennlp.resources`; the
`allennlp build-*` commands in `luke_allennlp.commands` wrap the builders.
"""
