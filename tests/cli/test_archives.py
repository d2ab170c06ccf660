"""Safe archive extraction (luke_allennlp/resources/archives.py, luke_allennlp/cli/archives.py): crafted archives that would write outside the
extraction directory, and corrupted ones, refused with an error naming the archive, through `extract_archive`,
`cached_path` and the real `allennlp predict` / `evaluate` commands."""

import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from luke_allennlp.resources.archives import ArchiveError, extract_archive
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT
from tests.crafted_archives import Payload


def member(name, data=None, kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    if data is not None:
        info.size = len(data)
    return info, data


def symlink(name, target):
    return member(name, kind=tarfile.SYMTYPE, link=target)


def hardlink(name, target):
    return member(name, kind=tarfile.LNKTYPE, link=target)


def write_tar(path, members, base=None, compresslevel=9):
    """A gzipped tar of `members` (`(TarInfo, bytes or None)`), then every member of the archive `base`."""
    with tarfile.open(path, "w:gz", compresslevel=compresslevel) as tar:
        for info, data in members:
            tar.addfile(info, None if data is None else io.BytesIO(data))
        if base is not None:
            with tarfile.open(base) as source:
                for info in source:
                    tar.addfile(info, source.extractfile(info) if info.isreg() else None)
    return path


# Each attack as it would land in `outside`, the directory above the extraction directory's parent
# (`outside/tmp/<extraction dir>`): the members, and what the error says.
def attacks(outside: Path):
    return {
        "dotdot": (
            [member("../../escaped.txt", b"escaped")],
            "'../../escaped.txt' is outside the extraction directory",
        ),
        "absolute": (
            [member(str(outside / "absolute.txt"), b"absolute")],
            f"'{outside / 'absolute.txt'}' is an absolute path",
        ),
        "symlink": (
            [symlink("link", str(outside)), member("link/through-link.txt", b"x")],
            "'link' is a symbolic link to an absolute path",
        ),
        "relative_symlink": (
            [symlink("link", "../.."), member("link/through-link.txt", b"x")],
            "'link' is a symbolic link pointing outside the extraction directory",
        ),
        # A hard link to a file outside, then a member of the same name written into it.
        "hardlink": (
            [hardlink("hard", "../../victim.txt"), member("hard", b"overwritten")],
            "'hard' is a hard link pointing outside the extraction directory",
        ),
        "absolute_hardlink": (
            [hardlink("hard", str(outside / "victim.txt")), member("hard", b"overwritten")],
            "'hard' is a hard link to an absolute path",
        ),
        # Links that stay inside one by one but not together: s2 -> s1/.. with s1 -> . is the parent directory.
        "symlink_chain": (
            [symlink("s1", "."), symlink("s2", "s1/.."), member("s2/chained.txt", b"x")],
            "'s2' is a symbolic link through the symbolic link 's1'",
        ),
        "symlink_to_later_member": (
            [symlink("s2", "later/.."), symlink("later", "."), member("s2/chained.txt", b"x")],
            "'s2' is a symbolic link through 'later', not an earlier member",
        ),
        "replaced_member": (
            [member("dir/file.txt", b"x"), symlink("dir", str(outside))],
            "'dir' is a second member at 'dir', replacing the first",
        ),
        "fifo": ([member("pipe", kind=tarfile.FIFOTYPE)], "'pipe' is a device, pipe or other special file"),
    }


def written_outside(outside: Path):
    """Every file under `outside` but the extraction directories' parent, and the victim's content."""
    files = sorted(str(p.relative_to(outside)) for p in outside.rglob("*") if "tmp" not in p.relative_to(outside).parts)
    return files, (outside / "victim.txt").read_text()


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """A directory holding `victim.txt`, with `tmp/` as the temporary directory of this process."""
    (tmp_path / "tmp").mkdir()
    (tmp_path / "victim.txt").write_text("untouched")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path


@pytest.mark.parametrize("data_filter", [True, False], ids=["data_filter", "without_data_filter"])
@pytest.mark.parametrize("attack", list(attacks(Path("/x"))))
def test_unsafe_members_are_refused(outside, monkeypatch, attack, data_filter):
    if not data_filter:  # as on Pythons before the filter: our own checks alone
        for name in ("data_filter", "FilterError"):
            monkeypatch.delattr(tarfile, name)
        monkeypatch.setattr(tarfile.TarFile, "extraction_filter", None)
    members, message = attacks(outside)[attack]
    archive = write_tar(outside / "tmp" / "crafted.tar.gz", members)
    before = written_outside(outside)
    extraction = outside / "tmp" / "a" / "b"
    extraction.mkdir(parents=True)
    with pytest.raises(ArchiveError, match=re.escape(f"{archive} is unsafe to extract: member {message}")):
        extract_archive(archive, extraction)
    assert written_outside(outside) == before == (["victim.txt"], "untouched")


def test_links_inside_the_archive_are_extracted(tmp_path):
    archive = write_tar(
        tmp_path / "links.tar.gz",
        [
            member("vocabulary", kind=tarfile.DIRTYPE),
            member("vocabulary/tokens.txt", b"a\nb\n"),
            symlink("vocabulary/labels.txt", "tokens.txt"),
            hardlink("copy.txt", "vocabulary/tokens.txt"),
            symlink("vocab", "vocabulary"),
            member("vocabulary", kind=tarfile.DIRTYPE),
        ],
    )
    extract_archive(archive, tmp_path / "out")
    assert (tmp_path / "out" / "vocab" / "labels.txt").read_text() == "a\nb\n"
    assert (tmp_path / "out" / "copy.txt").read_text() == "a\nb\n"


def flipped(data: bytes, offset: int) -> bytes:
    corrupted = bytearray(data)
    corrupted[offset] ^= 0xFF
    return bytes(corrupted)


def test_corruption_is_detected(tmp_path):
    weights = os.urandom(100_000)
    # Stored (uncompressed) deflate blocks: a flipped byte still decompresses, into wrong weights.
    good = write_tar(tmp_path / "good.tar.gz", [member("weights.th", weights)], compresslevel=0).read_bytes()
    (tmp_path / "flipped.tar.gz").write_bytes(flipped(good, len(good) // 2))
    with tarfile.open(tmp_path / "flipped.tar.gz", "r:gz") as tar:  # what allennlp did: no error
        assert tar.extractfile("weights.th").read() != weights
    with pytest.raises(
        ArchiveError, match=r"flipped.tar.gz is corrupted: CRC mismatch \(BadGzipFile: CRC check failed"
    ):
        extract_archive(tmp_path / "flipped.tar.gz", tmp_path / "out")
    (tmp_path / "truncated.tar.gz").write_bytes(good[: len(good) - 1000])
    with pytest.raises(ArchiveError, match=r"truncated.tar.gz is corrupted: truncated \(EOFError"):
        extract_archive(tmp_path / "truncated.tar.gz", tmp_path / "out")
    (tmp_path / "notes.txt").write_text("not an archive")
    with pytest.raises(ArchiveError, match="notes.txt is not a tar archive, or is corrupted"):
        extract_archive(tmp_path / "notes.txt", tmp_path / "out")
    with tarfile.open(tmp_path / "good.tar.xz", "w:xz") as tar:  # xz checks its own CRC-64 the same way
        info, data = member("weights.th", weights)
        tar.addfile(info, io.BytesIO(data))
    xz = (tmp_path / "good.tar.xz").read_bytes()
    (tmp_path / "flipped.tar.xz").write_bytes(flipped(xz, len(xz) // 2))
    with pytest.raises(ArchiveError, match="flipped.tar.xz is corrupted"):
        extract_archive(tmp_path / "flipped.tar.xz", tmp_path / "out-xz")
    extract_archive(tmp_path / "good.tar.gz", tmp_path / "out-good")
    assert (tmp_path / "out-good" / "weights.th").read_bytes() == weights


def test_cached_path_extraction_is_checked(outside):
    from allennlp.common.file_utils import cached_path

    cache = outside / "tmp" / "cache"
    members, _ = attacks(outside)["dotdot"]
    archive = write_tar(outside / "tmp" / "crafted.tar.gz", members)
    with pytest.raises(ArchiveError, match=re.escape(f"{archive} is unsafe to extract: member '../../escaped.txt'")):
        cached_path(str(archive), cache_dir=str(cache), extract_archive=True)
    assert written_outside(outside) == (["victim.txt"], "untouched")
    good = write_tar(outside / "tmp" / "vocabulary.tar.gz", [member("tokens.txt", b"a\n")])
    assert (
        Path(cached_path(str(good), cache_dir=str(cache), extract_archive=True)) / "tokens.txt"
    ).read_text() == "a\n"


def test_archive_surgery_extraction_defaults_to_the_data_filter(outside, monkeypatch):
    """allennlp's archive-editing script extracts with tarfile itself: the `data` filter, made the default, stops it."""
    from allennlp.tools import archive_surgery  # (imports allennlp.models.archival, whose repair sets the default)

    assert tarfile.TarFile.extraction_filter is tarfile.data_filter
    archive = write_tar(outside / "tmp" / "crafted.tar.gz", attacks(outside)["dotdot"][0])
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "archive_surgery",
            "--input-file",
            str(archive),
            "--output-file",
            str(outside / "tmp" / "edited.tar.gz"),
            "--editor",
            "true",
        ],
    )
    with pytest.raises(tarfile.OutsideDestinationError):
        archive_surgery.main()
    assert written_outside(outside) == (["victim.txt"], "untouched")


# --- decompression bombs ---------------------------------------------------------------------------------------

CHUNK = 16 << 20


def gzip_bomb(path: Path, member_size: int, trailing: int = 0) -> Path:
    """A gzipped tar of one `weights.th` of `member_size` zero bytes (a multiple of 16 MiB), then `trailing` zero
    bytes after the end of the archive: gzip members of 16 MiB of zeros (16 KiB each) repeated, made at once."""
    import gzip

    zeros = gzip.compress(bytes(CHUNK), compresslevel=9)
    info = tarfile.TarInfo("weights.th")
    info.size = member_size
    with open(path, "wb") as f:
        f.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        f.write(zeros * (member_size // CHUNK))
        f.write(gzip.compress(bytes(2 * tarfile.RECORDSIZE)))  # the end-of-archive blocks
        f.write(zeros * (trailing // CHUNK))
    return path


def test_a_decompression_bomb_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    """The issue's case: a 2 GiB member in a 2 MB archive (`evaluate` and `export-luke` wrote it all to the
    temporary directory)."""
    from allennlp.commands import main
    from allennlp.common.file_utils import cached_path

    bomb = gzip_bomb(tmp_path / "bomb.tar.gz", 2 << 30)
    assert bomb.stat().st_size < 3 << 20
    out = tmp_path / "out"
    out.mkdir()
    expected = (
        f"{bomb} is refused: its members up to 'weights.th' would extract to 2.0 GiB, more than 100 times the "
        "archive's 2.0 MiB (a decompression bomb? LUKE_ARCHIVE_MAX_RATIO raises the limit)"
    )
    with pytest.raises(ArchiveError, match=re.escape(expected)):
        extract_archive(bomb, out)
    assert list(out.iterdir()) == []
    with pytest.raises(ArchiveError, match=re.escape(expected)):
        cached_path(str(bomb), cache_dir=str(tmp_path / "cache"), extract_archive=True)
    assert not list((tmp_path / "cache").rglob("weights.th"))
    for command in (["evaluate", str(bomb), "data.txt"], ["export-luke", str(bomb), str(tmp_path / "export")]):
        monkeypatch.setattr(sys, "argv", ["allennlp", *command])
        with pytest.raises(SystemExit):
            main(prog="allennlp")
        assert capsys.readouterr().err == f"allennlp: error: {expected}\n"
    # The absolute limit, whatever the ratio (here lifted).
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_RATIO", "0")
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "1G")
    with pytest.raises(ArchiveError, match=r"would extract to 2.0 GiB, more than the limit of 1.0 GiB \(LUKE_ARC"):
        extract_archive(bomb, out)
    # Zeros hidden after the last member are not written, but would be decompressed: refused as well.
    monkeypatch.delenv("LUKE_ARCHIVE_MAX_BYTES")
    monkeypatch.delenv("LUKE_ARCHIVE_MAX_RATIO")
    trailing = gzip_bomb(tmp_path / "trailing.tar.gz", CHUNK, trailing=160 << 20)
    with pytest.raises(ArchiveError, match=r"trailing.tar.gz is refused: its stream goes on past 64.0 MiB after"):
        extract_archive(trailing, tmp_path / "out-trailing")


def test_legitimate_archives_pass_the_limits(shared_data, tmp_path, monkeypatch):
    """Weights compress by ~1.1x, vocabularies by 2-5x: a model's archive is far from the limits; the limits
    can be changed from the environment."""
    tokenizer = shared_data / "tokenizers" / "roberta-base"
    weights = os.urandom(8 << 20)
    archive = write_tar(
        tmp_path / "model.tar.gz",
        [
            member("weights.th", weights),
            member("vocab.json", (tokenizer / "vocab.json").read_bytes()),
            member("merges.txt", (tokenizer / "merges.txt").read_bytes()),
            member("labels.txt", b"O\nB-PER\n" * 1000),
        ],
        compresslevel=6,
    )
    extract_archive(archive, tmp_path / "out")
    assert (tmp_path / "out" / "weights.th").read_bytes() == weights
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "9M")
    with pytest.raises(ArchiveError, match=r"up to 'merges.txt' would extract to 9.3 MiB, more than the limit of 9.0"):
        extract_archive(archive, tmp_path / "out-limited")
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="LUKE_ARCHIVE_MAX_BYTES='lots': expected a number"):
        extract_archive(archive, tmp_path / "out-bad-setting")


# --- the real commands ----------------------------------------------------------------------------------------


def silently_corrupted(archive: Path, work: Path) -> bytes:
    """The archive with one byte flipped near its middle (in the weights) at a place where allennlp's own
    extraction succeeds, with different weights."""
    data = archive.read_bytes()
    with tarfile.open(archive) as tar:
        weights = tar.extractfile("weights.th").read()
    for offset in range(len(data) // 2, len(data) - 1000, 97):
        corrupted = flipped(data, offset)
        try:
            with tarfile.open(fileobj=io.BytesIO(corrupted), mode="r:gz") as tar:
                tar.extractall(work / str(offset), filter="fully_trusted")  # allennlp's call (no filter)
        except Exception:  # noqa: BLE001  (an error the deflate stream itself raises: not the silent case)
            continue
        if (work / str(offset) / "weights.th").read_bytes() != weights:
            return corrupted
    raise AssertionError(f"no silently corrupting byte found in {archive}")


def crafted_archive(trained: Path, outside: Path, attack: str) -> Path:
    """The trained archive with an attack's members in front, or ("corrupted") a silently corrupted copy."""
    path = outside / f"{attack}.tar.gz"
    if attack == "corrupted":
        path.write_bytes(silently_corrupted(trained, outside / "scratch"))
        return path
    return write_tar(path, attacks(outside)[attack][0], base=trained)


COMMAND_ATTACKS = ("dotdot", "absolute", "symlink", "hardlink", "corrupted")


def test_predict_and_evaluate_refuse_crafted_archives(trained_archive, outside, monkeypatch, capsys):
    """Every attack through both commands (in this process, through allennlp's command-line entry point): one
    line naming the archive, exit status 1."""
    from allennlp.commands import main

    data = FIXTURES / "data" / "sentiment.jsonl"
    archives = {attack: crafted_archive(trained_archive, outside, attack) for attack in COMMAND_ATTACKS}
    # The attacks' members aside, each archive is the trained one: it predicts.
    control = write_tar(outside / "control.tar.gz", [], base=trained_archive)
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "allennlp",
            "predict",
            str(control),
            str(data),
            "--silent",
            "--use-dataset-reader",
            "--output-file",
            str(outside / "predictions.jsonl"),
        ],
    )
    main(prog="allennlp")
    assert len((outside / "predictions.jsonl").read_text().splitlines()) == 16
    before = written_outside(outside)
    # (the control's bundled files stay until the process exits: luke_allennlp.archival)
    extracted = set((outside / "tmp").rglob("config.json"))
    for attack, archive in archives.items():
        for command in (
            ["predict", str(archive), str(data), "--silent", "--use-dataset-reader"],
            ["evaluate", str(archive), str(data)],
        ):
            monkeypatch.setattr(sys, "argv", ["allennlp", *command])
            expected = f"{archive} is corrupted" if attack == "corrupted" else f"{archive} is unsafe to extract"
            capsys.readouterr()
            with pytest.raises(SystemExit) as exited:
                main(prog="allennlp")
            assert exited.value.code == 1 and capsys.readouterr().err.startswith(f"allennlp: error: {expected}")
            assert written_outside(outside) == before, (attack, command[0])
    assert set((outside / "tmp").rglob("config.json")) == extracted, "a failed extraction left a directory behind"


@pytest.mark.parametrize("command, attack", [("predict", "dotdot"), ("evaluate", "corrupted")])
def test_the_allennlp_command_exits_with_the_error(trained_archive, outside, command, attack):
    """The console command itself: non-zero exit, the error on stderr, nothing written outside."""
    archive = crafted_archive(trained_archive, outside, attack)
    before = written_outside(outside)
    args = [str(ALLENNLP), command, str(archive), str(FIXTURES / "data" / "sentiment.jsonl")]
    env = {**os.environ, "TMPDIR": str(outside / "tmp")}
    result = subprocess.run(args, capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600)
    assert result.returncode == 1
    what = "is corrupted: " if attack == "corrupted" else "is unsafe to extract: member "
    errors = [line for line in result.stderr.splitlines() if " - INFO - " not in line]
    assert len(errors) == 1 and errors[0].startswith(f"allennlp: error: {archive} {what}"), result.stderr[-3000:]
    assert written_outside(outside) == before
    assert not list((outside / "tmp").rglob("config.json"))


# --- weights loaded with weights_only=True (repair 11) ----------------------------------------------------------


def with_weights(archive: Path, weights: bytes, path: Path) -> Path:
    """A copy of `archive` whose weights.th is `weights`."""
    with tarfile.open(archive) as source, tarfile.open(path, "w:gz") as tar:
        for info in source:
            data = source.extractfile(info).read() if info.isreg() else None
            if info.name == "weights.th":
                info.size, data = len(weights), weights
            tar.addfile(info, None if data is None else io.BytesIO(data))
    return path


def test_a_malicious_weights_file_runs_nothing_on_any_path(trained_archive, tmp_path, monkeypatch):
    """With TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 (which turns torch.load's default to weights_only=False), every
    load of weights passes weights_only=True itself: archives, `from_archive` models, the pretrained initializer,
    the trainer's reload of best.th, both checkpointers and the project's checkpoint loader. The error names the
    file, and the archive."""
    import torch
    from allennlp.common import Params
    from allennlp.models import Model
    from allennlp.models.archival import load_archive
    from allennlp.nn.initializers import PretrainedModelInitializer
    from allennlp.training.checkpointer import Checkpointer
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    from luke_allennlp.modeling.checkpoint_files import read_state_dict
    from luke_allennlp.modeling.weights import WeightsError

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "code-ran.txt"
    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(2), "payload": Payload(marker)}, buffer)
    evil = buffer.getvalue()
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        torch.load(io.BytesIO(evil))  # the payload works where weights_only is left to the environment
    assert marker.exists()
    marker.unlink()

    archive = with_weights(trained_archive, evil, tmp_path / "evil.tar.gz")
    refused = "refused: it holds Python objects that are not weights (Unsupported global: GLOBAL io.open"
    with pytest.raises(WeightsError, match=re.escape(f"{archive} (its member weights.th): {refused}")):
        load_archive(str(archive))
    with pytest.raises(WeightsError, match=re.escape(f"{archive} (its member weights.th): {refused}")):
        Model.from_params(Params({"type": "from_archive", "archive_file": str(archive)}))
    with pytest.raises(WeightsError, match=re.escape(f"{archive} (its member weights.th): {refused}")):
        PretrainedModelInitializer(str(archive))
    (tmp_path / "run").mkdir()
    for name in ("model_state_e0_b1.th", "training_state_e0_b1.th", "best.th", "pytorch_model.bin"):
        (tmp_path / "run" / name).write_bytes(evil)
    weights = tmp_path / "run" / "best.th"
    with pytest.raises(WeightsError, match=re.escape(f"{weights}: {refused}")):
        PretrainedModelInitializer(str(weights))
    with pytest.raises(WeightsError, match=re.escape(f"{weights}: {refused}")):
        trainer = type("Trainer", (), {"_ddp_wrapped_model": None, "_pytorch_model": torch.nn.Linear(2, 2)})()
        GradientDescentTrainer._load_model_state(trainer, str(weights))
    with pytest.raises(WeightsError, match=re.escape(f"{tmp_path / 'run' / 'model_state_e0_b1.th'}: {refused}")):
        Checkpointer(str(tmp_path / "run")).load_checkpoint()
    with pytest.raises(WeightsError, match=re.escape(f"{tmp_path / 'run' / 'pytorch_model.bin'}: {refused}")):
        read_state_dict(str(tmp_path / "run"))
    assert not marker.exists()


def test_a_damaged_weights_file_is_named_with_its_archive(trained_archive, tmp_path):
    from allennlp.models.archival import load_archive

    from luke_allennlp.modeling.weights import WeightsError

    with tarfile.open(trained_archive) as tar:
        weights = tar.extractfile("weights.th").read()
    archive = with_weights(trained_archive, weights[:1000], tmp_path / "damaged.tar.gz")
    with pytest.raises(WeightsError) as raised:
        load_archive(str(archive))
    assert str(raised.value) == (
        f"{archive} (its member weights.th): cannot be read as PyTorch weights, it is truncated or damaged "
        "(RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory)"
    )


@pytest.mark.parametrize("variable", ["LUKE_ARCHIVE_MAX_BYTES", "LUKE_ARCHIVE_MAX_RATIO"])
@pytest.mark.parametrize("value", ["-1", "nan", "-5M", "inf"])
def test_a_limit_that_is_no_limit_is_refused(tmp_path, monkeypatch, variable, value):
    """Issue 38: a negative or `nan` limit silently lifted both limits; it is refused in one line (0 lifts one)."""
    archive = write_tar(tmp_path / "a.tar.gz", [member("weights.th", b"x" * 100)])
    monkeypatch.setenv(variable, value)
    expected = (
        f"{variable}={value!r}: expected a number of at least 0 (bytes may end in K, M, G or T; 0 lifts the limit)"
    )
    with pytest.raises(ArchiveError, match=f"^{re.escape(expected)}$"):
        extract_archive(archive, tmp_path / "out")
    monkeypatch.setenv(variable, "0")
    extract_archive(archive, tmp_path / "out")


def test_the_sizes_of_a_refusal_show_the_difference(tmp_path, monkeypatch):
    """Issue 38: "0.0 MiB more than 0.0 MiB": small sizes in bytes or KiB, and exact bytes where the rounded ones
    read the same."""
    archive = write_tar(tmp_path / "a.tar.gz", [member("a.txt", b"x" * 100), member("b.txt", b"y" * 1900)])
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "10")
    with pytest.raises(
        ArchiveError, match=r"up to 'a.txt' would extract to 100 bytes, more than the limit of 10 bytes"
    ):
        extract_archive(archive, tmp_path / "out-bytes")
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "1999")  # 2,000 bytes and 1,999 both read 2.0 KiB
    with pytest.raises(ArchiveError, match=r"would extract to 2,000 bytes, more than the limit of 1,999 bytes \("):
        extract_archive(archive, tmp_path / "out-close")
    monkeypatch.setenv("LUKE_ARCHIVE_MAX_BYTES", "1K")
    with pytest.raises(ArchiveError, match=r"would extract to 2.0 KiB, more than the limit of 1.0 KiB \("):
        extract_archive(archive, tmp_path / "out-kib")
