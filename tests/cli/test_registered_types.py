"""Repair 18: a registered component accepts its own `type` where a parameter is annotated with its class."""

import pytest
from allennlp.common import FromParams, Lazy, Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.registrable import Registrable

import data_readers  # noqa: F401  (and the readers)
import luke_allennlp.plugin  # noqa: F401  (registers the project's components)
from luke_allennlp.cli.registered_types import own_registration
from luke_allennlp.training import LukeCheckpointer, LukeGradientDescentTrainer

PROJECT = ("luke_allennlp", "luke_allennlp_readers", "data_readers")


class Holder(FromParams):
    """A parameter annotated as the trainer's `checkpointer` is."""

    def __init__(self, checkpointer: Lazy[LukeCheckpointer]) -> None:
        self.checkpointer = checkpointer


def test_the_luke_checkpointer_accepts_its_own_type(tmp_path):
    """The trainer's `checkpointer` is `Lazy[LukeCheckpointer]`: `{"type": "luke_checkpointer", ...}` was refused as
    an extra parameter."""
    params = Params({"checkpointer": {"type": "luke_checkpointer", "keep_most_recent_by_count": 3}})
    checkpointer = Holder.from_params(params).checkpointer.construct(serialization_dir=str(tmp_path))
    assert type(checkpointer) is LukeCheckpointer and checkpointer._keep_most_recent_by_count == 3
    untyped = Holder.from_params(Params({"checkpointer": {}})).checkpointer.construct(serialization_dir=str(tmp_path))
    assert type(untyped) is LukeCheckpointer  # no `type`: still this class, not allennlp's default
    with pytest.raises(ConfigurationError, match="Extra parameters passed to LukeCheckpointer"):
        LukeCheckpointer.from_params(Params({"type": "default", "serialization_dir": str(tmp_path)}))


def test_a_registered_constructor_is_called_by_its_name():
    """The trainer is registered with `from_partial_objects`: its own type calls that constructor."""
    assert own_registration(LukeGradientDescentTrainer, "luke_gradient_descent") == (
        LukeGradientDescentTrainer,
        "from_partial_objects",
    )


def test_every_registered_component_of_the_project_names_itself():
    """Every class this project registers is accepted with each name it is registered under, whatever annotation
    (base or concrete class) a parameter gives it."""
    checked = 0
    for names in Registrable._registry.values():
        for name, (cls, _) in names.items():
            if cls.__module__.startswith(PROJECT):
                assert own_registration(cls, name) is not None, (cls, name)
                checked += 1
    assert checked >= 20
