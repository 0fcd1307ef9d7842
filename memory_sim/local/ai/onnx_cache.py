"""Where the ONNX export of a local model lives, and whether it is current: pure file logic, no torch, no onnxruntime.

    <root>/<model>-<hash of the model's file names and sizes>/v<EXPORT_VERSION>/
        model.onnx      the model's transformer: input_ids, attention_mask[, token_type_ids] -> last_hidden_state
        tokenizer.json  the model's own tokenizer, set to truncate at its window and pad to the longest text
        manifest.json   written last, so an export cut short has none: what was exported from which files

`<root>` is $MEMORY_SIM_ONNX_CACHE, else $XDG_CACHE_HOME/memory_sim/onnx, else ~/.cache/memory_sim/onnx: one per
user, shared by every checkout and venv. The folder is keyed by the model's files, not by where they are
installed, so a second venv with the same weights finds the first one's export. An export is current while the
model folder's files keep the sizes and mtimes the manifest records; when they change (another install of the
same files), it is current again if their content still has the recorded sha256, else it is re-exported.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

EXPORT_VERSION = 1  # bump when the exported graph or the tokenizer settings change
ONNX_CACHE_ENV = "MEMORY_SIM_ONNX_CACHE"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
SKIPPED_SOURCES = {"README.md"}  # documentation does not change the model


@dataclass(frozen=True)
class Manifest:
    """What an export holds and what it was made from."""

    model: str
    source: str
    max_seq_length: int
    files: dict[str, list[int]]  # relative path -> [size, mtime_ns] of the model folder's files
    sha256: str  # of those files' names and content
    onnx_bytes: int
    export_version: int = EXPORT_VERSION


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(ONNX_CACHE_ENV):
        return Path(env[ONNX_CACHE_ENV])
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory_sim" / "onnx"


def export_dir(root: Path, model: str, folder: Path) -> Path:
    """One folder per model (its files' names and sizes: a stat each, no read) and export version; the model's
    name keeps it readable. The content check is the manifest's sha256 (inspect_export)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[-48:] or "model"
    files = sorted((name, size) for name, (size, _) in fingerprint(folder).items())
    digest = hashlib.sha256(json.dumps([model, files]).encode()).hexdigest()[:12]
    return root / f"{slug}-{digest}" / f"v{EXPORT_VERSION}"


def source_files(folder: Path) -> list[Path]:
    found = [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name not in SKIPPED_SOURCES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(found)


def fingerprint(folder: Path) -> dict[str, list[int]]:
    """Size and mtime of every file of the model folder: cheap to compare on every load."""
    stats = {p.relative_to(folder).as_posix(): p.stat() for p in source_files(folder)}
    return {name: [st.st_size, st.st_mtime_ns] for name, st in stats.items()}


def content_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in source_files(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def write_manifest(directory: Path, manifest: Manifest) -> None:
    write_atomically(directory / MANIFEST_FILE, json.dumps(asdict(manifest), indent=1).encode())


def inspect_export(directory: Path, folder: Path) -> tuple[Manifest | None, str]:
    """(manifest, "") when `directory` holds a complete export of `folder` as it is now, else (None, why not).
    A reason starting with "damaged" deserves a warning; "missing" and "outdated" are routine."""
    path = directory / MANIFEST_FILE
    if not path.is_file():
        return None, "missing"
    try:
        manifest = Manifest(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError) as exc:
        return None, f"damaged: unreadable {MANIFEST_FILE} ({exc})"
    onnx = directory / MODEL_FILE
    if not onnx.is_file() or onnx.stat().st_size != manifest.onnx_bytes:
        return None, f"damaged: {MODEL_FILE} is missing or not the size exported"
    if not (directory / TOKENIZER_FILE).is_file():
        return None, f"damaged: {TOKENIZER_FILE} is missing"
    if manifest.export_version != EXPORT_VERSION:
        return None, "outdated"
    if manifest.files == fingerprint(folder):
        return manifest, ""
    if manifest.sha256 != content_sha256(folder):
        return None, "outdated"
    return _refreshed(directory, manifest, folder), ""


def _refreshed(directory: Path, manifest: Manifest, folder: Path) -> Manifest:
    """The same content under new mtimes: record them so the next load is a stat again, if the cache is writable."""
    fresh = Manifest(**{**asdict(manifest), "files": fingerprint(folder)})
    with contextlib.suppress(OSError):  # a read-only cache still serves; the next load hashes again
        write_manifest(directory, fresh)
    return fresh
