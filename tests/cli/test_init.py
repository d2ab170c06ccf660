"""luke_allennlp/cli/__init__.py: the product's hooks, handed to the compatibility layer's installer by the plugin
entry, wrap allennlp's functions in the order the table gives, each once."""

import luke_allennlp.plugin  # noqa: F401  (installs the layer with the hooks)
from luke_allennlp.cli import HOOKS
from luke_allennlp_compat import hook as compat_hook
from luke_allennlp_compat.patch import marks


def behaviours(module):
    return [target.split(":")[0].rpartition(".")[2] for _, target in HOOKS[module]]


def test_the_plugin_entry_installs_the_product_hooks_in_order_once():
    import allennlp.commands.train as train
    import allennlp.training.util as training_util

    assert behaviours("allennlp.commands.train") == [
        "distributed",
        "output_lock",
        "config_checks",
        "devices",
        "input_lengths",
    ]
    assert behaviours("allennlp.training.util") == ["overwrite_guard", "output_lock"]
    wrapped = {f"luke_allennlp.cli.{name}" for name in ("distributed", "output_lock", "config_checks", "devices")}
    assert wrapped <= marks(train.train_model)
    assert {"luke_allennlp.cli.overwrite_guard", "luke_allennlp.cli.output_lock"} <= marks(
        training_util.create_serialization_dir
    )
    # The outermost wrapper is the last in the table: the devices are checked before anything else runs.
    assert train.train_model.__code__.co_name == "checked_train_model"
    before = train.train_model
    import luke_allennlp_compat

    luke_allennlp_compat.install(HOOKS)  # again (the start-up line, then the plugin entry): nothing wrapped twice
    for _, target in HOOKS["allennlp.commands.train"]:
        compat_hook.load(target)(train)
    assert train.train_model is before
