"""The LUKE model in plain PyTorch. Imports no AllenNLP; needs only torch (and safetensors /
huggingface_hub for loading checkpoints)."""

from luke_allennlp.modeling.configuration import LukeConfig
from luke_allennlp.modeling.encoder import LukeEncoder, LukeEncoderOutput
from luke_allennlp.modeling.pretraining import LukeForPretraining, LukeForPretrainingOutput

__all__ = ["LukeConfig", "LukeEncoder", "LukeEncoderOutput", "LukeForPretraining", "LukeForPretrainingOutput"]
