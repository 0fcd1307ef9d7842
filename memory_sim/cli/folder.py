"""The data folder's lock around verbs that open its files without an `Env` (d1, vectorize, export, push).

Verbs built on an `Env` need nothing: the Env holds the lock (memory_sim/folder_lock.py), or goes through the
folder's owner. Verbs that can work over the owner's API (`through_owner=True`) find its route in
`args.owner_route` (memory_sim/owner.py) when another process owns the folder and serves it.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def owning_folder(handler: Handler, *, through_owner: bool = False) -> Handler:
    """`handler`, run while this process holds `--data`'s lock; a second opener is refused in one line, unless
    `through_owner` and the owner serves the folder."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        from memory_sim.errors import DataInUseError
        from memory_sim.folder_lock import FolderLock
        from memory_sim.owner import announce, find_route

        if args.settings.backend != "local":  # the data lives in the Cloudflare account, not in the folder
            return handler(args)
        try:
            held = FolderLock.acquire(args.data)
        except DataInUseError:
            route = find_route(args.data) if through_owner else None
            if route is None:
                raise
            announce(route)
            args.owner_route = route
            return handler(args)
        with held:
            return handler(args)

    return run
