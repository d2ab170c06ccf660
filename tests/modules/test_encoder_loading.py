import dataclasses
import inspect

from luke_allennlp.models import LukePretraining
from luke_allennlp.modules.encoder_loading import EncoderLoading
from luke_allennlp.modules.token_embedders import LukeEmbedder


def test_the_embedder_and_pretraining_take_the_loading_options_as_defined():
    """allennlp reads a constructor's signature as its config schema, so both list the options; they must be
    EncoderLoading's, with its types and defaults."""
    for cls in (LukeEmbedder, LukePretraining):
        parameters = inspect.signature(cls.__init__).parameters
        for option in dataclasses.fields(EncoderLoading):
            parameter = parameters[option.name]
            assert parameter.annotation == option.type, (cls.__name__, option.name)
            expected = inspect.Parameter.empty if option.default is dataclasses.MISSING else option.default
            assert parameter.default == expected, (cls.__name__, option.name)


def test_loading_options_reach_the_encoder(tiny_luke_dir, tiny_roberta_dir):
    loading = EncoderLoading(
        str(tiny_roberta_dir),
        use_entity_aware_attention=False,
        entity_vocab_size=7,
        entity_emb_size=8,
        gradient_checkpointing=True,
        config_overrides={"hidden_dropout_prob": 0.3},
    )
    assert not loading.from_luke and EncoderLoading(str(tiny_luke_dir)).from_luke
    from luke_allennlp.modeling import LukeEncoder

    encoder = loading.load(LukeEncoder)
    assert encoder.entity_embeddings.entity_embeddings.weight.shape == (7, 8)
    assert not encoder.config.use_entity_aware_attention and encoder.config.hidden_dropout_prob == 0.3
    assert encoder.encoder.gradient_checkpointing
