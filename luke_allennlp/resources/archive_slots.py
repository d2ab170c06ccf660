"""
Where an archive's config puts each component, and whether what it names may be built there.

allennlp builds a config as `FromParams` does: a section annotated with a registrable base class (`DatasetReader`,
`Lazy[Model]`, `Optional[List[TrainerCallback]]`, `Dict[str, TokenEmbedder]`) becomes the class its `type` names in
that base's registry, and that class's constructor annotations say what its own parameters become, down to the leaves.
But a dotted `type` is imported by `Registrable.resolve_class_name` whatever the slot, so a class registered as
something else (`allennlp.training.callbacks.tensorboard.TensorBoardCallback` as a `validation_dataset_reader`) was
built with the archive's parameters. `misplaced_types` walks a config the same way, from the root (`TrainModel`, whose
`from_partial_objects` names the top-level sections, and `evaluation`, the `Evaluator` that `allennlp evaluate` builds)
and yields every `type` that is not a class registered under its slot's base (a registered name of that registry, or
the module path of a class in it whose module is already loaded: nothing is imported to find out), and every dotted
`type` that it cannot place (in a parameter passed on as it is, or under a class whose constructor is not known).
"""

import inspect
import sys
from typing import Any, Callable, Dict, Iterator, Optional, Tuple, Union

# (where, the `type` named, the base class of its slot: None where the walk cannot place it)
Misplaced = Tuple[str, str, Optional[type]]
# Top-level sections that allennlp builds from an archive but `TrainModel` does not take.
EXTRA_SECTIONS = {"evaluation": "allennlp.evaluation.evaluator:Evaluator"}


def misplaced_types(config: Dict[str, Any], trusted: Callable[[str], bool]) -> Iterator[Misplaced]:
    """Every `type` of `config` that is not a class registered for its slot (see the module's doc), but those that
    `trusted` allows (the user's opt-in)."""
    from allennlp.commands.train import TrainModel

    walk = _Walk(trusted)
    root = {key: value for key, value in config.items() if key not in EXTRA_SECTIONS}
    yield from walk.component(root, TrainModel, "")
    for key, target in EXTRA_SECTIONS.items():
        if key in config:
            module, _, name = target.partition(":")
            yield from walk.argument(config[key], getattr(sys.modules.get(module) or _import(module), name), key)


def _import(module: str) -> Any:
    import importlib

    return importlib.import_module(module)


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def loaded_class(name: str) -> Optional[type]:
    """The class a dotted `name` denotes in a module already loaded (nothing imported), or None."""
    module_name, _, attribute = name.rpartition(".")
    module = sys.modules.get(module_name)
    found = vars(module).get(attribute) if module is not None else None  # (no module __getattr__: it may import)
    return found if isinstance(found, type) else None


def registered_as(name: str, base: type) -> Optional[Tuple[type, Optional[str]]]:
    """`(class, constructor name)` that `base.resolve_class_name(name)` gives if `name` is registered under `base`
    (by its registered name, or by the module path of a registered class already loaded), else None."""
    from allennlp.common.registrable import Registrable

    registry = Registrable._registry.get(base, {})
    if name in registry:
        return registry[name]
    found = loaded_class(name) if "." in name else None
    if found is not None and any(found is subclass for subclass, _ in registry.values()):
        return found, None  # (resolve_class_name builds a dotted name with its __init__)
    return None


def registrations(name: str) -> Iterator[type]:
    """The bases under which a (registered or dotted) `name` is registered."""
    from allennlp.common.registrable import Registrable

    for base in list(Registrable._registry):
        if registered_as(name, base) is not None:
            yield base


class _Walk:
    """`FromParams`'s construction, read without building: `argument` is `construct_arg`, `component` `from_params`."""

    def __init__(self, trusted: Callable[[str], bool]) -> None:
        self.trusted = trusted

    def argument(self, node: Any, annotation: Any, where: str) -> Iterator[Misplaced]:
        from allennlp.common.from_params import can_construct_from_params, remove_optional
        from allennlp.common.lazy import Lazy

        if node is None:
            return
        annotation = remove_optional(annotation)
        origin = getattr(annotation, "__origin__", None)
        args = getattr(annotation, "__args__", ())
        if hasattr(annotation, "from_params"):
            if isinstance(node, str):
                node = {"type": node}  # (allennlp: a string stands for {"type": it})
            if isinstance(node, dict):
                yield from self.component(node, annotation, where)
            else:
                yield from self.unplaced(node, where)
        elif annotation in (int, bool, str, float):
            return
        elif origin in _MAPPINGS and len(args) == 2 and can_construct_from_params(args[-1]) and isinstance(node, dict):
            for key, value in node.items():
                yield from self.argument(value, args[-1], _join(where, key))
        elif origin is tuple and all(can_construct_from_params(a) for a in args) and isinstance(node, list):
            for i, (item, item_annotation) in enumerate(zip(node, args)):
                yield from self.argument(item, item_annotation, _join(where, i))
        elif origin is Union:
            # allennlp tries each in turn and keeps the first that builds: acceptable if one of them accepts it all.
            first = None
            for alternative in args:
                if not _may_build(node, alternative):
                    continue
                found = list(self.argument(node, alternative, where))
                if not found:
                    return
                first = first if first is not None else found
            yield from first if first is not None else self.unplaced(node, where)
        elif origin is Lazy:
            yield from self.argument(node, args[0], where)
        elif origin in _ITERABLES and len(args) == 1 and can_construct_from_params(args[0]) and isinstance(node, list):
            for i, item in enumerate(node):
                yield from self.argument(item, args[0], _join(where, i))
        else:  # passed on as it is (`Any`, `Dict[str, Any]`, no annotation): nothing here is placed
            yield from self.unplaced(node, where)

    def component(self, node: Dict[str, Any], cls: type, where: str) -> Iterator[Misplaced]:
        from allennlp.common.registrable import Registrable

        rest = dict(node)
        constructor: Optional[Callable] = None
        if Registrable._registry.get(cls) is not None:  # a registrable base: `type` (or its default) picks the class
            name = rest.pop("type", getattr(cls, "default_implementation", None))
            if not isinstance(name, str):  # (none: allennlp refuses it before building anything)
                yield from self.unplaced(rest, where)
                return
            found = registered_as(name, cls)
            if found is None:
                if self.trusted(name):  # the user's opt-in: what it holds cannot be placed without importing it
                    yield from self.unplaced(rest, where)
                else:
                    yield _join(where, "type"), name, cls
                return
            cls, constructor_name = found
            if not hasattr(cls, "from_params"):  # (torch modules registered as activations: built from the rest)
                yield from self.unplaced(rest, where)
                return
            constructor = getattr(cls, constructor_name) if constructor_name else None
        elif "type" in rest:
            own = own_registration(cls, rest["type"])  # (`luke_allennlp.cli.registered_types`)
            if own is not None:
                rest.pop("type")
                constructor = getattr(cls, own[1]) if own[1] else None
        yield from self.parameters(rest, cls, constructor or cls.__init__, where)

    def parameters(self, node: Dict[str, Any], cls: type, constructor: Callable, where: str) -> Iterator[Misplaced]:
        from allennlp.common.from_params import infer_method_params

        if constructor is object.__init__:
            yield from self.unplaced(node, where)
            return
        rest = dict(node)
        for name, parameter in infer_method_params(cls, constructor).items():
            if (
                name == "self"
                or parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
                or name not in rest
            ):
                continue
            value = rest.pop(name)
            if isinstance(value, dict) and "_pretrained" in value:  # a module of another archive (its own check)
                yield from self.unplaced(value, _join(where, name))
            elif parameter.annotation is inspect.Parameter.empty:
                yield from self.unplaced(value, _join(where, name))
            else:
                yield from self.argument(value, parameter.annotation, _join(where, name))
        for key, value in rest.items():  # **kwargs passed on, or refused by allennlp (after building the others)
            yield from self.unplaced(value, _join(where, key))

    def unplaced(self, node: Any, where: str) -> Iterator[Misplaced]:
        """A value passed on as it is: a dotted `type` in it could only be built by something that imports it."""
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "type" and isinstance(value, str) and "." in value and not self.trusted(value):
                    yield _join(where, key), value, None
                else:
                    yield from self.unplaced(value, _join(where, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from self.unplaced(item, _join(where, i))


def own_registration(cls: type, name: Any) -> Optional[Tuple[type, Optional[str]]]:
    """(cls, constructor name) if `name` is registered for `cls` itself under one of its registrable bases."""
    from allennlp.common.registrable import Registrable

    if not isinstance(name, str):
        return None
    for base, names in Registrable._registry.items():
        if issubclass(cls, base) and name in names and names[name][0] is cls:
            return names[name]
    return None


def _may_build(node: Any, annotation: Any) -> bool:
    """Whether allennlp's `construct_arg` could build `node` as `annotation` (a union's other members are tried when
    it cannot: a string is no `Model`, a dict no `str`)."""
    from allennlp.common.from_params import remove_optional

    annotation = remove_optional(annotation)
    origin = getattr(annotation, "__origin__", None)
    if hasattr(annotation, "from_params"):
        return isinstance(node, (str, dict))
    if annotation in (int, bool):
        return type(node) in (int, bool)
    if annotation is float:
        return type(node) in (int, float)
    if annotation is str:
        return isinstance(node, str)
    if origin in _MAPPINGS:
        return isinstance(node, dict)
    if origin is tuple or origin in _ITERABLES:
        return isinstance(node, list)
    return True


def _collections() -> Tuple[set, set]:
    import collections.abc
    import typing

    mappings = {collections.abc.Mapping, typing.Mapping, typing.Dict, dict}
    iterables = {collections.abc.Iterable, typing.Iterable, typing.List, list, set, typing.Set}
    return mappings, iterables


_MAPPINGS, _ITERABLES = _collections()
