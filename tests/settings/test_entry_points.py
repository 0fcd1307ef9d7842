"""Every setting has its effect in every entry point: the file created, the backend used, the server reached.

Each case sets one setting one way (a flag before or after the verb, an environment variable, memory_sim.toml)
and runs one entry point in-process, with the hashing test embedder (`fake/hashing`) so no model loads; then it
looks at what the run left behind, not at the parsed value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from memory_sim.cli import main
from memory_sim.env import Env
from memory_sim.testing import TEST_TOKEN, ServerForTests

HASHING = "fake/hashing"
# Entry points that open the memory system or the bindings of a data folder (argv after the global options).
CLI_ENTRY_POINTS: dict[str, list[str]] = {
    "remember": ["remember", "tom", "The baker sold out by noon.", "--importance", "0.9"],
    "recall": ["recall", "tom", "mill wheel"],
    "stats": ["stats"],
    "consolidate": ["consolidate"],
    "check": ["check"],
    "d1 execute": ["d1", "execute", "memory", "--command", "SELECT count(*) AS n FROM short_term_memories"],
    "vectorize list": ["vectorize", "list"],
}


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory of its own and no MEMORY_SIM_* or CLOUDFLARE_* variables from outside."""
    for name in list(os.environ):
        if name.startswith(("MEMORY_SIM_", "CLOUDFLARE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORY_SIM_MODEL", HASHING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def prepare(data: Path, *options: str) -> None:
    """A folder with one memory (D1 database `memory`, the index), so every entry point has something to read."""
    assert main(["--data", str(data), *options, "remember", "tom", "The mill wheel broke.", "--importance", "0.9"]) == 0


def d1_files(data: Path) -> set[str]:
    return {p.name for p in (data / "d1").iterdir()} if (data / "d1").exists() else set()


# --- the data folder ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", sorted(CLI_ENTRY_POINTS))
@pytest.mark.parametrize("source", ["flag before", "flag after", "environment", "file"])
def test_data_folder(isolated: Path, monkeypatch: pytest.MonkeyPatch, verb: str, source: str) -> None:
    data = isolated / f"chosen-{source.replace(' ', '-')}"
    argv = list(CLI_ENTRY_POINTS[verb])
    if source == "flag before":
        argv = ["--data", str(data), *argv]
    elif source == "flag after":
        argv = [*argv, "--data", str(data)]
    elif source == "environment":
        monkeypatch.setenv("MEMORY_SIM_DATA", str(data))
    else:
        (isolated / "memory_sim.toml").write_text(f'data_dir = "{data}"\n')
    prepare(data)
    assert main(argv) == 0
    assert d1_files(data) == {"memory.duckdb"}
    assert not (isolated / ".memory_sim").exists()  # the default folder was never touched


# --- the D1 engine ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", sorted(CLI_ENTRY_POINTS))
@pytest.mark.parametrize("source", ["flag", "environment", "file"])
def test_d1_engine(isolated: Path, monkeypatch: pytest.MonkeyPatch, verb: str, source: str) -> None:
    data = isolated / "data"
    flags: list[str] = []
    if source == "flag":
        flags = ["--d1-engine", "sqlite"]
    elif source == "environment":
        monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "sqlite")
    else:
        data.mkdir()
        (data / "memory_sim.toml").write_text('d1_engine = "sqlite"\n')
    prepare(data, *flags)
    assert main(["--data", str(data), *flags, *CLI_ENTRY_POINTS[verb]]) == 0
    assert d1_files(data) == {"memory.sqlite"}  # never a DuckDB file beside it


def test_flag_wins_over_environment_and_file(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = isolated / "data"
    data.mkdir()
    (data / "memory_sim.toml").write_text('d1_engine = "sqlite"\n')
    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "sqlite")
    prepare(data, "--d1-engine", "duckdb")
    assert d1_files(data) == {"memory.duckdb"}


def test_environment_wins_over_file(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = isolated / "data"
    data.mkdir()
    (data / "memory_sim.toml").write_text('d1_engine = "sqlite"\n')
    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "duckdb")
    prepare(data)
    assert d1_files(data) == {"memory.duckdb"}


# --- the model and the vector backend ----------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["flag", "environment", "file"])
def test_model_is_the_one_the_new_index_records(isolated: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    from memory_sim.embedding.index_model import parse_description

    monkeypatch.delenv("MEMORY_SIM_MODEL")
    data = isolated / "data"
    flags: list[str] = []
    if source == "flag":
        flags = ["--model", HASHING]
    elif source == "environment":
        monkeypatch.setenv("MEMORY_SIM_MODEL", HASHING)
    else:
        data.mkdir()
        (data / "memory_sim.toml").write_text(f'embed_model = "{HASHING}"\n')
    prepare(data, *flags)
    with Env.local(data) as env:  # no model named: the index's own
        assert parse_description(env.vectorize_account.get_index("memories").description)["model"] == HASHING
        assert env.embedder.model == HASHING


def test_unknown_model_is_one_line_naming_the_setting(isolated: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMORY_SIM_MODEL", "no-such-model")
    assert main(["--data", str(isolated / "d"), "stats"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: setting embed_model (from $MEMORY_SIM_MODEL): unknown embedding model 'no-such-model'")
    assert "\n" not in err and not (isolated / "d").exists()


def test_vector_backend_memory_writes_no_index_files(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SIM_VECTOR_BACKEND", "memory")
    data = isolated / "data"
    prepare(data)
    assert d1_files(data) == {"memory.duckdb"} and not (data / "vectorize").exists()


# --- the backend: Cloudflare (the local server standing in for it) ----------------------------------------------


@pytest.fixture(scope="module")
def cloudflare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with ServerForTests(tmp_path_factory.mktemp("cloudflare"), d1_engine="sqlite") as server:
        yield server


def cloudflare_rows(server: ServerForTests, account_id: str) -> int:
    from memory_sim.cloudflare.d1 import CloudflareD1Account

    db = CloudflareD1Account(server.client(account_id)).get("memory")
    return int(db.prepare("SELECT count(*) AS n FROM short_term_memories").first("n"))


@pytest.mark.parametrize("verb", sorted(CLI_ENTRY_POINTS))
@pytest.mark.parametrize("source", ["flag", "environment"])
def test_backend_cloudflare_reaches_the_server(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, cloudflare: ServerForTests, verb: str, source: str
) -> None:
    account_id = cloudflare.fresh_account_id()
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", account_id)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TEST_TOKEN)
    monkeypatch.setenv("CLOUDFLARE_BASE_URL", cloudflare.base_url)
    flags = ["--backend", "cloudflare"] if source == "flag" else []
    if source == "environment":
        monkeypatch.setenv("MEMORY_SIM_BACKEND", "cloudflare")
    data = isolated / "data"
    prepare(data, *flags)
    assert cloudflare_rows(cloudflare, account_id) == 1  # the memory went to the account, not to the folder
    assert main(["--data", str(data), *flags, *CLI_ENTRY_POINTS[verb]]) == 0
    assert d1_files(data) == set() and not (data / "vectorize").exists()
    expected = 2 if verb == "remember" else 1
    assert cloudflare_rows(cloudflare, account_id) == expected


# --- the Python API -----------------------------------------------------------------------------------------------


ENV_OPENERS: dict[str, Callable[[Path], Env]] = {
    "Env.local(data)": lambda data: Env.local(data),
    "Env.local() with MEMORY_SIM_DATA": lambda data: Env.local(),
}


@pytest.mark.parametrize("opener", sorted(ENV_OPENERS))
def test_python_api_reads_the_environment(isolated: Path, monkeypatch: pytest.MonkeyPatch, opener: str) -> None:
    data = isolated / "data"
    monkeypatch.setenv("MEMORY_SIM_DATA", str(data))
    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "sqlite")
    with ENV_OPENERS[opener](data) as env:
        assert type(env.DB).__name__ == "SqliteDatabase"
    assert d1_files(data) == {"memory.sqlite"}


def test_python_api_can_ignore_the_environment(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "sqlite")
    data = isolated / "data"
    with Env.local(data, environ={}, embed_model=HASHING) as env:
        assert type(env.DB).__name__ == "DuckDBDatabase"
    assert d1_files(data) == {"memory.duckdb"}
