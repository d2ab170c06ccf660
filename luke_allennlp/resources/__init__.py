"""
Every file format the project reads or writes, its reader and its writer: entity vocabularies (a checkpoint's
included), tokenizers (LUKE, mLUKE, LUKE-Japanese: loaded for pre-split words, written over a word tokenizer), task
checkpoint specs and the weights of a release, and the text and JSON of task files. Above `modeling`, below `data`.
"""
