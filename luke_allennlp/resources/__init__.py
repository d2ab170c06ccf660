"""
Every file format the project reads or writes, with its reader and writer: what `luke_allennlp.data` reads and
`luke_allennlp.wikipedia` builds. Plain Python, above `luke_allennlp.modeling` and below every other package.
"""
