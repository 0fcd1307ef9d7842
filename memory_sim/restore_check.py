"""What `restore` checks before it copies a byte (memory_sim/backup.py): a backup is copied only as far as its
manifest vouches for it.

- No link anywhere in the backup (a file or a folder that is a symbolic link, or anything but plain files and
  folders) is followed: the backup is refused, before any copy. (A 4 MB backup holding a loop link and a link to a
  300 MB folder wrote 11.4 GB in 17 s before it was refused; linked to a system folder it reached 59 GB.)
- Only the files the manifest lists are copied, each opened without following links, hashed as it is copied and
  cut off past its size (the manifest's `sizes`, or the size it had when checked): the copy never holds more than
  the manifest says, and a file that differs from its SHA-256 stops the restore.
- The backup's folders and files follow the data folder's ownership rules (trust.py): they belong to you and
  nobody else can write them.
- A format-1 backup has no SHA-256s: it restores only when asked to restore it unverified.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from memory_sim.errors import BackupError
from memory_sim.trust import own_folder_problem

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1 << 20


def refused(src: Path, why: str) -> BackupError:
    return BackupError(f"restore refused: {why} in the backup {src}; nothing was changed")


def plain_files(src: Path, manifest_name: str) -> dict[str, int]:
    """Every file of the backup (posix path -> size), walked without following links: BackupError on a link, on
    anything that is not a plain file or folder, or on a folder or file another user owns or others can write."""
    found: dict[str, int] = {}
    problem = own_folder_problem(src)
    if problem is not None:
        raise refused(src, problem)
    for folder, folders, files in os.walk(src, followlinks=False):
        for name in folders + files:
            path = Path(folder) / name
            info = os.lstat(path)
            relative = path.relative_to(src).as_posix()
            if stat.S_ISLNK(info.st_mode):
                raise refused(src, f"{relative} is a symbolic link (a backup holds none)")
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise refused(src, f"{relative} is not a plain file or folder")
            problem = own_folder_problem(path)
            if problem is not None:
                raise refused(src, problem.replace(f"the data folder {path}", relative))
            if stat.S_ISREG(info.st_mode) and relative != manifest_name:
                found[relative] = info.st_size
    return found


def listed_files(src: Path, found: dict[str, int], checksums: dict[str, str], sizes: dict[str, int]) -> dict[str, int]:
    """The files to copy, each with the most bytes it may have: exactly the manifest's, or BackupError."""
    missing = sorted(set(checksums) - set(found))
    extra = sorted(set(found) - set(checksums))
    grown = sorted(p for p in checksums if p in found and p in sizes and found[p] != sizes[p])
    if missing or extra or grown:
        parts = ([f"{', '.join(missing)} missing"] if missing else []) + \
            ([f"{', '.join(extra)} not in its manifest"] if extra else []) + \
            ([f"{', '.join(grown)} differ from their SHA-256 (not of the size its manifest gives)"] if grown else [])
        raise refused(src, "; ".join(parts))
    return {p: sizes.get(p, found[p]) for p in checksums}


def copy_listed(src: Path, staging: Path, limits: dict[str, int], checksums: dict[str, str]) -> None:
    """Copies each listed file into `staging` (opened no-follow, hashed as copied, cut off past its limit)."""
    for relative, limit in sorted(limits.items()):
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        digest = hashlib.sha256()
        copied = 0
        descriptor = os.open(src / relative, os.O_RDONLY | _NOFOLLOW)
        with os.fdopen(descriptor, "rb") as source, open(target, "xb") as sink:
            while chunk := source.read(_CHUNK):
                copied += len(chunk)
                if copied > limit:
                    raise refused(src, f"{relative} grew past {limit:,} bytes while it was copied")
                digest.update(chunk)
                sink.write(chunk)
        if digest.hexdigest() != checksums[relative]:
            raise refused(src, f"{relative} differs from its SHA-256 (the backup is not as it was taken)")
