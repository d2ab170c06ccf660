"""What loading reads of an archive before building it is whole (luke_allennlp/resources/archive_config.py): a
bundled `model.safetensors` whose header is too large or whose tensor lies past the end, a bundled `tokenizer.json`
nested 100,000 deep, a `meta.json` that is no meta: each one line naming the archive and its member."""

import json
import struct

import pytest

from luke_allennlp.modeling.weights import WeightsError
from luke_allennlp.resources.archive_config import ArchiveConfigError
from tests.crafted_archives import crafted

TINY = "bundled/0-tiny"


def safetensors(header: dict, data: bytes, length: int = 0) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", length or len(text)) + text + data


DAMAGED = {
    "header_too_large": (safetensors({}, b"", length=1 << 40), "a header of 1,099,511,627,776 bytes in a file of 10"),
    "tensor_past_the_end": (
        safetensors({"w": {"dtype": "F32", "shape": [4000, 4000], "data_offsets": [0, 64_000_000]}}, b"\0" * 64),
        "the tensor 'w' lies at bytes 0-64,000,000 of data 64 bytes long",
    ),
    "shape_and_bytes_disagree": (
        safetensors({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}, b"\0" * 8),
        "the tensor 'w' of shape [4] takes 8 bytes",
    ),
}


def test_damaged_bundled_members_are_named_before_anything_is_built(trained_archive, tmp_path):
    from allennlp.models.archival import load_archive

    for name, (data, what) in DAMAGED.items():
        members = {f"{TINY}/model.safetensors": data}
        archive = crafted(trained_archive, tmp_path / f"{name}.tar.gz", members=members, weights=False)
        with pytest.raises(WeightsError) as refused:
            load_archive(str(archive))
        assert str(refused.value) == (
            f"{archive} (its member {TINY}/model.safetensors): not a whole safetensors file, it is truncated or "
            f"damaged ({what})"
        ), name

    deep = b'{"model": {"type": "BPE", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    archive = crafted(
        trained_archive, tmp_path / "deep.tar.gz", members={f"{TINY}/tokenizer.json": deep}, weights=False
    )
    with pytest.raises(
        ArchiveConfigError, match=f"^{archive}: its {TINY}/tokenizer.json nests arrays and objects 100002"
    ):
        load_archive(str(archive))
    meta = {"meta.json": b'{"version": 2, "x": 1}'}
    archive = crafted(trained_archive, tmp_path / "meta.tar.gz", members=meta, weights=False)
    with pytest.raises(ArchiveConfigError, match=f"^{archive}: its meta.json holds no version string$"):
        load_archive(str(archive))
