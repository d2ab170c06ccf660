"""
A config's mistakes are found before any work, and `-o` does what it says.

allennlp checks a config's values as it builds each object: the dataset reader first, the trainer last, after the
data are read and the vocabulary built. A string for a number (`"num_epochs": "2"`) stopped `allennlp train` minutes
later with "Expected num_epochs to be a int." and no path; a negative batch size with "__len__() should return >= 0";
`num_epochs: 0` read all the data and then failed naming `best.th`. Here `allennlp train` checks the whole config
before it creates the serialization directory (`check_config`): each section's `type` is resolved as allennlp would,
and every key is checked against the constructor it goes to (`infer_method_params`), recursively:

- a key the constructor does not take is refused (`trainer.num_epoch: not a parameter of the Trainer
  'luke_gradient_descent'`); a trainer's keys are always checked, since allennlp's `gradient_descent` takes `**kwargs`
  and ignored unknown ones silently;
- a value of the wrong type (int, float, bool, str, also inside `Optional`, `Union`, `List`, `Dict`, `Lazy`) is
  refused with its path (`trainer.num_epochs: expected an integer, not the string "2"`);
- sizes and counts (`batch_size`, `num_epochs`, `num_gradient_accumulation_steps`, `batches_per_epoch`,
  `max_instances_in_memory`, `max_tokens`) must be at least 1, other integers named `*_size`, `*_length`, `num_*`,
  `max_*` must not be negative (unless their default is, e.g. a -1 that means "none").

Parameters that a class's own `from_params` reads, or annotations that are not plain types, are left to allennlp.

`-o` (`allennlp.common.params.with_overrides`): a key that names nothing in the config ("overrides dict contains unused
keys") is refused with the missing part named; a section given whole (`-o '{"trainer": {"num_epoch": 1}}'`) replaces
the config's section, as allennlp documents, and where that changes its `type` (here `luke_gradient_descent` to the
default `gradient_descent`) a one-line warning says so and how to change single keys.
"""

import difflib
import inspect
import json
import types
import typing
from typing import Any, Dict, Optional

from luke_allennlp.cli._patch import logger, repaired, replace

AT_LEAST_ONE = {
    "batch_size",
    "num_epochs",
    "num_gradient_accumulation_steps",
    "batches_per_epoch",
    "max_instances_in_memory",
    "max_tokens",
}
TRAINER_ALIASES = {"run_sanity_checks"}  # allennlp's `gradient_descent` still reads its old name


class ConfigError(ValueError):
    """A config value that cannot work, found before the work starts."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "an object"
    return repr(value)


def check_config(config: Dict[str, Any]) -> None:
    """Raises a `ConfigError` for the first key of `config` (a training config, overrides applied) that allennlp would
    refuse or ignore, or whose value cannot work (see the module's doc)."""
    from allennlp.commands.train import TrainModel

    _check_object(config, TrainModel, "", open_ended=True)  # `train` itself reads other top-level keys (seeds, ...)


def _check_object(value: Any, cls: type, path: str, open_ended: bool = False) -> None:
    from allennlp.common import Registrable
    from allennlp.common.checks import ConfigurationError
    from allennlp.common.from_params import FromParams, infer_method_params
    from allennlp.training.trainer import Trainer

    if isinstance(value, str) and issubclass(cls, Registrable):
        value = {"type": value}
    if not isinstance(value, dict):
        return
    subclass, constructor_name, name = cls, None, None
    if issubclass(cls, Registrable) and cls in Registrable._registry:
        name = value.get("type", cls.default_implementation)
        if name is None:
            return
        try:
            subclass, constructor_name = cls.resolve_class_name(name)
        except ConfigurationError:
            known = ", ".join(sorted(cls.list_available()))
            raise ConfigError(f"{path}type: {name!r} is not a registered {cls.__name__} (known: {known})") from None
    if getattr(subclass.from_params, "__func__", None) is not FromParams.from_params.__func__:
        return  # a class that reads its own parameters
    constructor = getattr(subclass, constructor_name) if constructor_name else subclass.__init__
    parameters = infer_method_params(subclass, constructor)
    kinds = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    known = {key for key, p in parameters.items() if p.kind not in kinds and key != "self"}
    open_ended = open_ended or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if issubclass(subclass, Trainer):  # its **kwargs go to __init__, which ignores what it does not know
        for klass in subclass.__mro__:
            if "__init__" in vars(klass):
                signature = inspect.signature(klass.__init__).parameters.items()
                known |= {k for k, p in signature if p.kind not in kinds and k != "self"}
        known, open_ended = known | TRAINER_ALIASES, False
    what = f"the {cls.__name__} {name!r}" if name else cls.__name__
    for key, item in value.items():
        if key == "type" and issubclass(cls, Registrable):  # (also a subclass named as annotation: left to allennlp)
            continue
        if key not in known:
            if open_ended:
                continue
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"its parameters: {', '.join(sorted(known))}"
            raise ConfigError(f"{path}{key}: not a parameter of {what} ({hint})")
        parameter = parameters.get(key)
        if parameter is None:
            continue
        _check_value(item, parameter.annotation, f"{path}{key}")
        _check_size(item, key, parameter.default, f"{path}{key}")


def _check_size(value: Any, key: str, default: Any, path: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        return
    if (key in AT_LEAST_ONE or key.endswith("_batch_size")) and value < 1:
        raise ConfigError(f"{path}: must be at least 1, not {value}")
    sized = key.endswith(("_size", "_length")) or key.startswith(("num_", "max_"))
    default_negative = isinstance(default, (int, float)) and not isinstance(default, bool) and default < 0
    if sized and value < 0 and not default_negative:
        raise ConfigError(f"{path}: must not be negative, not {value}")


def _check_value(value: Any, annotation: Any, path: str) -> None:
    from allennlp.common.lazy import Lazy

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is inspect.Parameter.empty or annotation is Any or isinstance(annotation, str):
        return
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            _check_value(value, members[0], path)
        elif all(m in (int, float, bool, str) for m in members) and not any(_simple(value, m) for m in members):
            names = " or ".join(_name(m) for m in members)
            raise ConfigError(f"{path}: expected {names}, not {_describe(value)}")
        return
    if annotation in (int, float, bool, str):
        if not _simple(value, annotation):
            raise ConfigError(f"{path}: expected {_name(annotation)}, not {_describe(value)}")
        return
    if origin is Lazy or annotation is Lazy:
        if args:
            _check_value(value, args[0], path)
        return
    if isinstance(annotation, type) and hasattr(annotation, "from_params"):
        _check_object(value, annotation, f"{path}.")
        return
    if origin in (list, typing.List) and args and isinstance(value, list):
        for i, item in enumerate(value):
            _check_value(item, args[0], f"{path}[{i}]")
    elif origin in (dict, typing.Dict) and len(args) == 2 and isinstance(value, dict):
        for key, item in value.items():
            _check_value(item, args[1], f"{path}.{key}")


def _simple(value: Any, kind: type) -> bool:
    """Whether allennlp's `construct_arg` takes `value` for a parameter of type `kind`."""
    if kind in (int, bool):
        return type(value) in (int, bool)
    if kind is float:
        return type(value) in (int, float)
    return type(value) is str


def _name(kind: type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[kind]


def _missing(original: Any, key: str) -> Optional[str]:
    """The first part of the dotted `key` that `original` lacks."""
    parts, node = key.split("."), original
    for i, part in enumerate(parts):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return ".".join(parts[: i + 1])
    return None


def repair_params(module: types.ModuleType) -> None:
    with_overrides = module.with_overrides
    if repaired(with_overrides):
        return

    def patched_with_overrides(original: Any, overrides_dict: Dict[str, Any], prefix: str = "") -> Any:
        if isinstance(original, dict):
            for key, new in overrides_dict.items():
                old = original.get(key)
                if (
                    "." not in key
                    and isinstance(old, dict)
                    and isinstance(new, dict)
                    and old.get("type") != new.get("type")
                ):
                    logger.warning(
                        "-o replaces the whole %r section, so its type %s becomes %s and its other keys are dropped; "
                        "to change single keys write them dotted, e.g. -o '{\"%s.%s\": ...}'",
                        prefix + key,
                        repr(old["type"]) if "type" in old else "(the default)",
                        repr(new["type"]) if "type" in new else "the default",
                        prefix + key,
                        next(iter(new), "key"),
                    )
        try:
            return with_overrides(original, overrides_dict, prefix)
        except ValueError as error:
            if prefix or not str(error).startswith("overrides dict contains unused keys"):
                raise
            for key in overrides_dict:
                missing = _missing(original, key)
                if missing is not None and "." in key:
                    parent = missing.rsplit(".", 1)[0] if "." in missing else ""
                    raise ConfigError(
                        f"-o {key!r}: the config has no {missing!r} to override"
                        + (f" (give the whole section instead: -o '{{\"{missing}\": {{...}}}}')" if not parent else "")
                    ) from None
            raise

    replace(module, "with_overrides", patched_with_overrides)


def repair_train(module: types.ModuleType) -> None:
    train_model = module.train_model
    if repaired(train_model):
        return

    def patched_train_model(params: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            check_config(params.as_dict(quiet=True))
        except ConfigError:
            raise
        except Exception:  # a class the checks do not understand: allennlp will judge it as it builds it
            logger.debug("config checks stopped early", exc_info=True)
        return train_model(params, *args, **kwargs)

    replace(module, "train_model", patched_train_model)
