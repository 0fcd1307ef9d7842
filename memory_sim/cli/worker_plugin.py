"""`memory-sim worker-plugin [--path]`: where the npm package memory-sim-miniflare is, as shipped with this Python
package, for a Worker project to install (`npm install <path>`; see docs/workers.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memory_sim.cli.output import json_flag, say


def plugin_folder() -> Path:
    """The npm package's folder inside the installed memory_sim (in a checkout: npm/memory-sim-miniflare)."""
    import memory_sim

    return (Path(memory_sim.__file__).parent / "worker_plugin").resolve()


def register(sub: Any) -> None:
    parser = sub.add_parser("worker-plugin", help="where the Miniflare plugin for wrangler dev is (npm install it)")
    parser.add_argument("--path", action="store_true", help="print only the folder (for scripts)")
    json_flag(parser)
    parser.set_defaults(handler=cmd_worker_plugin)


def cmd_worker_plugin(args: argparse.Namespace) -> int:
    folder = plugin_folder()
    if args.path and not args.json:
        print(folder)
        return 0
    say(args, f"memory-sim-miniflare: {folder}\ninstall it in your Worker's project: npm install {folder}\n"
        "then name it in wrangler.toml's dev environment (docs/workers.md)",
        {"package": "memory-sim-miniflare", "path": str(folder), "install": f"npm install {folder}"})
    return 0
