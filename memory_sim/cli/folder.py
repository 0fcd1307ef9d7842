"""The data folder's lock around verbs that open its files without an `Env` (d1, vectorize, export, push).

Verbs built on an `Env` need nothing: the Env holds the lock (memory_sim/folder_lock.py).
"""

from __future__ import annotations

import argparse
import functools
from typing import Callable

Handler = Callable[[argparse.Namespace], int]


def owning_folder(handler: Handler) -> Handler:
    """`handler`, run while this process holds `--data`'s lock; a second opener is refused in one line."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        from memory_sim.folder_lock import FolderLock

        if args.settings.backend != "local":  # the data lives in the Cloudflare account, not in the folder
            return handler(args)
        with FolderLock.acquire(args.data):
            return handler(args)

    return run
