"""D1's foreign-key PRAGMAs on the DuckDB engine, answered as D1 answers them: `PRAGMA foreign_keys` is always 1
and setting it does nothing (D1 runs each query inside a transaction, where SQLite ignores it); `PRAGMA
defer_foreign_keys = ON|OFF` defers the checks to the end of the current transaction (a batch), as D1 documents.
Other PRAGMAs are read from the schema mirror; other assignments would change SQLite behaviour the engine does not
model, and are refused."""

from __future__ import annotations

from memory_sim.bindings.d1_sql import significant, tokenize
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.core import Outcome
from memory_sim.local.d1.foreign_keys import Enforcer

_TRUE = frozenset({"1", "ON", "TRUE", "YES"})
_FALSE = frozenset({"0", "OFF", "FALSE", "NO"})


class Pragmas:
    def __init__(self, fks: Enforcer) -> None:
        self.fks = fks

    def answer(self, sql: str, in_transaction: bool) -> Outcome | None:
        toks = significant(tokenize(sql))
        if len(toks) < 2 or not toks[0].is_word("PRAGMA"):
            return None
        at = 3 if len(toks) > 3 and toks[2].text == "." else 1
        name = toks[at].name.lower()
        rest = [t for t in toks[at + 1 :] if t.text not in ("=", "(", ")", ";")]
        if name not in ("foreign_keys", "defer_foreign_keys"):
            if any(t.text == "=" for t in toks):
                raise D1Unsupported("PRAGMA assignments other than foreign_keys and defer_foreign_keys are not "
                                    "available on the DuckDB engine; use the sqlite engine")
            return None
        if not rest:
            value = 1 if name == "foreign_keys" else int(self.fks.deferred)
            return Outcome([name], [(value,)])
        word = rest[0].name.upper() if rest[0].kind in ("word", "qident") else rest[0].text.strip("'").upper()
        if word not in _TRUE and word not in _FALSE:
            return Outcome()  # SQLite ignores a value it cannot read as a boolean
        if name == "defer_foreign_keys" and in_transaction:
            self.fks.deferred = word in _TRUE
        return Outcome()  # foreign_keys: D1 enforces them in every transaction
