"""`memory-sim vectorize ...` in-process, plus one subprocess smoke test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory_sim.cli import main


def run(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--data", str(data), "vectorize", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_wrangler_like_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An index of one's own ("memories" is the memory system's, whose declared metadata indexes cannot be deleted)
    data = tmp_path / "data"
    assert run(capsys, data, "create", "notes", "--dimensions", "3", "--metric", "cosine", "--description", "minilm")[0] == 0
    assert run(capsys, data, "create-metadata-index", "notes", "--property-name", "npcId", "--type", "string")[0] == 0
    rows = [{"id": f"m{i}", "values": [1.0, float(i), 0.5], "metadata": {"npcId": "margaret" if i % 2 else "tom"}} for i in range(6)]
    ndjson = tmp_path / "v.ndjson"
    ndjson.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, out, _ = run(capsys, data, "upsert", "notes", "--file", str(ndjson), "--json")
    assert code == 0 and json.loads(out) == {"index": "notes", "count": 6}
    code, out, _ = run(capsys, data, "query", "notes", "--vector", "1", "1", "0.5", "--top-k", "2",
                       "--filter", '{"npcId": "margaret"}', "--return-metadata", "all", "--json")
    result = json.loads(out)
    assert code == 0 and result["count"] == 2 and result["matches"][0]["id"] == "m1"
    assert result["matches"][0]["metadata"] == {"npcId": "margaret"}
    code, out, _ = run(capsys, data, "query", "notes", "--vector-id", "m4", "--top-k", "1", "--json")
    assert json.loads(out)["matches"][0]["id"] == "m4"
    code, out, _ = run(capsys, data, "info", "notes", "--json")
    assert json.loads(out)["vectorCount"] == 6 and json.loads(out)["dimensions"] == 3
    assert run(capsys, data, "delete-vectors", "notes", "--ids", "m0", "m1")[0] == 0
    code, out, _ = run(capsys, data, "list-vectors", "notes", "--count", "2", "--json")
    page = json.loads(out)
    assert page["totalCount"] == 4 and page["isTruncated"] and [v["id"] for v in page["vectors"]] == ["m2", "m3"]
    code, out, _ = run(capsys, data, "get-vectors", "notes", "--ids", "m2", "--json")
    assert json.loads(out)[0]["values"] == [1.0, 2.0, 0.5]
    code, out, _ = run(capsys, data, "list-metadata-index", "notes", "--json")
    assert json.loads(out) == {"metadataIndexes": [{"propertyName": "npcId", "indexType": "string"}]}
    assert run(capsys, data, "delete-metadata-index", "notes", "--property-name", "npcId")[0] == 0
    code, out, _ = run(capsys, data, "get", "notes", "--json")
    assert json.loads(out)["description"] == "minilm" and json.loads(out)["config"]["metric"] == "cosine"
    assert "notes" in run(capsys, data, "list")[1]
    assert (data / "vectorize").is_dir()
    assert run(capsys, data, "delete", "notes")[0] == 0
    assert run(capsys, data, "list")[1].strip() == "No indexes."


@pytest.mark.parametrize("backend", ["local", "cloudflare"])
def test_insert_and_upsert_json_is_wranglers(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                             request: pytest.FixtureRequest, backend: str) -> None:
    """`{"index": NAME, "count": N}`: the vectors sent (inserts that keep an earlier write count too), no mutation id."""
    if backend == "cloudflare":  # the settings' account: one of the local Cloudflare API server's
        from memory_sim.testing import TEST_TOKEN

        server = request.getfixturevalue("cloudflare_server")
        for name, value in (("CLOUDFLARE_ACCOUNT_ID", server.fresh_account_id()), ("CLOUDFLARE_API_TOKEN", TEST_TOKEN),
                            ("CLOUDFLARE_BASE_URL", server.base_url), ("MEMORY_SIM_BACKEND", "cloudflare")):
            monkeypatch.setenv(name, value)
    data = tmp_path / "data"
    assert run(capsys, data, "create", "idx", "--dimensions", "2", "--metric", "cosine")[0] == 0
    ndjson = tmp_path / "v.ndjson"
    ndjson.write_text("".join(json.dumps({"id": f"v{i}", "values": [1.0, i]}) + "\n" for i in range(3)))
    for verb in ("insert", "upsert", "insert"):
        code, out, _ = run(capsys, data, verb, "idx", "--file", str(ndjson), "--json")
        assert code == 0 and json.loads(out) == {"index": "idx", "count": 3}
    code, out, _ = run(capsys, data, "insert", "idx", "--file", str(ndjson))
    assert code == 0 and out.startswith("Inserted 3 vectors into 'idx' (mutation ")
    assert json.loads(run(capsys, data, "info", "idx", "--json")[1])["vectorCount"] == 3
    assert (data / "vectorize").is_dir() == (backend == "local")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "nope"], "INDEX_GET_ERROR"),
        (["query", "idx", "--vector", "1", "2"], "(code = 40006): invalid query vector, expected 3 dimensions, and got 2 dimensions"),
        (["query", "idx", "--vector", "1", "2", "3", "--filter", "{bad"], "not valid JSON"),
        (["query", "idx", "--vector", "1", "2", "3", "--top-k", "101"], "max top K is 100, but got 101"),
        (["create", "idx", "--dimensions", "3", "--metric", "cosine"], '(code = 3002): vectorize.index.duplicate_name - Index name "idx"'),
    ],
)
def test_errors_print_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    run(capsys, tmp_path, "create", "idx", "--dimensions", "3", "--metric", "cosine")
    code, out, err = run(capsys, tmp_path, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_ndjson_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, tmp_path, "create", "idx", "--dimensions", "2", "--metric", "euclidean")
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"id": "a", "values": [1, 2]}\nnot json\n')
    code, _, err = run(capsys, tmp_path, "insert", "idx", "--file", str(bad))
    assert code == 2 and "line 2" in err
    assert "0 vectors" in run(capsys, tmp_path, "info", "idx")[1]


def test_every_verb_has_help() -> None:
    from memory_sim.cli import build_parser

    parser = build_parser()
    group = next(a for a in parser._subparsers._group_actions[0].choices["vectorize"]._actions if a.dest == "vectorize_command")  # type: ignore[union-attr]
    assert len(group.choices) == 14
    assert all(p.description for p in group.choices.values())


def test_subprocess_smoke(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())", "--data", str(tmp_path), "vectorize"]
    made = subprocess.run([*cli, "create", "smoke", "--dimensions", "2", "--metric", "dot-product", "--json"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["config"] == {"dimensions": 2, "metric": "dot-product"}
    listed = subprocess.run([*cli, "list"], capture_output=True, text=True)
    assert listed.returncode == 0 and "smoke" in listed.stdout
