"""`recall` and `weighted_recall`'s pipeline behind `MemorySystem`: candidates (recall.py), a state key's current
memory pulled in beside its stale versions (current.py), ranked by one score (scoring.py), repeats collapsed.

Every mode ranks the same way (scoring.py's `current_first`): the scores a key's versions earned among the
candidates (by relevance, in weighted recall by weighted score) are handed round so its current memory holds the
best and its older versions the rest, a margin below; so the current state takes the best place its versions
earned at every `top_k`, and a key takes no more places than its versions earned. The score each result shows is
the one that ordered the list (a weighted one still `score * importance / (1 + age * decay_factor)`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from memory_sim.bindings.limits import VECTORIZE_MAX_TOP_K
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import InvalidInput
from memory_sim.memory import rules
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.ledger import store
from memory_sim.memory.models import RECALL_MODES, RecallMode, Recollection, WorldTime
from memory_sim.memory.recalling import access, current, handover, placing, recent
from memory_sim.memory.recalling import recall as recall_sources
from memory_sim.memory.recalling.hybrid import HybridParams
from memory_sim.memory.recalling.presets import Scoring
from memory_sim.memory.recalling.recall_cache import RecallCache
from memory_sim.memory.recalling.timing import rank_in_time
from memory_sim.memory.recalling.when import resolve_time
from memory_sim.memory.scoring import (
    Chains,
    borrow_score,
    current_first,
    distinct,
    rank_by_score,
    rank_weighted,
    yield_to_sources,
)

# candidates, chains, pulled ids, current ids that keep out of the hand-over (handover.py)
Rank = Callable[[list[Recollection], Chains, set[str], frozenset[str]], list[Recollection]]
_LOG = logging.getLogger(__name__)


def check_recall(npc_id: str, query: str, top_k: int, mode: str) -> None:
    """recall's input rules (memory/rules.py); any non-empty NPC id is looked up (older ids may be longer)."""
    rules.text("npc_id", npc_id)
    rules.text("query", query)
    rules.top_k(top_k)
    if mode not in RECALL_MODES:
        raise InvalidInput(f"mode must be one of {', '.join(RECALL_MODES)}, got {rules.shown(mode)}")


@dataclass(frozen=True, slots=True)
class Recaller:
    """What recall reads: the env, the tunables, the per-NPC cache and the world clock (seconds). A read-only
    face (the inspector) changes no count and records no access."""

    env: WorkerEnv
    config: MemoryConfig
    cache: RecallCache
    clock: Callable[[], float]
    read_only: bool = False

    def today(self) -> int:
        return WorldTime.from_seconds(self.clock()).day

    def recall(self, npc_id: str, query: str, top_k: int, mode: RecallMode, include_recent: bool) -> list[Recollection]:
        def rank(found: list[Recollection], chains: Chains, pulled: set[str],
                 keep: frozenset[str]) -> list[Recollection]:
            return rank_by_score(current_first(found, chains, keep=keep), len(found))

        k = 2 * top_k + self.config.recall_headroom
        return self._distinct_top(npc_id, query, top_k, mode, k, rank, include_recent, weighted=False)

    def weighted_recall(
        self, npc_id: str, query: str, day: int, top_k: int, mode: RecallMode, scoring: Scoring, include_recent: bool,
    ) -> list[Recollection]:
        """Ranked by the preset's score as of `day`; records the game hour each result was returned."""
        now_hours = day * rules.HOURS_PER_DAY + WorldTime.from_seconds(self.clock()).hour

        def rank(found: list[Recollection], chains: Chains, pulled: set[str],
                 keep: frozenset[str]) -> list[Recollection]:
            found = borrow_score(found, chains, pulled)
            scores = access.scored(self.env.DB, scoring, found, day, now_hours)
            weighted = [replace(r, effective_score=s) for r, s in zip(found, scores, strict=True)]
            return rank_weighted(current_first(weighted, chains, weighted=True, unearned=pulled, keep=keep), len(found))

        k = top_k * self.config.candidate_factor
        found = self._distinct_top(npc_id, query, top_k, mode, k, rank, include_recent, weighted=True)
        if found and not self.read_only:
            self.env.DB.batch(access.record(self.env.DB, [r.id for r in found], now_hours))
        return found

    def _distinct_top(
        self, npc_id: str, query: str, top_k: int, mode: RecallMode, k: int, rank: Rank, include_recent: bool, *,
        weighted: bool,
    ) -> list[Recollection]:
        """The top k after collapsing repeats (scoring.distinct), asking for more candidates while repeats leave it
        short and more may exist; with `include_recent`, recent D1-only memories join the candidates. In hybrid
        `recall` a summary yields to a source of it scoring nearly as well (scoring.yield_to_sources): its lead
        there is words its other sentences add, not a better answer. A question about time ranks the memories of
        that time first (when.py, placing.py, timing.py), a key's older versions included: they were true then."""
        moment = WorldTime.from_seconds(self.clock())
        focus = resolve_time(query, moment, self.config.day_zero)
        placement = placing.place(self.env, npc_id, focus, moment, embed=mode != "keyword",
                                  cache=self.cache) if focus.any else None
        query, k = focus.topic, min(VECTORIZE_MAX_TOP_K, max(k, placing.FOCUS_CANDIDATES if placement else k))
        recent_since = recent.first_day(self.today()) if include_recent else None
        while True:
            candidates = recall_sources.gather(self.env, npc_id, query, k, self.clock(), self.config, mode, self.cache,
                                               recent_since)
            if candidates.fell_back:
                self._fell_back(npc_id, candidates.cause)
            extra = placing.pulled(self.env, npc_id, placement, {r.id for r in candidates.recollections}, query,
                                   self.cache) if placement else []
            found = recall_sources.with_sources(self.env, candidates.recollections + extra)
            if mode == "hybrid" and not weighted:
                found = yield_to_sources(found, HybridParams().source_share)
            seen = {r.id for r in found}
            found, chains, given = current.with_current(self.env.DB, npc_id, found, candidates.view)
            keep = handover.doubtful(self.env.embedder, query, found, chains, given)
            found = [r for r in found if r.id in seen or r.id not in keep]  # a doubtful current is not pulled in
            ranked = rank(found, chains, {r.id for r in found} - seen, keep)
            if placement is not None:
                ranked = rank_in_time(ranked, placement.frame, weighted=weighted, pulled={r.id: r.score for r in extra})
            kept = distinct(ranked)
            if len(kept) >= top_k or candidates.fell_back or len(seen) < k or k >= VECTORIZE_MAX_TOP_K:
                return kept[:top_k]
            k = min(VECTORIZE_MAX_TOP_K, 2 * k)

    def _fell_back(self, npc_id: str, cause: str) -> None:
        """Says where it happens, in one line, that a recall answered from D1 without the index, and why; counts
        it in `stats()["fallbacks"]` unless this is a read-only face."""
        _LOG.warning("recall of %r answered from D1 without the vector index: %s", npc_id, cause)
        if not self.read_only:
            self.env.DB.batch([store.bump(self.env.DB, "fallbacks")])
