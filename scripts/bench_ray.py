"""`experiment run` on Ray against `--jobs 2` and one process, side by side in one run on this machine, and on a
two-node Ray cluster made of two `ray start` processes on loopback. Writes benchmarks/ray.md and ray.json.

Run it inside a loopback-only network namespace, so Ray can reach nothing beyond this machine:

    unshare -n sh -c 'ip link set lo up; .venv/bin/python scripts/bench_ray.py'
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
SPEC = """
name = "bench-ray"
[target]
kind = "village"
[base]
seeds = [1, 2, 3, 4]
npcs = 3
days = {days}
model = "fake/hashing"
d1_engine = "sqlite"
[grid]
decay_rate = [0.05, 0.6]
"""
RAY = ROOT / ".venv" / "bin" / "ray"


def timed(args: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, text=True, env=env, timeout=1800)
    return time.perf_counter() - started


def run_spec(spec: Path, out: Path, *flags: str, env: dict[str, str] | None = None) -> float:
    shutil.rmtree(out, ignore_errors=True)
    return timed([*CLI, "experiment", "run", str(spec), "--out", str(out), "--quiet", *flags], env)


def two_node_cluster(spec: Path, out: Path, scratch: Path) -> float:
    """A head of one CPU and a second node of one CPU, both `ray start` on 127.0.0.1; the run joins with `auto`."""
    # Ray's token authentication: one token shared by both nodes and the driver, as on a real cluster
    token = secrets.token_hex(32)
    env = os.environ | {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    subprocess.run([str(RAY), "start", "--head", "--port", "6390", "--include-dashboard", "false",
                    "--temp-dir", str(scratch / "ray"), *common], check=True, capture_output=True, env=env)
    try:
        subprocess.run([str(RAY), "start", "--address", "127.0.0.1:6390", *common], check=True,
                       capture_output=True, env=env)
        return run_spec(spec, out, "--ray", "auto", env=env | {"RAY_ADDRESS": "127.0.0.1:6390"})
    finally:
        subprocess.run([str(RAY), "stop", "--force"], capture_output=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=6)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    spec = scratch / "spec.toml"
    spec.write_text(SPEC.format(days=args.days))
    runs = 8
    load_before = os.getloadavg()
    seconds = {
        "one process": run_spec(spec, scratch / "one"),
        "--jobs 2": run_spec(spec, scratch / "jobs2", "--jobs", "2"),
        "--ray (local, 2 CPUs)": run_spec(spec, scratch / "ray", "--ray", "--ray-cpus", "2"),
    }
    try:
        seconds["--ray auto (2 nodes of 1 CPU, loopback)"] = two_node_cluster(spec, scratch / "cluster", scratch)
    except subprocess.CalledProcessError as exc:
        print(f"two-node cluster not measured: {(exc.stderr or str(exc))[-3000:]}", file=sys.stderr)
    load_after = os.getloadavg()
    shutil.rmtree(scratch, ignore_errors=True)
    base = seconds["--jobs 2"]
    rows = [{"setup": name, "seconds": round(s, 1), "per_run_s": round(s / runs, 2),
             "overhead_per_run_vs_jobs2_s": round((s - base) / runs, 2)} for name, s in seconds.items()]
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    result = {"machine": machine, "runs": runs, "days": args.days, "load_before": load_before,
              "load_after": load_after, "rows": rows}
    (args.out / "ray.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Experiments on Ray against --jobs",
        "",
        f"`scripts/bench_ray.py`: one spec of {runs} runs (the seeded village, 3 NPCs, {args.days} sim days, the "
        "hashing embedder, sqlite D1), each setup from a fresh results folder, one after the other in one run, "
        f"inside `unshare -n`. Machine: {machine}; load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after (other work shared the cores: compare rows with each other, not with "
        "another run).",
        "",
        "The local Ray's seconds include starting and stopping it (`--ray` starts one per command); the two-node "
        "cluster was started before its timing began, as a cluster is, so its row is the per-task cost alone.",
        "",
        "| setup | seconds | per run | overhead per run vs --jobs 2 |",
        "|---|---|---|---|",
        *(f"| {r['setup']} | {r['seconds']} | {r['per_run_s']} | {r['overhead_per_run_vs_jobs2_s']:+} |"
          for r in rows),
        "",
    ]
    (args.out / "ray.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
