"""The in-memory columns kept beside Chroma: a float32 matrix, ids, namespaces and one typed column per
metadata index. Exact numpy scoring runs over the rows a filter leaves: for one NPC's 1,000 vectors that is
tens of microseconds, where Chroma's filtered HNSW takes tens of milliseconds.

String columns also keep per-value row sets (an inverted index), so a selective `{npcId}` filter starts from
that NPC's rows alone instead of comparing every row; the other conditions then mask the few rows left.

Rows are deleted by moving the last row into the hole, so the arrays stay dense. A row's indexed values are
not stored twice: they are read back from the columns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_sim.bindings.filters import Condition, IndexedValue
from memory_sim.bindings.vectorize import Metric
from memory_sim.local.vectorize.core import Stored

MISSING, NUMBER, STRING, BOOLEAN = 0, 1, 2, 3
RERANK_MARGIN = 16  # extra candidates re-scored in float64, so float32 rounding cannot reorder the top k
EMPTY_ROWS = np.zeros(0, dtype=np.int64)
Rows = slice | np.ndarray  # every row (slice(0, n)) or some rows (an index array)


class Column:
    """One metadata index's values, typed per row; strings dictionary-encoded, with row sets per string."""

    def __init__(self, capacity: int) -> None:
        self.kind = np.zeros(capacity, dtype=np.int8)
        self.num = np.zeros(capacity, dtype=np.float64)
        self.code = np.full(capacity, -1, dtype=np.int32)
        self.vocab: dict[str, int] = {}
        self.words: list[str] = []
        self.postings: dict[int, set[int]] = {}
        self._cached: dict[int, np.ndarray] = {}

    def grow(self, capacity: int) -> None:
        for name, fill in (("kind", 0), ("num", 0.0), ("code", -1)):
            old = getattr(self, name)
            new = np.full(capacity, fill, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)

    def _post(self, code: int, row: int, add: bool) -> None:
        rows = self.postings.setdefault(code, set())
        rows.add(row) if add else rows.discard(row)
        self._cached.pop(code, None)

    def set(self, row: int, value: IndexedValue | None) -> None:
        self.clear(row)
        if isinstance(value, bool):
            self.kind[row], self.num[row] = BOOLEAN, float(value)
        elif isinstance(value, str):
            code = self.vocab.get(value)
            if code is None:
                code = self.vocab[value] = len(self.words)
                self.words.append(value)
            self.kind[row], self.code[row] = STRING, code
            self._post(code, row, True)
        elif value is not None:
            self.kind[row], self.num[row] = NUMBER, float(value)

    def clear(self, row: int) -> None:
        if self.kind[row] == STRING:
            self._post(int(self.code[row]), row, False)
        self.kind[row], self.num[row], self.code[row] = MISSING, 0.0, -1

    def move(self, src: int, dst: int) -> None:
        """Move row `src` into `dst` (already cleared), leaving `src` empty."""
        if self.kind[src] == STRING:
            code = int(self.code[src])
            self._post(code, src, False)
            self._post(code, dst, True)
        self.kind[dst], self.num[dst], self.code[dst] = self.kind[src], self.num[src], self.code[src]
        self.kind[src], self.num[src], self.code[src] = MISSING, 0.0, -1

    def value(self, row: int) -> IndexedValue | None:
        kind = self.kind[row]
        if kind == STRING:
            return self.words[self.code[row]]
        if kind == NUMBER:
            return float(self.num[row])
        return bool(self.num[row]) if kind == BOOLEAN else None

    def rows_of(self, words: Sequence[str]) -> np.ndarray:
        """The rows holding any of these strings, from the row sets: O(rows found), not O(all rows)."""
        parts = []
        for word in dict.fromkeys(words):
            code = self.vocab.get(word)
            if code is None or not self.postings.get(code):
                continue
            if code not in self._cached:
                self._cached[code] = np.sort(
                    np.fromiter(self.postings[code], dtype=np.int64, count=len(self.postings[code]))
                )
            parts.append(self._cached[code])
        if not parts:
            return EMPTY_ROWS
        return parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts))

    def equal(self, rows: Rows, operand: Any) -> np.ndarray:
        kind = self.kind[rows]
        if operand is None:
            return kind == MISSING
        if isinstance(operand, bool):
            return (kind == BOOLEAN) & (self.num[rows] == float(operand))
        if isinstance(operand, str):
            return self.code[rows] == self.vocab.get(operand, -2)
        return (kind == NUMBER) & (self.num[rows] == operand)

    def ranged(self, rows: Rows, op: str, operand: Any) -> np.ndarray:
        if isinstance(operand, str):
            codes = [c for s, c in self.vocab.items() if _compare(s, op, operand)]
            return np.isin(self.code[rows], np.asarray(codes, dtype=np.int32))
        return (self.kind[rows] == NUMBER) & _compare(self.num[rows], op, operand)

    def holds(self, rows: Rows, op: str, operand: Any) -> np.ndarray:
        if op == "$eq":
            return self.equal(rows, operand)
        if op == "$ne":
            return ~self.equal(rows, operand)
        if op in ("$in", "$nin"):
            hit = np.zeros(self.kind[rows].shape[0], dtype=bool)
            for value in operand:
                hit |= self.equal(rows, value)
            return hit if op == "$in" else ~hit
        return self.ranged(rows, op, operand)


def _compare(left: Any, op: str, right: Any) -> Any:
    if op == "$lt":
        return left < right
    if op == "$lte":
        return left <= right
    if op == "$gt":
        return left > right
    return left >= right


def _string_seed(op: str, operand: Any) -> list[str] | None:
    """The strings an `$eq`/`$in` condition needs, when the row sets can answer it alone."""
    if op == "$eq" and isinstance(operand, str):
        return [operand]
    if op == "$in" and operand and all(isinstance(o, str) for o in operand):
        return list(operand)
    return None


class ArrayTable:
    """Dense numpy arrays of one index, with exact scoring over any subset of rows."""

    def __init__(self, dimensions: int, metric: Metric, capacity: int = 1024) -> None:
        self.dimensions, self.metric, self.n = dimensions, metric, 0
        self.matrix = np.zeros((capacity, dimensions), dtype=np.float32)
        self.norms = np.zeros(capacity, dtype=np.float32)
        self.ns_code = np.full(capacity, -1, dtype=np.int32)
        self.ns_vocab: dict[str, int] = {}
        self.ns_names: list[str] = []
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.metadata_json: list[str | None] = []
        self.columns: dict[str, Column] = {}

    # --- writes -----------------------------------------------------------------------------------------------
    def _ensure(self, capacity: int) -> None:
        """Amortised growth: capacity doubles, so a long run of batches copies each row O(1) times."""
        if capacity <= self.matrix.shape[0]:
            return
        size = max(capacity, 2 * self.matrix.shape[0])
        matrix = np.zeros((size, self.dimensions), dtype=np.float32)
        matrix[: self.n] = self.matrix[: self.n]
        norms, ns = np.zeros(size, dtype=np.float32), np.full(size, -1, dtype=np.int32)
        norms[: self.n], ns[: self.n] = self.norms[: self.n], self.ns_code[: self.n]
        self.matrix, self.norms, self.ns_code = matrix, norms, ns
        for column in self.columns.values():
            column.grow(size)

    def _column(self, prop: str) -> Column:
        if prop not in self.columns:
            self.columns[prop] = Column(self.matrix.shape[0])
        return self.columns[prop]

    def write(self, items: Sequence[Stored], metadata_json: Sequence[str | None] | None = None) -> None:
        """Write a batch (ids unique within it); the matrix and norms in one numpy step each."""
        if not items:
            return
        self._ensure(self.n + len(items))
        rows = np.fromiter((self._row(item.record.id) for item in items), dtype=np.int64, count=len(items))
        values = np.stack([item.record.values for item in items])
        self.matrix[rows] = values
        self.norms[rows] = np.linalg.norm(values, axis=1)
        texts = metadata_json if metadata_json is not None else [_json(item.record.metadata) for item in items]
        for row, item, text in zip(rows.tolist(), items, texts, strict=True):
            self._write_fields(row, item, text)

    def _row(self, vid: str) -> int:
        row = self.row_of.get(vid)
        if row is None:
            row, self.n = self.n, self.n + 1
            self.row_of[vid] = row
            self.ids.append(vid)
            self.metadata_json.append(None)
        return row

    def _write_fields(self, row: int, item: Stored, text: str | None) -> None:
        ns = item.record.namespace
        if ns is not None and ns not in self.ns_vocab:
            self.ns_vocab[ns] = len(self.ns_names)
            self.ns_names.append(ns)
        self.ns_code[row] = -1 if ns is None else self.ns_vocab[ns]
        self.metadata_json[row] = text
        indexed = item.indexed
        for prop, column in self.columns.items():
            if prop not in indexed:
                column.clear(row)
        for prop, value in indexed.items():
            self._column(prop).set(row, value)

    def delete(self, ids: Sequence[str]) -> None:
        for vid in ids:
            row = self.row_of.pop(vid, None)
            if row is not None:
                self._move_last_into(row)

    def _move_last_into(self, row: int) -> None:
        last = self.n - 1
        for column in self.columns.values():
            column.clear(row)
        if row != last:
            moved = self.ids[last]
            self.matrix[row], self.norms[row], self.ns_code[row] = (
                self.matrix[last],
                self.norms[last],
                self.ns_code[last],
            )
            for column in self.columns.values():
                column.move(last, row)
            self.ids[row], self.metadata_json[row] = moved, self.metadata_json[last]
            self.row_of[moved] = row
        self.ns_code[last] = -1
        self.ids.pop()
        self.metadata_json.pop()
        self.n = last

    def forget(self, prop: str) -> list[str]:
        """Drop a metadata index's values from every row; returns the ids that held one."""
        column = self.columns.pop(prop, None)
        if column is None:
            return []
        return [self.ids[r] for r in np.flatnonzero(column.kind[: self.n] != MISSING).tolist()]

    # --- reads ------------------------------------------------------------------------------------------------
    def candidates(self, conditions: tuple[Condition, ...], namespace: str | None) -> np.ndarray | None:
        """Rows passing the namespace, then the filter; None means every row. A string equality/$in on an
        indexed property starts from its row sets (the smallest one); the rest is masked over those rows."""
        seed: np.ndarray | None = None
        seeded_by: tuple[str, str] | None = None
        for condition in conditions:
            column = self.columns.get(condition.key)
            for op, operand in condition.ops:
                words = _string_seed(op, operand)
                if words is not None:
                    rows = column.rows_of(words) if column else EMPTY_ROWS
                    if seed is None or rows.shape[0] < seed.shape[0]:
                        seed, seeded_by = rows, (condition.key, op)
        if seed is None:
            keep = self._mask(conditions, namespace, slice(0, self.n), None)
            return None if keep is None else np.flatnonzero(keep)
        if seed.shape[0] == 0:
            return seed
        keep = self._mask(conditions, namespace, seed, seeded_by)  # the seed's own condition already holds
        return seed if keep is None else seed[keep]

    def _mask(
        self, conditions: tuple[Condition, ...], namespace: str | None, rows: Rows, skip: tuple[str, str] | None
    ) -> np.ndarray | None:
        keep: np.ndarray | None = None
        if namespace is not None:
            keep = self.ns_code[rows] == self.ns_vocab.get(namespace, -2)
        size = self.ns_code[rows].shape[0]
        for condition in conditions:
            column = self.columns.get(condition.key)
            for op, operand in condition.ops:
                if (condition.key, op) == skip:
                    continue
                hit = column.holds(rows, op, operand) if column else _no_column(size, op, operand)
                keep = hit if keep is None else keep & hit
        return keep

    def scores(self, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """float32 scores for ranking (cosine similarity, squared L2, negative dot)."""
        matrix = self.matrix[: self.n] if rows is None else self.matrix[rows]
        dots = matrix @ query
        if self.metric == "dot-product":
            return -dots
        norms = self.norms[: self.n] if rows is None else self.norms[rows]
        if self.metric == "euclidean":
            return norms * norms - 2 * dots + float(query @ query)
        denominator = norms * np.float32(math.sqrt(float(query @ query)))
        return np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)

    def top(self, query: np.ndarray, rows: np.ndarray | None, top_k: int) -> list[tuple[str, float]]:
        """Exact top k over `rows` (all rows when None), best first, ties by id."""
        total = self.n if rows is None else rows.shape[0]
        if total == 0:
            return []
        scores = self.scores(query, rows)
        keyed = -scores if self.metric == "cosine" else scores
        pool = min(total, top_k + RERANK_MARGIN)
        picked = np.argpartition(keyed, pool - 1)[:pool] if pool < total else np.arange(total)
        chosen = picked if rows is None else rows[picked]
        return self.rescore(query, chosen)[:top_k]

    def rescore(self, query: np.ndarray, rows: np.ndarray) -> list[tuple[str, float]]:
        """float64 scores of the given rows, ranked as the contract orders them."""
        matrix, q = self.matrix[rows].astype(np.float64), query.astype(np.float64)
        if self.metric == "euclidean":
            difference = matrix - q
            values = np.sqrt(np.einsum("ij,ij->i", difference, difference))
        elif self.metric == "dot-product":
            values = -(matrix @ q)
        else:
            norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix)) * math.sqrt(float(q @ q))
            values = np.divide(matrix @ q, norms, out=np.zeros(len(rows)), where=norms > 0)
        sign = -1.0 if self.metric == "cosine" else 1.0
        hits = [(self.ids[r], float(v)) for r, v in zip(rows.tolist(), values.tolist(), strict=True)]
        return sorted(hits, key=lambda hit: (sign * hit[1], hit[0]))

    def indexed(self, row: int) -> dict[str, IndexedValue]:
        out = {}
        for prop, column in self.columns.items():
            value = column.value(row)
            if value is not None:
                out[prop] = value
        return out

    def stored(self, vid: str) -> tuple[np.ndarray, str | None, str | None, dict[str, IndexedValue]] | None:
        row = self.row_of.get(vid)
        if row is None:
            return None
        ns = self.ns_code[row]
        namespace = None if ns < 0 else self.ns_names[ns]
        return self.matrix[row].copy(), self.metadata_json[row], namespace, self.indexed(row)


def _json(metadata: Any) -> str | None:
    return None if metadata is None else json.dumps(metadata, separators=(",", ":"), ensure_ascii=False)


def _no_column(n: int, op: str, operand: Any) -> np.ndarray:
    """No row holds a value for this key, so every row is 'missing' (filters.py semantics)."""
    if op == "$eq":
        hit = operand is None
    elif op == "$ne":
        hit = operand is not None
    elif op == "$in":
        hit = None in operand
    else:
        hit = op == "$nin" and None not in operand
    return np.full(n, hit, dtype=bool)
