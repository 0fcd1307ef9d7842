"""`Settings`: every knob of memory_sim, typed and validated once, from four places in this order of precedence:

    command-line flags  >  environment variables  >  memory_sim.toml  >  defaults

The file is `memory_sim.toml` in the data folder, else in the working directory (keys are the field names below,
e.g. `d1_engine = "sqlite"`). Environment variables are `MEMORY_SIM_*`, and Cloudflare's own
`CLOUDFLARE_ACCOUNT_ID`, `CLOUDFLARE_API_TOKEN` and `CLOUDFLARE_BASE_URL`. A bad value is refused with one line
naming the setting, where it came from and what is allowed (`SettingsError`, a `ConfigError`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple
from urllib.parse import urlparse

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from memory_sim.errors import ConfigError

Backend = Literal["local", "cloudflare"]
D1Engine = Literal["duckdb", "sqlite"]
SqliteSynchronous = Literal["normal", "full"]
VectorBackend = Literal["chroma", "memory"]
EmbedRuntime = Literal["onnx", "torch"]
EmbedProvider = Literal["auto", "local", "workers-ai", "openai"]

CONFIG_FILE = "memory_sim.toml"
HASHING_MODEL = "fake/hashing"  # the deterministic bag-of-words test embedder: fast tests and crash trials
DEFAULT_DATA_DIR = Path("./.memory_sim")
# Models known by name (aliases included); any sentence-transformers folder on disk is accepted by path too.
KNOWN_MODELS = frozenset({
    "default", "@cf/baai/bge-base-en-v1.5", "BAAI/bge-base-en-v1.5", "bge-base-en-v1.5",
    "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "minilm",
    "text-embedding-3-small", "text-embedding-3-large",
    HASHING_MODEL,
})


class SettingsError(ConfigError):
    """A setting with a value that cannot work; the message names the setting and what is allowed."""


class Settings(BaseSettings):
    """Where the bindings live and how they behave. `Settings.load(**flags)` reads all four sources."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORY_SIM_", frozen=True, populate_by_name=True, extra="forbid", validate_default=True
    )

    data_dir: Path = Field(DEFAULT_DATA_DIR, validation_alias="MEMORY_SIM_DATA", description="the data folder")
    backend: Backend = Field("local", description="'local' (Chroma + DuckDB/sqlite) or 'cloudflare' (REST API)")
    index_name: str = Field("memories", validation_alias="MEMORY_SIM_INDEX", min_length=1, max_length=32)
    database_name: str = Field("memory", validation_alias="MEMORY_SIM_DATABASE", min_length=1, max_length=64)
    embed_model: str = Field("default", validation_alias="MEMORY_SIM_MODEL", min_length=1)
    embed_provider: EmbedProvider = Field(
        "auto", description="where embeddings run, whatever the storage: 'auto' (the index's model where it can run), "
        "'local', 'workers-ai' (the Cloudflare account's) or 'openai' ($OPENAI_API_KEY)")
    embed_runtime: EmbedRuntime = Field("onnx", description="local models: onnxruntime, torch as the fallback")
    embed_threads: int = Field(1, ge=0, le=1024, description="threads one local embedding uses, on onnxruntime "
                               "and torch alike (0: the runtime's own default, one per core)")
    d1_engine: D1Engine = "duckdb"
    d1_sqlite_synchronous: SqliteSynchronous = Field(
        "normal", description="how the sqlite engine commits (both in WAL mode): 'normal' (safe from a crash or "
        "kill -9; a power cut may lose the last commits) or 'full' (each commit synced to disk first)")
    vector_backend: VectorBackend = "chroma"
    chroma_url: str | None = Field(None, description="a Chroma server, e.g. http://127.0.0.1:8000")
    bge_path: Path | None = Field(None, description="a sentence-transformers folder of BAAI/bge-base-en-v1.5")
    # Cloudflare (or any server speaking its REST API)
    account_id: str | None = Field(None, validation_alias="CLOUDFLARE_ACCOUNT_ID")
    api_token: str | None = Field(None, validation_alias="CLOUDFLARE_API_TOKEN", repr=False)
    database_id: str | None = Field(None, validation_alias="MEMORY_SIM_D1_DATABASE_ID")
    base_url: str | None = Field(None, validation_alias="CLOUDFLARE_BASE_URL")
    # `memory-sim serve`: the tokens clients must send (TOKEN or TOKEN:ACCOUNT entries)
    server_tokens: str | None = Field(None, validation_alias="MEMORY_SIM_API_TOKEN", repr=False)
    # A local Env that owns its folder serves it to other processes on loopback (memory_sim/owner.py)
    ray_address: str | None = Field(
        None, description="experiment run: run on Ray: 'local' (a local Ray), 'auto' or ray://host:port (a cluster)"
    )
    # An OpenAI-compatible chat model that refines inferred state keys (memory/beliefs/key_chat.py); off when unset
    key_chat_url: str | None = Field(None, description="a chat server's base URL, e.g. http://127.0.0.1:11434/v1")
    key_chat_model: str | None = Field(None, min_length=1, description="the chat model that names state keys")
    key_chat_api_key: str | None = Field(None, repr=False)
    key_chat_timeout_s: float = Field(10.0, gt=0, le=300, description="seconds one key question may take")
    serve_owner: bool = Field(True, description="a program's local Env serves its folder to other processes")
    owner_port: int | None = Field(
        None, ge=1, le=65535, description="the owner's loopback port (default: any free one)"
    )

    @field_validator("embed_model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value in KNOWN_MODELS or value.startswith("@cf/") or Path(value).expanduser().is_dir():
            return value
        raise ValueError(
            f"unknown embedding model {value!r}: expected 'default', '@cf/baai/bge-base-en-v1.5', "
            "'sentence-transformers/all-MiniLM-L6-v2', 'text-embedding-3-small' or a sentence-transformers folder"
        )

    @field_validator("key_chat_model")
    @classmethod
    def _chat_model_named(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("key_chat_url"):
            raise ValueError("key_chat_url is set, so name the chat model too (e.g. 'llama3.1')")
        return value

    @field_validator("chroma_url", "base_url", "key_chat_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = urlparse(value)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8000")
        try:
            url.port  # noqa: B018 - raises ValueError on a malformed port
        except ValueError as exc:
            raise ValueError(f"{value!r} has a malformed port") from exc
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        call = _CALL.get()
        env = env_settings if call.environ is None else _MappingSource(settings_cls, call.environ, by_env_name=True)
        return (init_settings, env, _MappingSource(settings_cls, call.file_values, by_env_name=False))

    @classmethod
    def load(cls, *, environ: Mapping[str, str] | None = None, **flags: Any) -> Settings:
        """Flags (None means "not given") over the environment over `memory_sim.toml` over the defaults."""
        given = {k: v for k, v in flags.items() if v is not None}
        env = os.environ if environ is None else environ
        data_dir = Path(given.get("data_dir") or env.get("MEMORY_SIM_DATA") or DEFAULT_DATA_DIR)
        file_values, file_path = read_config_file(data_dir)
        return _validated(given, environ, file_values, file_path)

    def replace(self, **changes: Any) -> Settings:
        """A copy with `changes` applied and validated (the sources are not read again)."""
        values = self.model_dump()
        values.update({k: v for k, v in changes.items() if v is not None})
        return _validated(values, {}, {}, None)  # an empty environment: only `values` count


def config_file(data_dir: Path) -> Path | None:
    """The `memory_sim.toml` in force for a data folder: the folder's own, else the working directory's."""
    for folder in (data_dir, Path.cwd()):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def read_config_file(data_dir: Path) -> tuple[dict[str, Any], Path | None]:
    path = config_file(data_dir)
    if path is None:
        return {}, None
    try:
        values = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read the settings file: {exc}") from exc
    known = set(Settings.model_fields)
    unknown = sorted(set(values) - known)
    if unknown:
        raise SettingsError(f"{path}: unknown setting {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return values, path


class _Sources(NamedTuple):
    environ: Mapping[str, str] | None  # None: the process environment, read by pydantic-settings itself
    file_values: Mapping[str, Any]


_NO_CALL = _Sources(None, MappingProxyType({}))  # immutable: shared by every context that has no call
# What `Settings.load` passes to `settings_customise_sources` for one call (per thread and task).
_CALL: ContextVar[_Sources] = ContextVar("memory_sim_settings_sources", default=_NO_CALL)


class _MappingSource(PydanticBaseSettingsSource):
    """Values from a mapping by each field's environment name (an injected environment) or field name (the file)."""

    def __init__(self, settings_cls: type[BaseSettings], values: Mapping[str, Any], *, by_env_name: bool) -> None:
        super().__init__(settings_cls)
        self.values = {k.upper(): v for k, v in values.items()} if by_env_name else dict(values)
        self.by_env_name = by_env_name

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        key = env_name(field_name).upper() if self.by_env_name else field_name
        return self.values.get(key), field_name, False

    def __call__(self) -> dict[str, Any]:
        found = {}
        for name, field in self.settings_cls.model_fields.items():
            value, _, _ = self.get_field_value(field, name)
            if value is not None:
                found[name] = value
        return found


def env_name(field_name: str) -> str:
    """The environment variable of a setting: its alias (e.g. MEMORY_SIM_DATA), else MEMORY_SIM_<NAME>."""
    alias = Settings.model_fields[field_name].validation_alias
    return alias if isinstance(alias, str) else f"MEMORY_SIM_{field_name.upper()}"


def _validated(flags: dict[str, Any], environ: Mapping[str, str] | None, file_values: dict[str, Any],
               file_path: Path | None) -> Settings:
    token = _CALL.set(_Sources(environ, file_values))
    try:
        return Settings(**flags)
    except ValidationError as exc:
        raise SettingsError(_one_line(exc, flags, os.environ if environ is None else environ, file_path)) from None
    finally:
        _CALL.reset(token)


def _one_line(
    exc: ValidationError, flags: Mapping[str, Any], environ: Mapping[str, str], file_path: Path | None
) -> str:
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "settings"
    name = next((field for field, info in Settings.model_fields.items() if info.validation_alias == name), name)
    field = Settings.model_fields.get(name)
    variable = env_name(name) if field else ""
    if name in flags:
        source = "from the command line"
    elif variable in environ:
        source = f"from ${variable}"
    elif file_path is not None:
        source = f"from {file_path}"
    else:
        source = "by default"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("Input should be "):  # pydantic says what is expected, not what was given
        message = f"expected {message.removeprefix('Input should be ')}, got {error.get('input')!r}"
    elif error["type"] != "value_error":
        message = f"{message[:1].lower()}{message[1:]}, got {error.get('input')!r}"
    return f"setting {name} ({source}): {message}"
