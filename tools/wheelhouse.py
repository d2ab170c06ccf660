"""
Puts luke_allennlp on a machine that has CUDA torch and transformers but no allennlp and no network (a GPU box, a
cluster node): this machine builds the wheels it lacks, that machine installs them offline, keeping its own torch,
transformers and huggingface_hub.

    python tools/wheelhouse.py build --python-version 3.12 --out wheelhouse     # here (`make wheelhouse`)
    python3 wheelhouse/install.py                                               # there, with its python3

`build` writes this project's wheel (with the `luke_allennlp_compat.pth` start-up hook), allennlp 2.10.1 and the
packages in `CARRY` (at the versions installed here, the ones the test suite ran with) as wheels for the target's
Python, and copies this script in as `install.py`. Packages a CUDA PyTorch image has (`PROVIDED`) are not carried;
heavy optional ones that only unused features need (spaCy, boto3, the Google Cloud client, torchvision) are not
carried either: `luke_allennlp_compat` replaces them with placeholders that explain themselves.

`install` (run as `install.py` from the wheelhouse) installs every wheel of its folder with `pip --no-index
--no-deps` into the running interpreter's environment, so nothing it already has is replaced, then checks that
the requirements of luke_allennlp are met there and that `allennlp` starts, and names what is missing if not.
Standard library only: it runs before anything is installed.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

# What the target lacks, carried as wheels: allennlp itself, and what it (or this project) imports that a CUDA
# PyTorch image does not ship.
CARRY = [
    "allennlp", "base58", "cached-path", "datasets", "defusedxml", "dill", "fairscale", "jsonnet", "lmdb",
    "more-itertools", "multiprocess", "nltk", "tensorboardX", "termcolor",
]  # fmt: skip
# What the target is expected to have (an NVIDIA/PyTorch image such as this project's GPU machine's); `install`
# checks them.
PROVIDED = [
    "torch", "transformers", "huggingface-hub", "tokenizers", "safetensors", "sentencepiece", "numpy", "scipy",
    "scikit-learn", "h5py", "requests", "tqdm", "filelock", "pyarrow", "pandas", "xxhash", "fsspec", "httpx",
    "pyyaml", "packaging", "regex", "rich", "click", "joblib", "protobuf",
]  # fmt: skip
# Not carried, not needed: luke_allennlp_compat.OPTIONAL_DEPENDENCIES stands in for them.
NOT_NEEDED = ["spacy", "boto3", "botocore", "google-cloud-storage", "torchvision"]
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux_2_5_x86_64", "manylinux1_x86_64"]  # fmt: skip
LIMIT_MIB = 40


def pip(*args: str, quiet_errors: bool = False) -> None:
    stderr = subprocess.DEVNULL if quiet_errors else None
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=True, stderr=stderr)


def installed_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def build(python_version: str, out: str, repo: str) -> None:
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.whl")):
        os.remove(old)
    pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, repo)  # this project (pure Python)
    target = ["--python-version", python_version, "--implementation", "cp", *[f"--platform={p}" for p in PLATFORMS]]
    with tempfile.TemporaryDirectory() as sdists:
        for name in CARRY:
            requirement = f"{name}=={installed_version(name)}"
            try:  # a wheel for the target's Python and platform, as PyPI has it
                pip(
                    "download",
                    "-q",
                    "--no-deps",
                    "--only-binary=:all:",
                    *target,
                    "-d",
                    out,
                    requirement,
                    quiet_errors=True,
                )
            except subprocess.CalledProcessError:  # a source distribution only (fairscale): build a pure wheel here
                print(f"{requirement}: no wheel on the index for the target, building one from its source")
                pip("wheel", "-q", "--no-deps", "--no-binary", name, "-w", sdists, requirement)
                wheels = glob.glob(os.path.join(sdists, "*.whl"))
                if any(not w.endswith("-none-any.whl") for w in wheels):
                    raise SystemExit(
                        f"{name} built a platform-specific wheel here; it would not run on the target"
                    ) from None
                for wheel in wheels:
                    shutil.move(wheel, out)
    shutil.copy(os.path.abspath(__file__), os.path.join(out, "install.py"))
    sizes = {os.path.basename(p): os.path.getsize(p) for p in glob.glob(os.path.join(out, "*"))}
    total = sum(sizes.values()) / 2**20
    for name, size in sorted(sizes.items()):
        print(f"{size / 2**20:7.2f} MiB  {name}")
    print(f"{total:7.2f} MiB  in {out} for Python {python_version} (limit {LIMIT_MIB} MiB)")
    if total > LIMIT_MIB:
        raise SystemExit(f"the wheelhouse is {total:.1f} MiB, over {LIMIT_MIB} MiB")
    print(f"On the target: python3 {os.path.join(out, 'install.py')}")


def install(folder: str) -> None:
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    if not wheels:
        raise SystemExit(f"no wheels in {folder}: build them with `make wheelhouse` on a machine with pip's index")
    missing = []
    from importlib.metadata import PackageNotFoundError, version

    for name in PROVIDED:
        try:
            version(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        print(
            f"warning: this environment lacks {', '.join(missing)}, which the wheelhouse does not carry",
            file=sys.stderr,
        )
    pip("install", "-q", "--no-index", "--no-deps", "--no-cache-dir", *wheels)
    check = subprocess.run([shutil.which("allennlp") or os.path.join(os.path.dirname(sys.executable), "allennlp"),
                            "--version"], capture_output=True, text=True)  # fmt: skip
    if check.returncode != 0:
        raise SystemExit(f"allennlp does not start after the install:\n{check.stderr[-3000:]}")
    versions = ", ".join(
        f"{n} {version(n)}" for n in ("torch", "transformers", "huggingface-hub", "allennlp", "luke_allennlp")
    )
    print(f"Installed {len(wheels)} wheels into {sys.prefix}: {versions}. `allennlp` starts.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command")
    build_parser = commands.add_parser("build", help="build the wheelhouse here")
    build_parser.add_argument("--python-version", default="3.12", help="the target's Python (default 3.12)")
    build_parser.add_argument("--out", default="wheelhouse")
    install_parser = commands.add_parser("install", help="install the wheelhouse here, offline")
    install_parser.add_argument("--from", dest="folder", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    if args.command == "build":
        build(args.python_version, args.out, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    elif args.command == "install" or (args.command is None and os.path.basename(__file__) == "install.py"):
        install(getattr(args, "folder", None) or os.path.dirname(os.path.abspath(__file__)))
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
