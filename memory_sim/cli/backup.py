"""`memory-sim backup DEST` and `memory-sim restore SRC` (memory_sim/backup.py).

`backup` opens the data folder (with the embedder its index was built with; no model is loaded), copies it
consistently to DEST and verifies the copy. `restore` verifies a backup and swaps it in for the data folder,
keeping the folder that was there; it refuses while another process has the folder open.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    backup = sub.add_parser("backup", help="copy the data folder (D1, index, cache) to DEST, verified by reopening it")
    backup.add_argument("dest", type=arguments.new_folder, help="a new folder (or an empty one) for the backup")
    backup.add_argument("--json", action="store_true", help="print the manifest as JSON")
    backup.set_defaults(handler=cmd_backup)

    restore = sub.add_parser("restore", help="verify the backup SRC and swap it in for the data folder")
    restore.add_argument("src", type=arguments.existing_folder, help="a folder written by `memory-sim backup`")
    restore.add_argument("--unverified", action="store_true",
                         help="restore a format-1 backup, which has no SHA-256s to check it against")
    restore.add_argument("--json", action="store_true", help="print what was done as JSON")
    restore.set_defaults(handler=cmd_restore)


def cmd_backup(args: argparse.Namespace) -> int:
    from memory_sim.backup import backup, outside_data_folder
    from memory_sim.builder import build_env, build_local_env

    outside_data_folder(args.data, args.dest)  # at once, before the folder is opened
    if args.settings.backend != "local":
        env = build_env(args.settings)  # refused by backup(), in its words
    else:  # the folder to itself: through its owner, nothing could be copied consistently
        env = build_local_env(args.settings, folder_lock=_folder_to_itself(args.data))
    with env:
        manifest = backup(env, args.dest)
    if args.json:
        print(json.dumps(manifest.to_json(), indent=2, sort_keys=True))
        return 0
    vectors = sum(manifest.vectors.values())
    cache = "no cache" if manifest.cache_entries is None else f"{manifest.cache_entries} cached embeddings"
    print(f"backed up {args.data} to {args.dest}: {manifest.memories} memories in D1, {vectors} vectors, {cache}; "
          f"verified by reopening the copy ({manifest.seconds:.2f} s)")
    return 0


def _folder_to_itself(data: str) -> Any:
    from memory_sim.errors import DataInUseError
    from memory_sim.folder_lock import FolderLock, read_owner

    try:
        return FolderLock.acquire(data)
    except DataInUseError:
        owner = read_owner(data)
        who = "another process" if owner is None else f"pid {owner.pid} ({owner.verb})"
        raise DataInUseError(f"{data} is in use by {who}; a backup copies the folder while nothing else writes it: "
                             "stop that process first, or back up from it (memory_sim.backup.backup_soon)") from None


def _verified(report: Any) -> str:
    if not report.verified:
        return "UNVERIFIED: a format-1 backup has no SHA-256s; every table was read"
    return f"verified: {len(report.manifest.files)} files by SHA-256, every table read"


def cmd_restore(args: argparse.Namespace) -> int:
    from memory_sim.backup import restore

    report = restore(args.src, args.data, unverified=args.unverified)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
        return 0
    kept = "" if report.previous is None else f"; the folder that was there is now {report.previous}"
    print(f"restored {args.data} from {args.src} (taken {report.manifest.created_at}, {report.manifest.memories} "
          f"memories; {_verified(report)}){kept}")
    return 0
