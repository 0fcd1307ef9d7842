"""`memory-sim` on bad arguments: exit 2, one line on stderr saying what was wrong, no traceback, and the data
folder exactly as it was (every file's bytes, and D1's rows read back by a separate read-only DuckDB connection).

The verbs run in-process through `main(argv)` on a small folder built once with the hashing embedder (its index
records that model, so the memory verbs open it without loading torch)."""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_sim.cli import main
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

TABLES = ("short_term_memories", "embedding_outbox", "diaries", "counters", "meta", "sequences", "npc_state", "forgotten")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    from memory_sim.env import Env

    root = tmp_path_factory.mktemp("cli-bad-input")
    data = root / "data"
    clock = SimClock(WorldTime(2, 0))
    with Env.local(data, embedder=HashingEmbedder(64)) as env:
        system = MemorySystem(env, clock=clock)
        system.remember(ShortTermMemory("tom", "Margaret brought me warm bread at dawn.", 0.9, WorldTime(1, 6)))
        system.remember(ShortTermMemory("margaret", "Tom mended my oven door for nothing.", 0.5, WorldTime(1, 9)))
        system.write_diary("margaret", 1)
        store.set_meta(env.DB, "world_seconds", repr(clock()))
    (root / "locomo.json").write_text("[]")
    yield {"data": data, "root": root, "file": root / "locomo.json", "demo": root / "demo-never-made"}


State = tuple[dict[str, Any], dict[str, list[tuple[Any, ...]]]]


def folder_state(data: Path, *, deep: bool = True) -> State:
    """Every file's bytes (or, when not `deep`, its size and modification time: cheaper, and any write moves it)
    and D1's rows, read through a separate read-only DuckDB connection."""
    import duckdb

    def mark(path: Path) -> Any:
        return hashlib.sha256(path.read_bytes()).hexdigest() if deep else (path.stat().st_size, path.stat().st_mtime_ns)

    files = {str(p.relative_to(data)): mark(p) for p in sorted(data.rglob("*")) if p.is_file()}
    with duckdb.connect(str(data / "d1" / "memory.duckdb"), read_only=True) as db:
        rows = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}
    return files, rows


@pytest.fixture(scope="module")
def baseline(world: dict[str, Path]) -> dict[bool, State]:
    states = {deep: folder_state(world["data"], deep=deep) for deep in (True, False)}
    files, rows = states[True]
    assert len(rows["short_term_memories"]) == 2 and any(name.startswith("vectorize/") for name in files)
    return states


def assert_refused(
    argv: list[str], world: dict[str, Path], baseline: dict[bool, State], capsys: pytest.CaptureFixture[str], deep: bool = True
) -> str:
    code = main(["--data", str(world["data"]), *argv])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2, (argv, code, out, err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) > len("error: "), (argv, err)
    assert "Traceback" not in out + err and out == "", (argv, out)
    assert folder_state(world["data"], deep=deep) == baseline[deep], argv
    assert not world["demo"].exists()
    return lines[0]


# --- (a) the issue's examples, each one ----------------------------------------------------------------------------

EXAMPLES = {
    "empty text": (["remember", "tom", ""], "text must not be empty"),
    "empty npc": (["remember", "", "hello"], "NPC id must not be empty"),
    "importance -1": (["remember", "tom", "hello", "--importance", "-1"], "importance must be a number in 0..1"),
    "importance nan": (["remember", "tom", "hello", "--importance", "nan"], "importance must be a number in 0..1"),
    "importance inf": (["remember", "tom", "hello", "--importance", "inf"], "importance must be a number in 0..1"),
    "day -5": (["remember", "tom", "hello", "--day", "-5"], "day must be in 0.."),
    "hour 24": (["remember", "tom", "hello", "--hour", "24"], "hour must be in 0..23"),
    "top-k 0": (["recall", "tom", "bread", "--top-k", "0"], "top_k must be in 1..100"),
    "top-k -3": (["recall", "tom", "bread", "--top-k", "-3"], "top_k must be in 1..100"),
    "top-k 100000": (["recall", "tom", "bread", "--top-k", "100000"], "top_k must be in 1..100"),
    "empty query": (["recall", "tom", ""], "query must not be empty"),
    "invalid UTF-8 text": (["remember", "tom", b"\xff\xfe bread".decode("utf-8", "surrogateescape")], "not valid UTF-8"),
    "invalid UTF-8 npc": (["recall", b"t\xc3om".decode("utf-8", "surrogateescape"), "bread"], "not valid UTF-8"),
    "demo 11 npcs": (["demo", "--npcs", "11"], "between 2 and 10 NPCs"),
    "export to a missing folder": (["export", "--vectorize-ndjson", "missing/dir/f.ndjson"], "folder does not exist"),
    "npc id over 64 bytes": (["remember", "abcdefghijklmnopqrstuvwx" + "🙂" * 11, "hello"], "at most 64"),
}


@pytest.mark.parametrize("argv, said", list(EXAMPLES.values()), ids=list(EXAMPLES))
def test_each_example_of_the_issue_is_one_line_and_exit_2(
    argv: list[str], said: str, world: dict[str, Path], baseline: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[0] == "demo":
        argv = ["demo", "--data", str(world["demo"]), *argv[1:]]
    assert said in assert_refused(argv, world, baseline, capsys)


def test_invalid_utf8_bytes_from_the_shell(world: dict[str, Path], baseline: Any) -> None:
    """The real entry point, with bytes in argv as a shell passes them (Python turns them into surrogates)."""
    code = "import sys; from memory_sim.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", code, "--data", str(world["data"]), "remember", "tom", b"\xff\xfe"],
                          capture_output=True, timeout=120)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and err.count("\n") == 1 and "argument 5 is not valid UTF-8" in err, err
    assert "Traceback" not in err and done.stdout == b""
    assert folder_state(world["data"]) == baseline[True]


def test_an_unexpected_failure_is_one_line_and_exit_1(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not bad input but a bug: still no traceback for the user, unless they ask for it."""
    from memory_sim.cli import memory as memory_verbs

    def broken(args: Any) -> int:
        raise RuntimeError("the ledger\nis upside down")

    monkeypatch.setattr(memory_verbs, "cmd_stats", broken)
    monkeypatch.delenv("MEMORY_SIM_DEBUG", raising=False)
    assert main(["--data", str(world["data"]), "stats"]) == 1
    err = capsys.readouterr().err
    assert err == ("error: internal error: RuntimeError: the ledger | is upside down "
                   "(run with MEMORY_SIM_DEBUG=1 for the traceback)\n")
    monkeypatch.setenv("MEMORY_SIM_DEBUG", "1")
    with pytest.raises(RuntimeError, match="upside down"):
        main(["--data", str(world["data"]), "stats"])


# --- (b) every verb, with generated bad arguments -------------------------------------------------------------------

CONTROL = [chr(c) for c in (*range(0, 32), 127)]


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def not_whole(text: str) -> bool:
    try:
        int(text)
        return False
    except ValueError:
        return True


texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
not_whole_numbers = st.one_of(st.sampled_from(["", "x", "1.5", "1e3", "nan", "0x10", "1,000", "++1", "٣.٣"]), texts.filter(not_whole))


def whole_outside(low: int, high: int | None) -> st.SearchStrategy[str]:
    below = st.integers(max_value=low - 1).map(str)
    above = st.nothing() if high is None else st.integers(min_value=high + 1).map(str)
    return st.one_of(below, above, not_whole_numbers)


def number_outside(low: float, high: float, *, include_low: bool = True) -> st.SearchStrategy[str]:
    outside = st.floats(allow_nan=True, allow_infinity=True).filter(
        lambda x: math.isnan(x) or math.isinf(x) or x < low or x > high or (x == low and not include_low)
    )
    return st.one_of(outside.map(repr), st.sampled_from(["nan", "-inf", "inf", "Infinity", "x", "", "1,5"]),
                     texts.filter(lambda t: not is_number(t)))


def not_in(*choices: str) -> st.SearchStrategy[str]:
    return texts.filter(lambda t: t not in choices)


blank = st.sampled_from(["", " ", "\t", "\n \t"])
bad_npc_ids = st.one_of(
    blank,
    st.text(min_size=1, max_size=40).filter(lambda t: t.strip() != "" and _bytes(t) <= 64).map(lambda t: t + "🙂" * 17),
    st.builds(lambda a, c, b: a + c + b, st.text("abc", max_size=5), st.sampled_from(CONTROL), st.text("xyz", max_size=5))
    .filter(str.strip),
)
bad_index_names = st.one_of(
    st.sampled_from(["", "Bad", "1abc", "a_b", "abc-", "abc\n", "-abc", "a" * 65, "naïve"]),
    texts.filter(lambda t: not re.fullmatch(r"[a-z]([a-z0-9-]*[a-z0-9])?", t) or _bytes(t) > 64),
)
bad_db_names = st.one_of(
    st.sampled_from(["", "a b", "../x", "x" * 65, "-x", "x\n", "ü"]),
    texts.filter(lambda t: not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", t)),
)
bad_days = whole_outside(0, 1_000_000_000)
missing_paths = st.sampled_from(["missing/dir/x.ndjson", "no-such-file.json", ""])
bad_outputs = st.sampled_from(["missing/dir/x.ndjson", ""])  # a new file in the working directory is a good output

# (argv before the slot, argv after it, bad values for the slot, a valid value for it)
Case = tuple[list[str], list[str], st.SearchStrategy[str], str]
EXTRA = "an-extra-argument"  # the slot of a verb that takes none: leaving it out would make the call valid
DEMO = "{demo}"
FILE = "{file}"
DATA = "{data}"
CASES: dict[str, list[Case]] = {
    "remember": [
        (["remember"], ["hello there"], bad_npc_ids, "tom"),
        (["remember", "tom"], [], blank, "hello there"),
        (["remember", "tom", "hi", "--importance"], [], number_outside(0.0, 1.0), "0.5"),
        (["remember", "tom", "hi", "--day"], [], bad_days, "3"),
        (["remember", "tom", "hi", "--hour"], [], whole_outside(0, 23), "7"),
        (["remember", "tom", "hi", "--type"], [], not_in("event", "relationship", "opinion", "place"), "event"),
        (["remember", "tom", "hi", "--about"], [], bad_npc_ids.filter(lambda t: t.strip(", ") != ""), "margaret"),
        (["remember", "tom", "hi", "--key"], [], st.sampled_from(["", "Debt:Mira", "debt mira", "k" * 65]), "debt:mira"),
    ],
    "recall": [
        (["recall"], ["bread"], blank, "tom"),
        (["recall", "tom"], [], blank, "bread"),
        (["recall", "tom", "bread", "--top-k"], [], whole_outside(1, 100), "5"),
        (["recall", "tom", "bread", "--mode"], [], not_in("vector", "keyword", "hybrid"), "hybrid"),
        (["recall", "tom", "bread", "--weighted", "--day"], [], bad_days, "2"),
    ],
    "jobs": [([job, "--day"], [], bad_days, "2") for job in ("consolidate", "prune", "retry")],
    "npcs": [(["npcs"], [], texts.filter(lambda t: not t.startswith("-")), "--json")],
    "npc": [
        (["npc"], [], st.one_of(bad_npc_ids, st.just("a,b")), "tom"),
        (["npc", "tom", "--name"], [], blank, "Tom"),
        (["npc", "tom", "--name", "Tom", "--alias"], [], st.one_of(blank, st.just("a,b")), "Old Tom"),
        (["npc", "tom", "--role"], [], blank, "the blacksmith"),
    ],
    "memories": [
        (["memories"], [], blank, "tom"),
        (["memories", "tom", "--limit"], [], whole_outside(1, 100), "5"),
        (["memories", "tom", "--since-day"], [], bad_days, "1"),
        (["memories", "tom", "--until-day"], [], bad_days, "1"),
        (["memories", "tom", "--state"], [], not_in("none", "pending", "indexed", "unindexed", "forgotten"), "indexed"),
        (["memories", "tom", "--type"], [], not_in("event", "relationship", "opinion", "place"), "event"),
        (["memories", "tom", "--cursor"], [], st.sampled_from(["", "x", "-1", "1.5"]), "1"),
    ],
    "forget": [
        (["forget", "--reason", "wrong"], [], blank, "no-such-memory"),
        (["forget", "--npc"], [], blank, "no-such-npc"),
        (["forget", "no-such-memory", "--reason"], [], blank, "wrong"),
    ],
    "context": [
        (["context"], ["go to the pub?"], blank, "tom"),
        (["context", "tom"], [], blank, "go to the pub?"),
        (["context", "tom", "go to the pub?", "--top-k"], [], whole_outside(1, 100), "5"),
    ],
    "relationship": [
        (["relationship"], ["margaret"], blank, "tom"),
        (["relationship", "tom"], [], blank, "margaret"),
        (["relationship", "tom", "margaret", "--top-k"], [], whole_outside(1, 100), "5"),
    ],
    "state": [
        (["state"], [], blank, "margaret"),
        (["state", "margaret"], [], st.sampled_from(["Opinion:Tom", "debt mira", "x" * 65, "ü:x"]), "opinion:tom"),
    ],
    "diary": [
        (["diary"], ["--day", "1"], blank, "margaret"),
        (["diary", "margaret", "--day"], [], bad_days, "1"),
    ],
    "stats": [(["stats"], [], texts.filter(lambda t: not t.startswith("-")), EXTRA)],
    "compact": [(["compact"], [], texts.filter(lambda t: not t.startswith("-")), EXTRA)],
    "reembed": [(["reembed", "--model"], [], st.sampled_from(["", "no-such-model", "@cf/meta/nope", "minilm2"]), "minilm")],
    "run": [
        (["run", "--scale"], [], number_outside(0.0, math.inf, include_low=False), "60"),
        (["run", "--for-seconds"], [], number_outside(0.0, math.inf), "1"),
    ],
    "demo": [
        (["demo", "--data", DEMO, "--npcs"], [], whole_outside(2, 10), "3"),
        (["demo", "--data", DEMO, "--days"], [], whole_outside(1, 1_000_000_000), "1"),
        (["demo", "--data", DEMO, "--threads"], [], whole_outside(0, 1024), "1"),
        (["demo", "--data"], [], st.just(FILE), DEMO),
    ],
    "vectorize": [
        (["vectorize", "create"], ["--dimensions", "3", "--metric", "cosine"], bad_index_names, "fresh"),
        (["vectorize", "create", "fresh", "--dimensions"], ["--metric", "cosine"], whole_outside(1, 1536), "3"),
        (["vectorize", "create", "fresh", "--dimensions", "3", "--metric"], [], not_in("cosine", "euclidean", "dot-product"), "cosine"),
        *[(["vectorize", verb], [], bad_index_names, "memories") for verb in ("get", "delete", "info", "list-metadata-index")],
        *[(["vectorize", verb, "memories", "--file"], [], st.one_of(missing_paths, st.just(DATA)), FILE)
          for verb in ("insert", "upsert")],
        (["vectorize", "list"], [], texts.filter(lambda t: not t.startswith("-")), EXTRA),
        (["vectorize", "query", "memories", "--vector"], [], number_outside(-math.inf, math.inf), "1"),
        (["vectorize", "query", "memories", "--vector", "1", "--top-k"], [], whole_outside(1, 100), "5"),
        (["vectorize", "query", "memories", "--vector", "1", "--filter"], [],
         st.sampled_from(["{bad", "[]", "{}", '{"$x": 1}', "null", "1", '{"a": {"$regex": "x"}}']), '{"npcId": "tom"}'),
        (["vectorize", "query", "memories", "--vector", "1", "--namespace"], [], st.sampled_from(["", "n" * 65]), "tom"),
        *[(["vectorize", verb, "memories", "--ids"], [], st.sampled_from(["", "x" * 65, "🙂" * 17]), "m1")
          for verb in ("get-vectors", "delete-vectors")],
        (["vectorize", "list-vectors", "memories", "--count"], [], whole_outside(1, 1000), "10"),
        (["vectorize", "create-metadata-index", "memories", "--property-name"], ["--type", "string"],
         st.sampled_from(["", "$x", 'a"b']), "mood"),
        (["vectorize", "delete-metadata-index", "memories", "--property-name"], [], st.sampled_from(["", "$x", 'a"b']), "mood"),
        (["vectorize", "create-metadata-index", "memories", "--property-name", "mood", "--type"], [],
         not_in("string", "number", "boolean"), "string"),
        (["vectorize"], [], not_in("create", "get", "list", "delete", "info", "insert", "upsert", "query", "get-vectors",
                                   "delete-vectors", "list-vectors", "create-metadata-index", "list-metadata-index",
                                   "delete-metadata-index"), "list"),
    ],
    "d1": [
        (["d1", "execute"], ["--command", "SELECT 1"], bad_db_names, "memory"),
        (["d1", "execute", "memory", "--command"], [], blank, "SELECT 1"),
        (["d1", "execute", "memory", "--file"], [], st.one_of(missing_paths, st.just(DATA)), FILE),
        (["d1", "create"], [], bad_db_names, "fresh"),
        (["d1", "delete"], [], bad_db_names, "fresh"),
        (["d1", "--engine"], ["list"], not_in("duckdb", "sqlite"), "duckdb"),
        (["d1", "list"], [], texts.filter(lambda t: not t.startswith("-")), EXTRA),
    ],
    "ai": [
        (["ai", "run", "minilm", "--text", "x", "--pooling"], [], not_in("cls", "mean"), "cls"),
        (["ai"], [], not_in("run"), "run"),
        (["models"], [], texts.filter(lambda t: not t.startswith("-")), "--json"),
    ],
    "serve": [
        (["serve", "--port"], [], whole_outside(1, 65535), "8787"),
        (["serve", "--visibility-lag"], [], number_outside(0.0, math.inf), "0"),
        (["serve", "--host"], [], blank, "127.0.0.1"),
        (["serve", "--log-level"], [], not_in("critical", "error", "warning", "info", "debug"), "info"),
        (["serve", "--d1-engine"], [], not_in("duckdb", "sqlite"), "duckdb"),
    ],
    "backup": [
        (["backup"], [], st.one_of(st.sampled_from(["missing/dir/backup", ""]), st.just(DATA)), "{root}/backup"),
    ],
    "restore": [
        (["restore"], [], st.sampled_from(["no-such-backup", ""]), "{root}"),
    ],
    "export": [
        (["export", "--vectorize-ndjson"], [], st.one_of(bad_outputs, st.just(DATA)), "{root}/out.ndjson"),
        (["export", "--d1-sql"], [], st.one_of(bad_outputs, st.just(DATA)), "{root}/out.sql"),
        (["export", "--d1-sql", "{root}/out.sql", "--index"], [], bad_index_names, "memories"),
        (["export", "--d1-sql", "{root}/out.sql", "--database"], [], bad_db_names, "memory"),
    ],
    "push": [
        (["push", "--base-url"], [], st.sampled_from(["", "not a url", "ftp://x", "http://", "//host"]), "http://127.0.0.1:9"),
        (["push", "--progress"], [], st.one_of(missing_paths, st.just(DATA)), "{root}/progress.json"),
        (["push", "--index"], [], bad_index_names, "memories"),
    ],
    "pull": [
        (["pull", "--base-url"], [], st.sampled_from(["", "not a url", "ftp://x", "http://", "//host"]), "http://127.0.0.1:9"),
        (["pull", "--progress"], [], st.one_of(bad_outputs, st.just(DATA)), "{root}/progress.json"),
        (["pull", "--index"], [], bad_index_names, "memories"),
    ],
    "check": [(["check"], [], texts.filter(lambda t: not t.startswith("-")), "--json")],
    "worker-plugin": [(["worker-plugin"], [], texts.filter(lambda t: not t.startswith("-")), "--path")],
    "eval": [
        (["eval", "locomo", "--dataset"], [], missing_paths, FILE),
        (["eval", "locomo", "--dataset", FILE, "--conversations"], [], whole_outside(1, None), "1"),
        (["eval", "locomo", "--dataset", FILE, "--threads"], [], whole_outside(1, 1024), "1"),
        (["eval", "locomo", "--dataset", FILE, "--modes"], [], st.sampled_from(["psychic", "", ",", "vector,psychic"]), "vector"),
        (["eval", "locomo", "--dataset", FILE, "--out"], [], st.just(FILE), "{root}/eval-out"),
        (["eval", "village", "--questions"], [], missing_paths, FILE),
        (["eval"], [], not_in("locomo", "village"), "village"),
    ],
    "bench": [
        (["bench", "--sizes"], [], st.one_of(st.sampled_from(["", "10", "x", "1000,x", "10000,", "999"]),
                                             st.integers(max_value=999).map(str)), "10000"),
        (["bench", "--out"], [], st.just(FILE), "{root}/bench-out"),
    ],
    "experiment": [
        (["experiment", "run"], [], missing_paths, FILE),
        (["experiment", "run", FILE, "--jobs"], [], whole_outside(1, 64), "1"),
        (["experiment", "run", FILE, "--out"], [], st.just(FILE), "{root}/experiment-out"),
        (["experiment", "report"], [], missing_paths, "{root}"),
        (["experiment", "export"], [], missing_paths, "{root}"),
        (["experiment", "export", "{root}", "--format"], [], not_in("parquet", "csv"), "csv"),
        (["experiment"], [], not_in("run", "report", "export"), "report"),
    ],
    "inspect": [
        (["inspect", "--port"], [], whole_outside(1, 65535), "8790"),
        (["inspect", "--log-level"], [], not_in("critical", "error", "warning", "info", "debug"), "warning"),
    ],
    "top level": [
        (["--data"], ["stats"], st.sampled_from(["", FILE]), DATA),
        ([], [], not_in("vectorize", "d1", "ai", "models", "demo", "remember", "recall", "consolidate", "prune", "retry",
                        "npcs", "npc", "memories", "forget", "context", "relationship", "diary", "stats", "compact", "reembed", "run", "serve", "export", "push", "pull", "check", "eval", "bench",
                        "experiment", "inspect").filter(
                            lambda t: not t.startswith("-")), "stats"),
    ],
}
ALL_CASES = [case for cases in CASES.values() for case in cases]


def fill(tokens: list[str], world: dict[str, Path]) -> list[str]:
    names = {"{demo}": world["demo"], "{file}": world["file"], "{data}": world["data"]}
    return [str(names[t]) if t in names else t.replace("{root}", str(world["root"])) for t in tokens]


@st.composite
def bad_argv(draw: st.DrawFn) -> list[str]:
    """One case with a bad value in its slot; or its valid form spoilt: an unknown option, a required argument
    left out, or one argument made of bytes that are not UTF-8."""
    before, after, bad, valid = draw(st.sampled_from(ALL_CASES))
    how = draw(st.sampled_from(["bad value"] * 4 + ["unknown option", "left out", "not UTF-8"]))
    if how == "bad value":
        value = draw(bad.filter(lambda v: not v.startswith(("-h", "--h"))))  # argparse would print help, exit 0
        return before + [value] + after
    argv = before + [valid] + after
    if how == "unknown option":
        return argv + ["--no-such-option"]
    if how == "left out" and before and not before[-1].startswith("-") and not valid.startswith("-") and valid != EXTRA:
        return before + after  # a positional argument missing
    spoilt = draw(st.integers(0, len(argv) - 1))
    return [t + "\udcff" if i == spoilt else t for i, t in enumerate(argv)]


def verbs(parser: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every command and sub-command the parser knows, as argv prefixes."""
    found: set[tuple[str, ...]] = set()
    for action in parser._actions:
        for name, sub in (getattr(action, "choices", None) or {}).items() if action.nargs == "A..." else ():
            found |= {path + (name,)} | verbs(sub, path + (name,))
    return found


def test_every_verb_and_sub_verb_has_cases() -> None:
    from memory_sim.cli import build_parser

    covered = {tuple(t for t in case[0] if not t.startswith("-"))[:n] for case in ALL_CASES for n in (1, 2)}
    assert verbs(build_parser()) <= covered


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=bad_argv())
def test_bad_arguments_to_any_verb_are_refused_cleanly(
    argv: list[str], world: dict[str, Path], baseline: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(fill(argv, world), world, baseline, capsys, deep=False)
