"""
The mention dictionary (names linked on each Wikipedia page, each name's link probability and candidate entities) and
how names are found in text. One interface, `MentionDictionaryBase` (`base`), with two backends: `MentionDictionary`,
the version-2 JSON file read whole (`json_dictionary`), and `MentionStore`, the SQLite file queried lazily (`store`);
`MentionDictionary.from_file` opens either. `name_matcher` defines what a name occurrence is. The dictionary is built
from a dump by `luke_allennlp.wikipedia.mention_dictionary`.
"""
