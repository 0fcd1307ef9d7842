"""The examples of docs/configuration.md run as written, and its settings table lists every setting."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory_sim.settings import Settings, env_name

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text("utf-8"), re.S)


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_SIM_", "CLOUDFLARE_"))}
    env["MEMORY_SIM_MODEL"] = "fake/hashing"  # the examples' output does not depend on the model; no torch here
    return env


def test_python_example_prints_what_its_comments_say(tmp_path: Path, clean_env: dict[str, str]) -> None:
    (code,) = blocks("python")
    expected = [m.group(1).strip() for line in code.splitlines() if (m := re.search(r"print\(.*\)\s+#\s*(.+)$", line))]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=clean_env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected


def test_console_example_is_what_the_cli_prints(tmp_path: Path, clean_env: dict[str, str]) -> None:
    (console,) = blocks("console")
    command, expected = console.strip().splitlines()
    variable, _, rest = command.removeprefix("$ ").partition(" ")
    name, value = variable.split("=")
    argv = rest.split()[1:]  # after `memory-sim`
    done = subprocess.run([sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())", *argv],
                          cwd=tmp_path, env={**clean_env, name: value}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == expected


def test_toml_examples_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml, durable = blocks("toml")
    (tmp_path / "memory_sim.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(environ={})
    assert settings.d1_engine == "sqlite" and settings.embed_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert settings.d1_sqlite_synchronous == "normal"
    (tmp_path / "memory_sim.toml").write_text(durable)
    assert Settings.load(environ={}).d1_sqlite_synchronous == "full"


def test_table_names_every_setting_and_its_variable() -> None:
    text = DOC.read_text("utf-8")
    for field in Settings.model_fields:
        assert f"`{field}`" in text, f"docs/configuration.md does not list the setting {field}"
        assert f"`{env_name(field)}`" in text, f"docs/configuration.md does not name ${env_name(field)}"
