"""
Every file format the project reads or writes, with its reader and writer: what `luke_allennlp.data` reads and
`luke_allennlp.wikipedia` builds. What a checkpoint's tokenizer saved (`tokenizer_config.json`, its entity vocabulary,
special entities and mention length; the model's own files are `luke_allennlp.modeling`'s), entity vocabularies (a
checkpoint's included), tokenizers (LUKE, mLUKE, LUKE-Japanese: loaded for pre-split words, written over a word
tokenizer), task checkpoint specs and the weights of a release, the text and JSON of task files, the mention dictionary
(`mentions/`: one interface, JSON and SQLite backends, name matching), page titles, the pretraining corpus directory,
the ED benchmark files; output safety (one writer, atomic replacement, a full disk), archive extraction and archive
configs. Plain Python, above `luke_allennlp.modeling` and below every other package.
"""
