"""Crafted copies of a trained archive, for the tests of what loading an archive refuses (`tests/cli/test_archive_*`,
`tests/archival/`): a config entry set, the manifest edited, members added, replaced or left out."""

import io
import json
import tarfile
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence


class Payload:
    """Unpickling it creates a file: what a crafted weights.th could do instead."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def evil_pickle(marker: Path) -> bytes:
    """A torch file of a tensor and a `Payload` that creates `marker` when unpickled."""
    import torch

    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(2), "payload": Payload(marker)}, buffer)
    return buffer.getvalue()


def set_at(config: dict, where: str, value: Any) -> None:
    *parents, last = where.split(".")
    node = config
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[last] = value


def crafted(
    trained: Path,
    path: Path,
    where: Optional[str] = None,
    value: Any = None,
    *,
    edit: Optional[Callable[[dict], None]] = None,
    config_text: Optional[str] = None,
    manifest: Optional[Callable[[dict], None]] = None,
    members: Optional[Dict[str, bytes]] = None,
    drop: Sequence[str] = (),
    weights: bool = True,
) -> Path:
    """
    A copy of the trained archive whose config has `value` at `where` (the bundled paths under `where` dropped from
    its manifest, so that none points into a replaced section), or is changed by `edit`, or is `config_text`;
    `manifest` edits its manifest, `members` adds or replaces members, `drop` leaves some out, and without `weights`
    it has no weights.th (refusals before anything is built need none: a smaller copy, made faster).
    """
    members = dict(members or {})
    drop = set(drop) | (set() if weights else {"weights.th"})
    with tarfile.open(trained) as source, tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for info in source:
            if info.name in drop or info.name in members:
                continue
            data = source.extractfile(info).read() if info.isreg() else None
            if info.name == "config.json":
                if config_text is not None:
                    data = config_text.encode()
                else:
                    config = json.loads(data)
                    if where is not None:
                        set_at(config, where, value)
                    if edit is not None:
                        edit(config)
                    data = json.dumps(config).encode()
            elif info.name == "bundled/manifest.json":
                found = json.loads(data)
                if where is not None:
                    found["paths"] = {k: v for k, v in found["paths"].items() if not k.startswith(where)}
                if manifest is not None:
                    manifest(found)
                data = json.dumps(found).encode()
            if data is not None:
                info.size = len(data)
            tar.addfile(info, None if data is None else io.BytesIO(data))
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
