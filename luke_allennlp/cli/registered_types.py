"""
A registered component accepts its own `type`.

allennlp resolves `"type"` only where a parameter is annotated with a registrable base class (`Checkpointer`); where it
is annotated with the concrete class (`Lazy[LukeCheckpointer]`, so that a config without `type` gets that class, not
the base's default), `"type": "luke_checkpointer"` is left in the parameters and refused ("Extra parameters passed to
LukeCheckpointer: {'type': ...}"), although it names that very class. `from_params` of a class that is not a
registrable base drops a `type` that names the class itself under one of its bases (and calls the constructor that
name was registered with); any other `type` is still refused.
"""

import types

from luke_allennlp.resources.archive_slots import own_registration
from luke_allennlp_compat.patch import repaired, replace


def repair_from_params(module: types.ModuleType) -> None:
    from_params = module.FromParams.from_params
    if repaired(from_params):
        return
    original = from_params.__func__

    def repaired_from_params(cls, params, constructor_to_call=None, constructor_to_inspect=None, **extras):
        from allennlp.common.params import Params
        from allennlp.common.registrable import Registrable

        if (
            isinstance(params, Params)
            and constructor_to_call is None
            and Registrable._registry.get(cls) is None
            and "type" in params
        ):
            registration = own_registration(cls, params.get("type"))
            if registration is not None:
                params.pop("type")
                if registration[1]:  # registered with a constructor other than __init__
                    constructor_to_call = constructor_to_inspect = getattr(cls, registration[1])
        return original(cls, params, constructor_to_call, constructor_to_inspect, **extras)

    repaired_from_params.__luke_allennlp_compat__ = frozenset({__name__})  # type: ignore[attr-defined]  (read through the bound method)
    replace(module.FromParams, "from_params", classmethod(repaired_from_params))
