"""
LUKE as an AllenNLP plugin.

`luke_allennlp.modeling` is the model in plain PyTorch and needs no AllenNLP. When AllenNLP is installed,
importing this package (which `allennlp` does through `.allennlp_plugins`) registers the components.
"""
import importlib.util

import luke_allennlp_compat

luke_allennlp_compat.install()

if importlib.util.find_spec("allennlp") is not None:
    from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder  # noqa: F401
