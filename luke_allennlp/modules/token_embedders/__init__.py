from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder

__all__ = ["LukeEmbedder"]
