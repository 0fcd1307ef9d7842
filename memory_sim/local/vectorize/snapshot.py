"""A numpy snapshot of one index's arrays (arrays.py), kept beside embedded Chroma so reopening an index reads
one file instead of paging every embedding out of Chroma (~1.8 s per 5,000 rows).

The snapshot is a cache, never the truth: it carries a tag (the last processed mutation id and the row count)
and is used only when its mutation id equals the one Chroma's stored state records (the row count is checked
against the arrays; asking Chroma for its count would load Chroma's segments: 0.5 s and ~200 MB at 100k);
anything else (stale, truncated, corrupt, another format) answers None and the caller rebuilds from Chroma.
One file: a magic, a JSON header (tag, layout, a 64-bit checksum per array) and the raw arrays, read with one
`np.fromfile` and used as views (a zip's CRC-32 alone cost 0.2 s at 100k x 384). Written to a temporary name
and renamed, so a crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.bindings.vectorize import Metric
from memory_sim.local.vectorize.arrays import STRING, ArrayTable, Column

FORMAT = 2
MAGIC = b"MSVSNAP\x02"
ALIGN = 64  # arrays are padded to 64 bytes: 8-byte multiples for the checksum view, 16-byte aligned views


def tag_of(processed_mutation: str | None, count: int) -> dict[str, Any]:
    return {"mutation": processed_mutation, "count": int(count)}


def _pack(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 blob plus character offsets: loads in milliseconds, no pickle."""
    blob = np.frombuffer("".join(texts).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    ends = np.cumsum(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)))
    return blob, ends


def _unpack(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    text = blob.tobytes().decode("utf-8", "surrogatepass")
    starts = np.concatenate(([0], ends[:-1])) if ends.shape[0] else ends
    return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def _checksum(raw: np.ndarray) -> int:
    """A wrapping 64-bit sum of the (8-byte padded) bytes: any flipped bit changes it, at memory speed."""
    return int(np.add.reduce(raw.view(np.uint64), dtype=np.uint64))


def _padded(array: np.ndarray) -> np.ndarray:
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    pad = -raw.shape[0] % ALIGN
    return np.concatenate([raw, np.zeros(pad, dtype=np.uint8)]) if pad else raw


def save(table: ArrayTable, path: Path, tag: dict[str, Any]) -> None:
    """Write the table's live rows atomically (temporary file, fsync, rename)."""
    n = table.n
    props = list(table.columns)
    md = table.metadata_json
    arrays: dict[str, np.ndarray] = {
        "matrix": table.matrix[:n], "norms": table.norms[:n], "ns_code": table.ns_code[:n],
        "md_none": np.fromiter((m is None for m in md), dtype=bool, count=n),
    }
    arrays["ids_blob"], arrays["ids_end"] = _pack(table.ids)
    arrays["md_blob"], arrays["md_end"] = _pack([m or "" for m in md])
    for i, prop in enumerate(props):
        column = table.columns[prop]
        arrays[f"c{i}_kind"], arrays[f"c{i}_num"], arrays[f"c{i}_code"] = (
            column.kind[:n],
            column.num[:n],
            column.code[:n],
        )
    layout, offset, parts = {}, 0, []
    for name, array in arrays.items():
        raw = _padded(array)
        layout[name] = {
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "offset": offset,
            "size": raw.shape[0],
            "sum": _checksum(raw),
        }
        parts.append(raw)
        offset += raw.shape[0]
    header = {
        "format": FORMAT, "tag": tag, "dimensions": table.dimensions, "metric": table.metric,
        "ns_names": table.ns_names, "columns": {p: table.columns[p].words for p in props}, "arrays": layout,
    }
    head = _padded(np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(MAGIC + head.shape[0].to_bytes(8, "little"))
            out.write(head.tobytes())
            for raw in parts:
                out.write(raw.data)  # the array's own buffer, no copy
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def load(path: Path, mutation: str | None, dimensions: int, metric: Metric) -> ArrayTable | None:
    """The table from the snapshot if it exists, is intact and was taken at Chroma's last processed mutation."""
    if not path.is_file():
        return None
    try:
        buffer = np.fromfile(path, dtype=np.uint8)  # one read; the arrays below are views into it
        header = _header(buffer)
        if header is None or header.get("format") != FORMAT or header.get("tag", {}).get("mutation") != mutation:
            return None
        if header["dimensions"] != dimensions or header["metric"] != metric:
            return None
        return _table(_arrays(buffer, header), header, dimensions, metric)
    except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeError, OverflowError):
        return None  # damaged or foreign: the caller rebuilds from Chroma


def _header(buffer: np.ndarray) -> dict[str, Any] | None:
    if buffer.shape[0] < len(MAGIC) + 8 or buffer[: len(MAGIC)].tobytes() != MAGIC:
        return None
    size = int.from_bytes(buffer[len(MAGIC) : len(MAGIC) + 8].tobytes(), "little")
    start = len(MAGIC) + 8
    header = json.loads(buffer[start : start + size].tobytes().rstrip(b"\0").decode("utf-8"))
    header["data_start"] = start + size
    return header


def _arrays(buffer: np.ndarray, header: dict[str, Any]) -> dict[str, np.ndarray] | None:
    out, base = {}, header["data_start"]
    for name, spec in header["arrays"].items():
        raw = buffer[base + spec["offset"] : base + spec["offset"] + spec["size"]]
        if raw.shape[0] != spec["size"] or _checksum(raw) != spec["sum"]:
            raise ValueError(f"snapshot array {name} is damaged")
        dtype = np.dtype(spec["dtype"])
        count = int(np.prod(spec["shape"], dtype=np.int64))
        out[name] = raw[: count * dtype.itemsize].view(dtype).reshape(spec["shape"])
    return out


def _table(data: Any, header: dict[str, Any], dimensions: int, metric: Metric) -> ArrayTable | None:
    matrix = data["matrix"]
    n = matrix.shape[0]
    ids = _unpack(data["ids_blob"], data["ids_end"])
    texts = _unpack(data["md_blob"], data["md_end"])
    md_none = data["md_none"]
    if (
        matrix.shape != (n, dimensions)
        or len(ids) != n
        or len(texts) != n
        or md_none.shape[0] != n
        or n != header["tag"]["count"]
    ):
        return None
    table = ArrayTable(dimensions, metric, capacity=0)
    table.n, table.matrix, table.norms, table.ns_code = n, matrix, data["norms"], data["ns_code"]
    table.ns_names = list(header["ns_names"])
    table.ns_vocab = {name: i for i, name in enumerate(table.ns_names)}
    table.ids, table.row_of = ids, {vid: i for i, vid in enumerate(ids)}
    table.metadata_json = [None if none else text for text, none in zip(texts, md_none.tolist(), strict=True)]
    for i, (prop, words) in enumerate(header["columns"].items()):
        table.columns[prop] = _column(data, i, words, n)
    if table.norms.shape[0] != n or table.ns_code.shape[0] != n:
        return None
    return table


def _column(data: Any, i: int, words: list[str], n: int) -> Column:
    column = Column(0)
    column.kind, column.num, column.code = data[f"c{i}_kind"], data[f"c{i}_num"], data[f"c{i}_code"]
    if column.kind.shape[0] != n:
        raise ValueError("column length differs from the row count")
    column.words, column.vocab = list(words), {w: c for c, w in enumerate(words)}
    strings = np.flatnonzero(column.kind == STRING)
    codes = column.code[strings]
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    for group in np.split(strings[order], bounds) if strings.shape[0] else []:
        column.postings[int(column.code[group[0]])] = set(group.tolist())
    return column
