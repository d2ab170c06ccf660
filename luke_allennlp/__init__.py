"""
LUKE as an AllenNLP plugin.

`luke_allennlp.modeling` is the model in plain PyTorch: it imports torch and transformers only. Importing this
package imports nothing else: `luke_allennlp.plugin` (the module `.allennlp_plugins` names) installs the
compatibility layer and registers the components for AllenNLP. The dataset readers live in the top-level package
`data_readers`, which imports `luke_allennlp.plugin` and not the reverse (`import data_readers` registers
everything). Installed, that folder is the package `luke_allennlp_readers` (setup.py), so that no generic top-level
name lands in site-packages.
"""
