"""Repairs 3 and 5 (luke_allennlp_compat/cached_transformers.py, tokenizer_methods.py): allennlp's tokenizer and
indexer on transformers 5."""


def test_pretrained_transformer_tokenizer_and_indexer(tiny_luke_dir):
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    tokenizer = PretrainedTransformerTokenizer(str(tiny_luke_dir))
    tokens = tokenizer.tokenize("Hello world")
    assert [t.text_id for t in tokens] == [0, 31414, 232, 2]  # ids from the shared data's README
    assert [t.idx for t in tokens] == [None, 0, 6, None]
