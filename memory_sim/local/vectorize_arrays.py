"""The in-memory columns kept beside Chroma: a float32 matrix, ids, namespaces and one typed column per
metadata index. Filters become boolean masks over the columns, and exact numpy scoring runs over the rows a
mask leaves: for one NPC's 1,000 vectors that is tens of microseconds, where Chroma's filtered HNSW takes
tens of milliseconds.

Rows are deleted by moving the last row into the hole, so the arrays stay dense.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from memory_sim.bindings.filters import LOWER_OPS, UPPER_OPS, Condition, IndexedValue
from memory_sim.bindings.vectorize import Metric
from memory_sim.local.vectorize_core import Stored

MISSING, NUMBER, STRING, BOOLEAN = 0, 1, 2, 3
RERANK_MARGIN = 16  # extra candidates re-scored in float64, so float32 rounding cannot reorder the top k


class Column:
    """One metadata index's values, typed per row; strings dictionary-encoded."""

    def __init__(self, capacity: int) -> None:
        self.kind = np.zeros(capacity, dtype=np.int8)
        self.num = np.zeros(capacity, dtype=np.float64)
        self.code = np.full(capacity, -1, dtype=np.int32)
        self.vocab: dict[str, int] = {}

    def grow(self, capacity: int) -> None:
        for name, fill in (("kind", 0), ("num", 0.0), ("code", -1)):
            old = getattr(self, name)
            new = np.full(capacity, fill, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)

    def set(self, row: int, value: IndexedValue | None) -> None:
        self.kind[row], self.num[row], self.code[row] = MISSING, 0.0, -1
        if isinstance(value, bool):
            self.kind[row], self.num[row] = BOOLEAN, float(value)
        elif isinstance(value, str):
            self.kind[row], self.code[row] = STRING, self.vocab.setdefault(value, len(self.vocab))
        elif value is not None:
            self.kind[row], self.num[row] = NUMBER, float(value)

    def move(self, src: int, dst: int) -> None:
        self.kind[dst], self.num[dst], self.code[dst] = self.kind[src], self.num[src], self.code[src]

    def equal(self, n: int, operand: Any) -> np.ndarray:
        kind = self.kind[:n]
        if operand is None:
            return kind == MISSING
        if isinstance(operand, bool):
            return (kind == BOOLEAN) & (self.num[:n] == float(operand))
        if isinstance(operand, str):
            return self.code[:n] == self.vocab.get(operand, -2)
        return (kind == NUMBER) & (self.num[:n] == operand)

    def ranged(self, n: int, op: str, operand: Any) -> np.ndarray:
        if isinstance(operand, str):
            codes = [c for s, c in self.vocab.items() if _compare(s, op, operand)]
            return np.isin(self.code[:n], np.asarray(codes, dtype=np.int32))
        return (self.kind[:n] == NUMBER) & _compare(self.num[:n], op, operand)

    def holds(self, n: int, op: str, operand: Any) -> np.ndarray:
        if op == "$eq":
            return self.equal(n, operand)
        if op == "$ne":
            return ~self.equal(n, operand)
        if op in ("$in", "$nin"):
            hit = np.zeros(n, dtype=bool)
            for value in operand:
                hit |= self.equal(n, value)
            return hit if op == "$in" else ~hit
        return self.ranged(n, op, operand)


def _compare(left: Any, op: str, right: Any) -> Any:
    if op == "$lt":
        return left < right
    if op == "$lte":
        return left <= right
    if op == "$gt":
        return left > right
    return left >= right


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
        self.indexed: list[dict[str, IndexedValue]] = []
        self.columns: dict[str, Column] = {}

    # --- writes -----------------------------------------------------------------------------------------------
    def _ensure(self, capacity: int) -> None:
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

    def write(self, items: Sequence[Stored]) -> None:
        self._ensure(self.n + len(items))
        for item in items:
            self._write_row(item)

    def _write_row(self, item: Stored) -> None:
        record = item.record
        row = self.row_of.get(record.id)
        if row is None:
            row, self.n = self.n, self.n + 1
            self.row_of[record.id] = row
            self.ids.append(record.id)
            self.metadata_json.append(None)
            self.indexed.append({})
        self.matrix[row] = record.values
        self.norms[row] = np.linalg.norm(record.values)
        ns = record.namespace
        if ns is not None and ns not in self.ns_vocab:
            self.ns_vocab[ns] = len(self.ns_names)
            self.ns_names.append(ns)
        self.ns_code[row] = -1 if ns is None else self.ns_vocab[ns]
        self.metadata_json[row] = None if record.metadata is None else json.dumps(record.metadata)
        self.indexed[row] = item.indexed
        for prop in set(self.columns) | set(item.indexed):
            self._column(prop).set(row, item.indexed.get(prop))

    def delete(self, ids: Sequence[str]) -> None:
        for vid in ids:
            row = self.row_of.pop(vid, None)
            if row is not None:
                self._move_last_into(row)

    def _move_last_into(self, row: int) -> None:
        last = self.n - 1
        if row != last:
            moved = self.ids[last]
            self.matrix[row], self.norms[row], self.ns_code[row] = self.matrix[last], self.norms[last], self.ns_code[last]
            for column in self.columns.values():
                column.move(last, row)
            self.ids[row], self.metadata_json[row], self.indexed[row] = moved, self.metadata_json[last], self.indexed[last]
            self.row_of[moved] = row
        self.ids.pop()
        self.metadata_json.pop()
        self.indexed.pop()
        self.n = last

    # --- reads ------------------------------------------------------------------------------------------------
    def mask(self, conditions: tuple[Condition, ...], namespace: str | None) -> np.ndarray | None:
        """Rows passing the namespace, then the filter; None means every row."""
        keep: np.ndarray | None = None
        if namespace is not None:
            keep = self.ns_code[: self.n] == self.ns_vocab.get(namespace, -2)
        for condition in conditions:
            column = self.columns.get(condition.key)
            for op, operand in condition.ops:
                hit = column.holds(self.n, op, operand) if column else _no_column(self.n, op, operand)
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
        denominator = norms * np.float32(np.linalg.norm(query))
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
            values = np.sqrt(np.sum((matrix - q) ** 2, axis=1))
        elif self.metric == "dot-product":
            values = -(matrix @ q)
        else:
            norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
            values = np.divide(matrix @ q, norms, out=np.zeros(len(rows)), where=norms > 0)
        sign = -1.0 if self.metric == "cosine" else 1.0
        hits = [(self.ids[r], float(v)) for r, v in zip(rows.tolist(), values.tolist())]
        return sorted(hits, key=lambda hit: (sign * hit[1], hit[0]))

    def stored(self, vid: str) -> tuple[np.ndarray, str | None, str | None, dict[str, IndexedValue]] | None:
        row = self.row_of.get(vid)
        if row is None:
            return None
        ns = self.ns_code[row]
        namespace = None if ns < 0 else self.ns_names[ns]
        return self.matrix[row].copy(), self.metadata_json[row], namespace, self.indexed[row]


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
