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

The trainer's optimizer and learning-rate scheduler are built on a one-parameter stand-in (`check_schedule`), so that
what torch refuses (`optimizer.lr: -1`, `betas` of 1.5) is said before the data are read, and so is a scheduler that
needs the number of batches per epoch where the data loader cannot know it (`max_instances_in_memory` without
`batches_per_epoch`: "float * NoneType" once the data were read).

`-o` (`allennlp.common.params.with_overrides`): a key that names nothing in the config ("overrides dict contains unused
keys") is refused with the missing part named; a section given whole (`-o '{"trainer": {"num_epoch": 1}}'`) replaces
the config's section, as allennlp documents, and where that changes its `type` (here `luke_gradient_descent` to the
default `gradient_descent`) a one-line warning says so and how to change single keys. Both name `-o` only for the keys
the command line's `-o` gave (an archive's own overrides, loading it, are said as such). `-o` must be a JSON (or
Jsonnet) object: `-o '[1,2]'` was an `AttributeError`, and `-o 'trainer.num_epochs=1'` "1:19: not a binary operator:
=" (`parse_overrides`). `allennlp evaluate -o` and `predict -o` check the sections they change as `train` does
(once `with_overrides` applied them, whatever loads the config: a misspelt key gets its did-you-mean).

Jsonnet aborts the whole process (a C++ exception it does not catch) where `std.parseJson` or `std.parseYaml` reads a
number beyond a double's range, or YAML's `nan` or `inf`: a config that reads an environment variable that way is
refused with one line naming the variable before Jsonnet runs (`check_jsonnet_aborts`).
"""

import contextlib
import copy
import difflib
import inspect
import json
import logging
import math
import os
import re
import sys
import types
import typing
from typing import Any, Dict, Iterable, List, Optional, Set

from luke_allennlp.cli import logger
from luke_allennlp_compat.patch import repaired, replace

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
    """A config value that cannot work, found before the work starts (`path`: the config key it is about)."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.path = path if path is not None else message.split(":", 1)[0]


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
    check_schedule(config)


def check_sections(config: Dict[str, Any], keys: Iterable[str]) -> None:
    """The checks of `check_config` on the top-level sections of `config` (a training config, an archive's) that
    the dotted `keys` change (an evaluation's `-o`)."""
    from allennlp.commands.train import TrainModel

    for section in sorted({key.split(".", 1)[0] for key in keys}):
        if section in config:
            _check_object({section: config[section]}, TrainModel, "", open_ended=True)


def check_schedule(config: Dict[str, Any]) -> None:
    """The trainer's optimizer and learning-rate scheduler, built on a one-parameter stand-in: a `ConfigError` for
    a value they refuse, or for a scheduler that needs the batches per epoch that the data loader cannot count."""
    trainer = config.get("trainer")
    if not isinstance(trainer, dict):
        return
    import torch
    from allennlp.common import Params
    from allennlp.training.learning_rate_schedulers import LearningRateScheduler
    from allennlp.training.optimizers import Optimizer

    optimizer_config = trainer.get("optimizer", {})
    optimizer_config = {"type": optimizer_config} if isinstance(optimizer_config, str) else optimizer_config
    if not isinstance(optimizer_config, dict):
        return
    groups = optimizer_config.get("parameter_groups") or []
    base = {key: value for key, value in optimizer_config.items() if key != "parameter_groups"}
    base.pop("requires_grad", None)
    weight = torch.nn.Parameter(torch.zeros(1))

    def build(options: Dict[str, Any], path: str) -> Any:
        with _quiet("allennlp.training.optimizers"):
            try:
                return Optimizer.from_params(
                    model_parameters=[("weight", weight)], params=Params(copy.deepcopy(options))
                )
            except ValueError as error:  # (torch's own checks of its values; other errors are allennlp's to report)
                message = " ".join(str(error).split())
                key = next((k for words, k in OPTIMIZER_VALUES.items() if words in message and k in options), None)
                path = f"{path}.{key}" if key else path
                raise ConfigError(f"{path}: {message}", path) from None

    try:
        optimizer = build(base, "trainer.optimizer")
    except ConfigError:
        raise
    except Exception:  # (a value of a type torch compares with nothing, a class built otherwise: allennlp's)
        return
    for i, group in enumerate(groups):
        if isinstance(group, (list, tuple)) and len(group) == 2 and isinstance(group[1], dict):
            options = {k: v for k, v in group[1].items() if k != "requires_grad"}  # (allennlp's, not torch's)
            with contextlib.suppress(TypeError, AttributeError):
                build({**base, **options}, f"trainer.optimizer.parameter_groups[{i}]")
    schedule = trainer.get("learning_rate_scheduler")
    schedule = {"type": schedule} if isinstance(schedule, str) else schedule
    if not isinstance(schedule, dict):
        return
    num_epochs = trainer.get("num_epochs", 20)
    loader = config.get("data_loader") if isinstance(config.get("data_loader"), dict) else {}
    unknown = loader.get("max_instances_in_memory") is not None and loader.get("batches_per_epoch") is None
    unknown = unknown and loader.get("type", "multiprocess") == "multiprocess"

    def scheduled(steps: Optional[int]) -> Optional[Exception]:
        from allennlp.common.checks import ConfigurationError

        try:
            LearningRateScheduler.from_params(
                params=Params(copy.deepcopy(schedule)),
                optimizer=optimizer,
                num_epochs=num_epochs,
                num_steps_per_epoch=steps,
            )
        except (ValueError, TypeError, ZeroDivisionError, ConfigurationError) as error:
            return error
        return None

    failed = scheduled(None if unknown else 100)
    if failed is None:
        return
    name = schedule.get("type", "the default")
    if unknown and scheduled(100) is None:
        raise ConfigError(
            f"trainer.learning_rate_scheduler: {name!r} needs the number of batches per epoch, which "
            "data_loader.max_instances_in_memory leaves unknown (the data are read lazily): set "
            "data_loader.batches_per_epoch, or leave max_instances_in_memory out",
            "trainer.learning_rate_scheduler",
        )
    if not isinstance(failed, TypeError):  # (a TypeError of another cause is allennlp's to report)
        raise ConfigError(f"trainer.learning_rate_scheduler: {' '.join(str(failed).split())}")


# The words of torch's refusals -> the optimizer's parameter they are about.
OPTIMIZER_VALUES = {"learning rate": "lr", "epsilon": "eps", "beta": "betas", "weight_decay": "weight_decay"}
OPTIMIZER_VALUES.update({"momentum": "momentum", "dampening": "dampening", "alpha": "alpha", "lr_decay": "lr_decay"})


@contextlib.contextmanager
def _quiet(name: str) -> Any:
    """The logger `name` silenced (a stand-in's "Number of trainable parameters: 1")."""
    log = logging.getLogger(name)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


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
            raise ConfigError(
                f"{path}type: {name!r} is not a registered {cls.__name__} (known: {known})", f"{path}type"
            ) from None
    if getattr(subclass.from_params, "__func__", None) is not FromParams.from_params.__func__:
        return  # a class that reads its own parameters
    constructor = getattr(subclass, constructor_name) if constructor_name else subclass.__init__
    parameters = infer_method_params(subclass, constructor)
    kinds = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    known = {key for key, p in parameters.items() if p.kind not in kinds and key != "self"}
    open_ended = open_ended or _takes_any_key(subclass, constructor)
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
            raise ConfigError(f"{path}{key}: not a parameter of {what} ({hint})", f"{path}{key}")
        parameter = parameters.get(key)
        if parameter is None:
            continue
        _check_value(item, parameter.annotation, f"{path}{key}")
        _check_size(item, key, parameter.default, f"{path}{key}")


def _takes_any_key(cls: type, constructor: Any) -> bool:
    """Whether the constructor takes keys it does not name: its `**kwargs` reach a constructor that takes `**kwargs`
    of its own (allennlp hands a subclass's `**kwargs` to its first `FromParams` base, as `infer_method_params`
    says: the readers' `**kwargs` end at `DatasetReader`, whose keys are known)."""
    from allennlp.common.from_params import FromParams

    while True:
        if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in inspect.signature(constructor).parameters.values()):
            return False
        base = next((c for c in cls.__mro__[1:] if issubclass(c, FromParams)), None)
        if base is None or base is FromParams:
            return True
        cls, constructor = base, base.__init__


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


_COMMAND_LINE_KEYS: Dict[str, Set[str]] = {}  # a command line's `-o` -> its keys, once parsed


def from_command_line(key: str) -> bool:
    """Whether this process's command line's `-o` gave `key` (as parsed by `parse_overrides`)."""
    return key in _COMMAND_LINE_KEYS.get(_command_line_overrides() or "", ())


def _command_line_overrides() -> Optional[str]:
    """The value of `-o` / `--overrides` on this process's command line (the last one), if any."""
    value = None
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg in ("-o", "--overrides") and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--overrides="):
            value = arg.split("=", 1)[1]
    return value


def _override_origin(key: str) -> str:
    """How to name the override `key` in a message: `-o 'key'` where the command line gave it, else the override
    made while loading an archive (its bundled files), or by a program."""
    if from_command_line(key):
        return f"-o {key!r}"
    from luke_allennlp.resources.archive_config import loading

    archive = loading()
    return f"{archive.archive}: the override {key!r} made loading it (not -o)" if archive else f"the override {key!r}"


KEY_EQUALS_VALUE = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*[=:]\s*(.+?)\s*")


def _not_an_object(serialized: str, what: str) -> ConfigError:
    example = '{"trainer.num_epochs": 1}'
    written = KEY_EQUALS_VALUE.fullmatch(serialized)
    if written:  # `-o trainer.num_epochs=1`: the object it means
        try:
            value = json.loads(written.group(2))
        except ValueError:
            value = written.group(2)
        example = json.dumps({written.group(1): value})
    return ConfigError(
        f"-o {serialized!r} is {what}: -o takes a JSON (or Jsonnet) object of settings, e.g. -o '{example}'", "-o"
    )


# Jsonnet (0.22) aborts the process where std.parseJson / std.parseYaml meet a number beyond a double's range, or
# YAML's nan / inf: a C++ exception it does not catch ("Something went wrong during jsonnet_evaluate_snippet").
PARSE_CALL = re.compile(r"std\.parse(?:Json|Yaml)\s*\(")
EXTERNAL_VARIABLE = re.compile(r"""std\.extVar\s*\(\s*(['"])([^'"]+)\1\s*\)""")
PARSED_LITERAL = re.compile(r"""std\.parse(?:Json|Yaml)\s*\(\s*(['"])((?:\\.|(?!\1).)*)\1\s*\)""")
COMPUTED_EXTERNAL_VARIABLE = re.compile(r"""std\.extVar\s*\(\s*[^\s'"]""")
STRING = re.compile(r"""(['"])([A-Za-z_][A-Za-z0-9_]*)\1""")
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
YAML_NON_FINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|infinity)(?![\w.])")
IMPORT = re.compile(r"""\bimport\s+(['"])([^'"]+)\1""")


def _aborts(value: str) -> Optional[str]:
    """What in `value` would abort Jsonnet's std.parseJson / parseYaml (None: nothing)."""
    for token in NUMBER.findall(value):
        if math.isinf(float(token)):
            return f"the number {token}, beyond a double's range"
    found = YAML_NON_FINITE.search(value)
    return f"YAML's {found.group(0)}" if found else None


def _sources(filename: str, text: str, limit: int = 50) -> List[str]:
    """`text` and the files it imports, recursively (as far as they exist)."""
    texts, queue, seen = [], [(filename, text)], set()
    while queue and len(texts) < limit:
        name, source = queue.pop()
        texts.append(source)
        for _, imported in IMPORT.findall(source):
            path = os.path.normpath(os.path.join(os.path.dirname(name or "."), imported))
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    queue.append((path, open(path, encoding="utf-8").read()))
    return texts


def check_jsonnet_aborts(filename: str, text: str, ext_vars: Optional[Dict[str, str]], where: str) -> None:
    """Raises a `ConfigError` where evaluating `text` (the config `filename`, or `-o`) would abort the process: where
    a source (it, or a file it imports) calls std.parseJson / parseYaml, a literal it parses, or an external variable
    it reads, holding a number out of range or YAML's nan / inf. A variable is read where `std.extVar` names it, or,
    where a source calls `std.extVar` with a computed name, where any source names it in a string."""
    sources = _sources(filename, text)
    if not any(PARSE_CALL.search(source) for source in sources):
        return
    for source in sources:
        for _, literal in PARSED_LITERAL.findall(source) if PARSE_CALL.search(source) else []:
            problem = _aborts(literal)
            if problem:
                raise ConfigError(
                    f"{where}: std.parseJson/parseYaml of {literal!r} ({problem}) would abort the process inside "
                    "the Jsonnet library, with no error to report: give a finite number",
                    where,
                )
    names = [name for source in sources for _, name in EXTERNAL_VARIABLE.findall(source)]
    if any(COMPUTED_EXTERNAL_VARIABLE.search(source) for source in sources):
        names += [name for source in sources for _, name in STRING.findall(source) if name in (ext_vars or {})]
    for name in dict.fromkeys(names):
        value = (ext_vars or {}).get(name)
        problem = _aborts(value) if isinstance(value, str) else None
        if problem:
            raise ConfigError(
                f"{where} parses the environment variable {name}={value!r} with std.parseJson/parseYaml, and "
                f"{problem} would abort the process inside the Jsonnet library, with no error to report: set "
                f"{name} to a finite number",
                where,
            )


def repair_params(module: types.ModuleType) -> None:
    with_overrides = module.with_overrides
    if repaired(with_overrides):
        return
    parse_overrides, evaluate_file, evaluate_snippet = (
        module.parse_overrides,
        module.evaluate_file,
        module.evaluate_snippet,
    )

    def checked_evaluate_file(filename: str, **kwargs: Any) -> str:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = open(filename, encoding="utf-8").read()
            check_jsonnet_aborts(filename, text, kwargs.get("ext_vars"), filename)
        return evaluate_file(filename, **kwargs)

    def checked_evaluate_snippet(filename: str, text: str, **kwargs: Any) -> str:
        check_jsonnet_aborts(filename, text, kwargs.get("ext_vars"), filename or "-o")
        return evaluate_snippet(filename, text, **kwargs)

    def patched_parse_overrides(serialized_overrides: str, ext_vars: Optional[Dict[str, Any]] = None) -> Dict:
        from luke_allennlp.cli.user_errors import JSONNET_ERRORS, one_line

        try:
            parsed = parse_overrides(serialized_overrides, ext_vars)
        except RuntimeError as error:
            if not str(error).startswith(JSONNET_ERRORS) or "undefined external variable" in str(error):
                raise
            raise _not_an_object(serialized_overrides, f"not JSON or Jsonnet ({one_line(error)})") from None
        if serialized_overrides and not isinstance(parsed, dict):
            raise _not_an_object(serialized_overrides, f"{_describe(parsed)}, not an object")
        if serialized_overrides and serialized_overrides == _command_line_overrides():
            _COMMAND_LINE_KEYS[serialized_overrides] = set(parsed)
        return parsed

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
                        "%s replaces the whole %r section, so its type %s becomes %s and its other keys are dropped; "
                        "to change single keys write them dotted, e.g. -o '{\"%s.%s\": ...}'",
                        "-o" if from_command_line(prefix + key) else "the override",
                        prefix + key,
                        repr(old["type"]) if "type" in old else "(the default)",
                        repr(new["type"]) if "type" in new else "the default",
                        prefix + key,
                        next(iter(new), "key"),
                    )
        try:
            overridden = with_overrides(original, overrides_dict, prefix)
        except ValueError as error:
            if prefix or not str(error).startswith("overrides dict contains unused keys"):
                raise
            for key in overrides_dict:
                missing = _missing(original, key)
                if missing is not None and "." in key:
                    parent = missing.rsplit(".", 1)[0] if "." in missing else ""
                    whole = parent == "" and from_command_line(key)
                    raise ConfigError(
                        f"{_override_origin(key)}: the config has no {missing!r} to override"
                        + (f" (give the whole section instead: -o '{{\"{missing}\": {{...}}}}')" if whole else ""),
                        key,
                    ) from None
            raise
        keys = [key for key in overrides_dict if from_command_line(prefix + key)]
        if keys and not prefix and isinstance(overridden, dict):
            _check_overridden_sections(overridden, keys)
        return overridden

    replace(module, "with_overrides", patched_with_overrides)
    replace(module, "parse_overrides", patched_parse_overrides)
    replace(module, "evaluate_file", checked_evaluate_file)
    replace(module, "evaluate_snippet", checked_evaluate_snippet)


def _check_overridden_sections(config: Dict[str, Any], keys: List[str]) -> None:
    """The sections that the command line's `-o` changed, checked as `train` checks a config, once they are applied
    (to a training config, or to an archive's as `evaluate -o` and `predict -o` load it): a misspelt key is named with
    its did-you-mean instead of allennlp's "extra parameters" once the component is built. An error elsewhere in the
    config is left to allennlp (an archive's own config is checked as an archive)."""
    try:
        check_sections(config, keys)
    except ConfigError as error:
        if any(_related(error.path, key) for key in keys):
            raise
        logger.debug("the config fails a check away from -o's keys: left to allennlp", exc_info=True)


def _related(path: str, key: str) -> bool:
    """Whether the config path `path` (`trainer.optimizer.lr`, `model.x[0].y`) is `key`, inside it, or holds it."""
    path = path.replace("[", ".").replace("]", "")
    return path == key or path.startswith(key + ".") or key.startswith(path + ".")


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
