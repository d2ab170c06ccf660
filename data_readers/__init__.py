"""Registered AllenNLP dataset readers for the LUKE tasks (one reader per module)."""
from data_readers.luke_conll2003 import LukeConll2003Reader

__all__ = ["LukeConll2003Reader"]
