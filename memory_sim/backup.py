"""Backups of a local data folder, taken while it is in use, and their restore (`memory-sim backup | restore`).

    manifest = backup(env, "backups/monday")        # by whoever holds the Env: a CLI verb, `run`, a program
    restore("backups/monday", "./.memory_sim")      # verified, then swapped in; the old folder is kept beside it

A backup is a folder shaped like a data folder, plus `memory-sim-backup.json` (the manifest: version, time,
rows per D1 table, vectors per index, cache entries, the SHA-256 of every file of the copy). Each part is copied
through its engine's own way to a consistent copy, while nothing writes to it:

    d1/<name>.*         sqlite3's online backup API, or DuckDB's CHECKPOINT then a copy of the file, under the
                        database's lock (no statement or batch runs meanwhile); rows counted under the same lock
    vectorize/          queued index writes applied and the array snapshot saved, then Chroma's folder copied
    embeddings.sqlite   sqlite3's online backup API, under the cache's lock

The local index is not thread-safe and has no lock of its own: its owner calls it from one thread at a time, and
`backup` must be called the same way (between two writes; `backup_soon` queues it between the jobs of
`memory-sim run`). The copy is written under a temporary name, reopened and checked against the counts taken
from the live folder, and only then renamed to `dest` with its manifest: a backup that exists is complete.

A restore trusts nothing it has not checked: the staged copy's files must have exactly the manifest's SHA-256s
(bit rot, a bad copy and rows rewritten in place all change a file; counts alone miss the last), then every part
is reopened, counted, and every row of every D1 table read, before anything is swapped. A backup may not be
written inside the data folder it copies (it would copy itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim import restore_check
from memory_sim.env import Env
from memory_sim.errors import BackupError

if TYPE_CHECKING:
    from concurrent.futures import Future

    from memory_sim.memory.system import MemorySystem

MANIFEST = "memory-sim-backup.json"
FORMAT = 2  # 2: `files`, every file's SHA-256 (and `sizes`); a format-1 backup has none: restored only unverified
READABLE = (1, FORMAT)
CACHE_FILE = "embeddings.sqlite"
PARTS = ("d1", "vectorize", CACHE_FILE, ".memory-sim-demo")  # what a backup holds of a data folder


@dataclass
class Manifest:
    """What a backup holds, as counted in the live folder while it was copied."""

    version: str
    created_at: str
    databases: dict[str, dict[str, int]] = field(default_factory=dict)  # "<engine>:<name>" -> rows per table
    vectors: dict[str, int] = field(default_factory=dict)  # index -> vectors
    cache_entries: int | None = None
    files: dict[str, str] = field(default_factory=dict)  # path in the backup (posix) -> SHA-256, hex
    sizes: dict[str, int] = field(default_factory=dict)  # path in the backup (posix) -> bytes (restore's cap)
    seconds: float = 0.0
    format: int = FORMAT

    @property
    def memories(self) -> int:
        return sum(tables.get("short_term_memories", 0) for tables in self.databases.values())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def read(folder: Path) -> Manifest:
        path = folder / MANIFEST
        try:
            fields = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise BackupError(f"{folder} is not a memory-sim backup (no {MANIFEST})") from None
        except (OSError, ValueError) as exc:
            raise BackupError(f"{path} cannot be read: {exc}") from exc
        if not isinstance(fields, dict) or fields.get("format") not in READABLE:
            raise BackupError(f"{path} is not a backup this version can read (format {FORMAT} expected)")
        known = {k: v for k, v in fields.items() if k in Manifest.__dataclass_fields__}
        return Manifest(**known)


@dataclass(frozen=True)
class RestoreReport:
    data_dir: Path
    source: Path
    previous: Path | None  # where the folder that was there now is (kept, never deleted)
    manifest: Manifest
    verified: bool = True  # False: a format-1 backup restored with `unverified=True` (no SHA-256 was checked)

    def to_json(self) -> dict[str, Any]:
        return {"data": str(self.data_dir), "from": str(self.source), "verified": self.verified,
                "previous": None if self.previous is None else str(self.previous), "manifest": self.manifest.to_json()}


# --- backing up ------------------------------------------------------------------------------------------------


def backup(env: Env, dest: str | Path) -> Manifest:
    """Copies the Env's data folder to `dest` (a new path, or an empty folder), verifies the copy by reopening
    it, and writes the manifest last. Call it where no write to the Env is in flight (see the module's note)."""
    from memory_sim import __version__

    if env.settings.backend != "local":
        raise BackupError(f"this Env reaches its data through an API ({env.settings.base_url or 'Cloudflare'}); only "
                          "the process holding a local data folder can back it up (Cloudflare keeps D1's own history)")
    outside_data_folder(env.settings.data_dir, dest)
    target = _new_destination(Path(dest))
    started = time.perf_counter()
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)  # left by a crash of an earlier try with the same pid
    partial.mkdir(parents=True, mode=0o700)  # a copy of the data: this user's only, as the data is
    try:
        manifest = Manifest(__version__, time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        _copy_parts(env, partial, manifest)
        verify_copy(partial, manifest)
        manifest.files = checksums(partial)  # after the check: reopening may tidy a copy
        manifest.sizes = {p: (partial / p).stat().st_size for p in manifest.files}
        manifest.seconds = round(time.perf_counter() - started, 3)
        (partial / MANIFEST).write_text(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n", "utf-8")
        if target.exists():
            target.rmdir()  # an empty folder the user made for it
        os.replace(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest


def backup_soon(scheduler: Any, system: MemorySystem, dest: str | Path) -> Future[Manifest]:
    """Queues `backup(system.env, dest)` on a running service's one worker (`scheduling.start_service`): it runs
    between two jobs, never during one, so no write is in flight while the folder is copied. The future gives the
    manifest."""
    from memory_sim.scheduling import run_soon

    env = system.env
    if not isinstance(env, Env):  # the memory system needs only the bindings; a backup needs the data folder too
        raise BackupError("this memory system was not opened through Env, so it has no data folder to back up")
    return run_soon(scheduler, lambda: backup(env, dest))


def outside_data_folder(data_dir: str | Path, dest: str | Path) -> None:
    """BackupError unless `dest` lies outside the data folder: a copy inside it would copy itself."""
    data, target = Path(data_dir).resolve(), Path(dest).resolve()
    if target == data or data in target.parents:
        raise BackupError(f"{dest} is inside the data folder {data_dir}; give a backup path outside it")


def checksums(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under `folder` but the manifest, by path relative to it (posix)."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST):
        with path.open("rb") as stream:
            found[path.relative_to(folder).as_posix()] = hashlib.file_digest(stream, "sha256").hexdigest()
    return found


def _new_destination(dest: Path) -> Path:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest} already exists and is not an empty folder; give a new path for the backup")
    return dest


def _copy_parts(env: Env, partial: Path, manifest: Manifest) -> None:
    from memory_sim.builder import local_d1_account

    data = Path(env.settings.data_dir)
    for engine, name, db, own in _databases(env):
        target = local_d1_account(partial, engine).path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            manifest.databases[f"{engine}:{name}"] = db.backup(target)
        finally:
            if own:
                db.close()
    manifest.vectors = _copy_index(env, partial / "vectorize")
    manifest.cache_entries = _copy_cache(env, data / CACHE_FILE, partial / CACHE_FILE)
    marker = data / ".memory-sim-demo"
    if marker.exists():
        shutil.copy2(marker, partial / marker.name)


def _databases(env: Env) -> Iterator[tuple[str, str, Any, bool]]:
    """(engine, name, open database, opened here) for every D1 database in the folder, the Env's own first."""
    from memory_sim.builder import local_d1_account

    settings = env.settings
    yield settings.d1_engine, settings.database_name, env.DB, False
    for engine in ("duckdb", "sqlite"):
        account = local_d1_account(settings.data_dir, engine)
        for name in account.list():
            if (engine, name) != (settings.d1_engine, settings.database_name):
                yield engine, name, account.get(name), True


def _copy_index(env: Env, dest: Path) -> dict[str, int]:
    account = env.vectorize_account
    copy = getattr(account, "backup", None)
    if copy is None or getattr(account, "folder", None) is None:
        return {}  # an index in memory or on a Chroma server: not in the folder (`check --repair` rebuilds it)
    counts: dict[str, int] = copy(dest)
    return counts


def _copy_cache(env: Env, live: Path, dest: Path) -> int | None:
    from memory_sim.embedding.cache import EmbeddingCache

    cache = getattr(env.embedder, "cache", None)
    if isinstance(cache, EmbeddingCache) and cache.path is not None:
        return cache.backup(dest)
    if not live.exists():
        return None
    with EmbeddingCache(live) as unopened:  # the embedder in use keeps no cache (e.g. a test's hashing one)
        return unopened.backup(dest)


# --- verifying ---------------------------------------------------------------------------------------------------


def verify_copy(folder: Path, manifest: Manifest) -> None:
    """Reopens every part of a copied folder and compares its counts with the manifest's; BackupError if any
    differs or does not open. (Opening may tidy the copy: a damaged cache there is moved aside.)"""
    problems = _d1_differences(folder, manifest) + _index_differences(folder, manifest)
    if manifest.cache_entries is not None:
        from memory_sim.embedding.cache import EmbeddingCache

        with EmbeddingCache(folder / CACHE_FILE) as cache:
            found = cache.count()
        if found != manifest.cache_entries:
            problems.append(f"the embedding cache has {found} entries, {manifest.cache_entries} were copied")
    if problems:
        raise BackupError(f"the copy in {folder} does not match what was backed up: {'; '.join(problems)}")


def _d1_differences(folder: Path, manifest: Manifest) -> list[str]:
    from memory_sim.builder import local_d1_account
    from memory_sim.errors import MemorySimError

    problems = []
    for key, expected in manifest.databases.items():
        engine, name = key.split(":", 1)
        try:
            db = local_d1_account(folder, engine).get(name)
        except MemorySimError as exc:
            problems.append(f"D1 {name} does not open ({exc})")
            continue
        try:
            found = db.row_counts()
            unread = _unreadable_table(db, found)
        except MemorySimError as exc:
            problems.append(f"D1 {name} cannot be read ({exc})")
            continue
        finally:
            db.close()
        if unread:
            problems.append(f"D1 {name} cannot be read ({unread})")
        elif found != expected:
            differ = sorted(t for t in set(found) | set(expected) if found.get(t) != expected.get(t))
            problems.append(f"D1 {name} differs in {', '.join(differ)}")
    return problems


def _unreadable_table(db: Any, tables: dict[str, int]) -> str | None:
    """Reads every row of every table (a damaged page fails the read, where counting may not touch it); what
    failed, or None."""
    for table in tables:
        quoted = table.replace('"', '""')
        try:
            db.prepare(f'SELECT * FROM "{quoted}"').raw()
        except Exception as exc:  # noqa: BLE001 - whatever the engine raises for a damaged file: one line
            return f"table {table}: {type(exc).__name__}: {exc}"
    return None


def _index_differences(folder: Path, manifest: Manifest) -> list[str]:
    if not manifest.vectors:
        return []
    from memory_sim.builder import local_vectorize_account
    from memory_sim.errors import MemorySimError

    try:
        account = local_vectorize_account(folder / "vectorize")
    except MemorySimError as exc:
        return [f"the index does not open ({exc})"]
    try:
        problems = []
        for name, expected in manifest.vectors.items():
            try:
                found = account.index(name).describe().vector_count
            except MemorySimError as exc:
                problems.append(f"index {name} does not open ({exc})")
                continue
            stored = account.stored_count(name)  # Chroma's own count, not only the snapshot's
            if found != expected or stored != expected:
                problems.append(f"index {name} has {stored} vectors ({found} in its snapshot), {expected} were copied")
        return problems
    finally:
        account.close()


# --- restoring ---------------------------------------------------------------------------------------------------


def restore(source: str | Path, data_dir: str | Path, *, unverified: bool = False) -> RestoreReport:
    """Puts the backup in `source` in place of `data_dir`: copied beside it, verified against its manifest, then
    swapped in by two renames; the folder that was there is kept as `<data>.before-restore-<time>`. Refused while
    another process has the folder open; nothing is changed when the backup does not verify. Nothing is copied
    that was not checked first (restore_check.py): no link is followed, only the manifest's files are copied, each
    cut off past its size and hashed as it is copied. A format-1 backup (no SHA-256s) restores only with
    `unverified=True`, and its report says so."""
    src, data = Path(source), Path(data_dir)
    manifest = Manifest.read(src)
    if data.resolve() == src.resolve():
        raise BackupError(f"{src} is the data folder itself; restore it into another folder")
    if not manifest.files and not unverified:
        raise BackupError(f"restore refused: the backup in {src} (format {manifest.format}) lists no SHA-256 to "
                          "check it against; restore it unverified (`memory-sim restore --unverified`) only if you "
                          "trust it; nothing was changed")
    found = restore_check.plain_files(src, MANIFEST)  # links, odd files and foreign owners refused: before any copy
    files = manifest.files or {p: "" for p in found}
    limits = restore_check.listed_files(src, found, files, manifest.sizes)
    with _folder_held(data):
        staging = data.with_name(f".{data.name}.restoring-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(mode=0o700)
        try:
            if manifest.files:
                restore_check.copy_listed(src, staging, limits, manifest.files)
            else:
                restore_check.copy_listed(src, staging, limits, checksums_of(src, limits))
            verify_copy(staging, manifest)
            previous = _swap_in(staging, data)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return RestoreReport(data, src, previous, manifest, verified=bool(manifest.files))


def checksums_of(src: Path, limits: dict[str, int]) -> dict[str, str]:
    """An unverified backup's files hashed as they are now (what the copy is then checked against: the copy is
    at least the files as they were read)."""
    found = {}
    for relative in limits:
        descriptor = os.open(src / relative, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(descriptor, "rb") as stream:
            found[relative] = hashlib.file_digest(stream, "sha256").hexdigest()
    return found


def _swap_in(staging: Path, data: Path) -> Path | None:
    previous = None
    if data.exists():
        previous = data.with_name(f"{data.name}.before-restore-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(data, previous)
    try:
        os.replace(staging, data)
    except OSError:
        if previous is not None:
            os.replace(previous, data)  # put the old folder back: nothing changed
        raise
    return previous


@contextmanager
def _folder_held(data: Path) -> Iterator[None]:
    """Holds the data folder's lock while it is swapped: no process has it open meanwhile."""
    if not data.exists():
        yield
        return
    from memory_sim.folder_lock import FolderLock

    with FolderLock.acquire(data, "memory-sim restore"):  # refused while any process has the folder open
        yield
