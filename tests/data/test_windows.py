import pytest
from transformers import BertTokenizerFast, RobertaTokenizerFast, XLNetTokenizerFast

from luke_allennlp.data.windows import PairLayout, QuestionPassageEncoder, window_starts


@pytest.fixture(scope="module")
def roberta(shared_data):
    source = shared_data / "tokenizers" / "roberta-base"
    return RobertaTokenizerFast(str(source / "vocab.json"), str(source / "merges.txt"))


def test_pair_layouts(roberta, tmp_path):
    layout = PairLayout.of(roberta)
    assert (layout.prefix, layout.middle, layout.suffix) == ((0,), (2, 2), (2,))  # <s> q </s></s> p </s>
    ids, types, q_at, p_at = layout.build([10, 11], [20])
    assert ids == [0, 10, 11, 2, 2, 20, 2] and types == [0] * 7 and (q_at, p_at) == (1, 5)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    bert = BertTokenizerFast(str(vocab))
    ids, types, _, _ = PairLayout.of(bert).build([5], [6, 6])
    assert ids == [2, 5, 3, 6, 6, 3] and types == [0, 0, 0, 1, 1, 1]  # [CLS] q [SEP] p [SEP], segments 0/1


def test_window_starts_follow_doc_stride():
    assert window_starts(10, 10, 3) == [0]
    assert window_starts(11, 10, 3) == [0, 3]
    assert window_starts(20, 8, 4) == [0, 4, 8, 12]  # the last window [12, 20) reaches the end


def test_windows_cover_the_passage_and_map_characters(roberta):
    passage = " ".join(f"word{i}" for i in range(300))
    encoder = QuestionPassageEncoder(roberta, max_seq_length=64, doc_stride=20, max_question_length=8)
    encoded = encoder.encode("Which word comes after word12 in this long question text?", passage)
    assert encoded.question_truncated > 0 and len(encoded.question.ids) == 8
    covered = set()
    for window in encoded.windows:
        assert len(window.input_ids) <= 64 and len(window.token_type_ids) == len(window.input_ids)
        assert window.input_ids[window.question_start : window.question_start + 8] == encoded.question.ids
        piece = encoded.passage.ids[window.passage_begin : window.passage_end]
        assert window.input_ids[window.passage_start : window.passage_start + len(piece)] == piece
        covered.update(range(window.passage_begin, window.passage_end))
    assert covered == set(range(len(encoded.passage.ids)))
    assert [w.passage_begin for w in encoded.windows][:3] == [0, 20, 40]
    start = passage.index("word150")
    first, last = encoded.passage.char_span_to_subwords(start, start + len("word150"))
    holding = [w for w in encoded.windows if w.contains(first, last)]
    assert holding and all(
        roberta.decode(w.input_ids[w.position(first) : w.position(last) + 1]).strip() == "word150" for w in holding
    )


def test_xlnet_puts_the_passage_first_and_special_tokens_last(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the cat number {i} sat on the mat near house {i % 7}" for i in range(200)))
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(tmp_path / "spiece"),
        vocab_size=40,
        user_defined_symbols=["<sep>", "<cls>", "<pad>", "<mask>"],
        minloglevel=2,
    )
    tokenizer = XLNetTokenizerFast.from_pretrained(str(tmp_path))  # reads spiece.model
    encoded = QuestionPassageEncoder(tokenizer, max_seq_length=32, doc_stride=8, max_question_length=8).encode(
        "where sat the cat", "the cat sat on the mat near house 3"
    )
    window = encoded.windows[0]
    assert window.passage_start == 0 and window.question_start > 0
    assert window.input_ids[-2:] == [tokenizer.sep_token_id, tokenizer.cls_token_id]
    assert window.token_type_ids[0] == 0 and window.token_type_ids[window.question_start] == 1
    assert window.token_type_ids[-1] == 2  # XLNet's segment id of <cls>
