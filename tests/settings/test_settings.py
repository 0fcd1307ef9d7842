"""Settings: flags > environment > memory_sim.toml > defaults, and one clear line for each bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.settings import Settings, SettingsError


def write_config(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "memory_sim.toml"
    path.write_text(text, "utf-8")
    return path


def test_defaults_with_nothing_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(environ={})
    assert (settings.backend, settings.d1_engine, settings.vector_backend) == ("local", "duckdb", "chroma")
    assert settings.data_dir == Path(".memory_sim") and settings.embed_model == "default"


@pytest.mark.parametrize("field, variable, file_value, env_value, flag_value", [
    ("d1_engine", "MEMORY_SIM_D1_ENGINE", "sqlite", "duckdb", "sqlite"),
    ("backend", "MEMORY_SIM_BACKEND", "cloudflare", "local", "cloudflare"),
    ("embed_model", "MEMORY_SIM_MODEL", "minilm", "default", "@cf/baai/bge-base-en-v1.5"),
    ("account_id", "CLOUDFLARE_ACCOUNT_ID", "from-file", "from-env", "from-flag"),
    ("index_name", "MEMORY_SIM_INDEX", "file-index", "env-index", "flag-index"),
])
def test_precedence_flag_over_environment_over_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, variable: str, file_value: str, env_value: str,
    flag_value: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    write_config(data, f'{field} = "{file_value}"\n')
    base = {"MEMORY_SIM_DATA": str(data)}
    assert getattr(Settings.load(environ=base), field) == file_value
    assert getattr(Settings.load(environ={**base, variable: env_value}), field) == env_value
    assert getattr(Settings.load(environ={**base, variable: env_value}, **{field: flag_value}), field) == flag_value


def test_data_folder_file_wins_over_working_directory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, 'd1_engine = "sqlite"\nindex_name = "cwd"\n')
    assert Settings.load(environ={}, data_dir=tmp_path / "empty").index_name == "cwd"
    write_config(tmp_path / "own", 'index_name = "own"\n')
    own = Settings.load(environ={}, data_dir=tmp_path / "own")
    assert own.index_name == "own" and own.d1_engine == "duckdb"  # one file is read, not merged with the other


def test_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", "sqlite")
    monkeypatch.setenv("MEMORY_SIM_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("DATA_DIR", "/not/this")  # a bare field name is no setting
    settings = Settings.load()
    assert settings.d1_engine == "sqlite" and settings.data_dir == tmp_path / "d"


@pytest.mark.parametrize("environ, expected", [
    ({"MEMORY_SIM_D1_ENGINE": "postgres"}, "setting d1_engine (from $MEMORY_SIM_D1_ENGINE): expected 'duckdb' or 'sqlite', got 'postgres'"),
    ({"MEMORY_SIM_BACKEND": "aws"}, "setting backend (from $MEMORY_SIM_BACKEND): expected 'local' or 'cloudflare', got 'aws'"),
    ({"MEMORY_SIM_MODEL": "gpt-embed-9"}, "setting embed_model (from $MEMORY_SIM_MODEL): unknown embedding model 'gpt-embed-9'"),
    ({"CLOUDFLARE_BASE_URL": "api.cloudflare.com"}, "setting base_url (from $CLOUDFLARE_BASE_URL): 'api.cloudflare.com' is not an http(s) URL"),
    ({"MEMORY_SIM_CHROMA_URL": "http://127.0.0.1:99999"}, "setting chroma_url (from $MEMORY_SIM_CHROMA_URL): 'http://127.0.0.1:99999' has a malformed port"),
])
def test_bad_values_are_one_line_naming_setting_and_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SettingsError) as caught:
        Settings.load(environ=environ)
    assert str(caught.value).startswith(expected)
    assert "\n" not in str(caught.value)


def test_bad_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_config(tmp_path, 'd1_engin = "sqlite"\n')
    with pytest.raises(SettingsError, match=r"memory_sim.toml: unknown setting 'd1_engin'"):
        Settings.load(environ={})
    path.write_text('d1_engine = "pg"\n')
    with pytest.raises(SettingsError, match=rf"setting d1_engine \(from {path}\): expected"):
        Settings.load(environ={})
    path.write_text("d1_engine = \n")
    with pytest.raises(SettingsError, match="cannot read the settings file"):
        Settings.load(environ={})


def test_model_folder_is_accepted_by_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Settings.load(environ={}, embed_model=str(tmp_path)).embed_model == str(tmp_path)


def test_replace_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(environ={})
    assert settings.replace(d1_engine="sqlite").d1_engine == "sqlite"
    with pytest.raises(SettingsError, match="d1_engine"):
        settings.replace(d1_engine="pg")
