"""Registered AllenNLP dataset readers for the LUKE tasks (one reader per module)."""
