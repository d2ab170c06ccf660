"""Repairs 3 and 5 (luke_allennlp_compat/cached_transformers.py, tokenizer_methods.py): allennlp's tokenizer and
indexer on transformers 5."""


def test_pretrained_transformer_tokenizer_and_indexer(tiny_luke_dir):
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    tokenizer = PretrainedTransformerTokenizer(str(tiny_luke_dir))
    tokens = tokenizer.tokenize("Hello world")
    assert [t.text_id for t in tokens] == [0, 31414, 232, 2]  # ids from the shared data's README
    assert [t.idx for t in tokens] == [None, 0, 6, None]


def test_build_inputs_with_special_tokens_puts_them_where_the_tokenizer_does(tiny_roberta_dir, tiny_xlnet_dir):
    from transformers import AutoTokenizer

    roberta = AutoTokenizer.from_pretrained(str(tiny_roberta_dir))
    first, second = [31414, 232], [20920]
    assert roberta.build_inputs_with_special_tokens(first) == [0, 31414, 232, 2]  # <s> ... </s>
    assert roberta.build_inputs_with_special_tokens(first, second) == [0, 31414, 232, 2, 2, 20920, 2]
    xlnet = AutoTokenizer.from_pretrained(str(tiny_xlnet_dir))
    sep, cls = xlnet.sep_token_id, xlnet.cls_token_id
    assert xlnet.build_inputs_with_special_tokens([7, 8], [9]) == [7, 8, sep, 9, sep, cls]  # XLNet: <cls> last
