"""The `MemorySystem` facade's upkeep: the jobs a scheduler runs (memory/jobs/scheduled.py), whether each has
work, and the counts."""

from __future__ import annotations

from memory_sim.errors import VectorizeError
from memory_sim.memory.facade_base import FacadeBase
from memory_sim.memory.jobs import scheduled
from memory_sim.memory.ledger import store
from memory_sim.memory.ledger.counts import memory_counts
from memory_sim.memory.models import JobReport
from memory_sim.memory.writing import erasure, forgetting
from memory_sim.memory.writing.background import settled as _settled


class Upkeep(FacadeBase):
    """The jobs and counts, as `MemorySystem` offers them."""

    # --- jobs (memory/jobs/scheduled.py) --------------------------------------------------------------------

    def consolidate(self, now: float | None = None, *, wait: bool = True) -> JobReport:
        """Condenses each diary day old enough into an indexed summary with its lineage, once a day.

        A diary day is old enough when it is at least `config.consolidate_after_days` sim days before `now`'s; a day of
        one memory is linked to it instead.

        Args:
            now: the time to run as of, in seconds of world time; None: `clock()`.
            wait: wait for the summaries' embedding (True), or leave it to the background thread (False).

        Returns:
            A `JobReport` with `consolidated`, `linked`, `failed` and `errors` set."""
        if wait:
            self.settle()
        clear, self._nothing_to_retry = self._nothing_to_retry, False
        now = self.clock() if now is None else now
        self._consolidated_through = None
        report, complete = scheduled.consolidate_all(self, now, wait=wait)
        if wait:
            self.settle()  # the summaries were embedded behind the job's D1 work; in the index when it returns
        self._nothing_to_retry = clear and not report.failed and not report.errors
        if complete and not report.failed and not report.errors:
            self._consolidated_through = scheduled.consolidate_up_to(now, self.config)
        return report

    @_settled
    def decay_and_prune(self, now: float | None = None) -> JobReport:
        """Grows decay factors to today and drops the memories past the threshold from the index.

        Memories past `config.forget_threshold` are re-embedded if important, else dropped from the index (they stay in
        D1); then the least valued are pruned past `config.index_cap`.

        Args:
            now: the time to run as of, in seconds of world time (today is its sim day); None: `clock()`.

        Returns:
            A `JobReport` with `decayed`, `reembedded`, `unindexed`, `failed` and `errors` set."""
        clear, self._nothing_to_retry = self._nothing_to_retry, False
        report = scheduled.decay_and_prune(self, self.clock() if now is None else now)
        self._nothing_to_retry = clear and not report.failed and not report.errors
        return report

    @_settled
    def retry_pending(self, now: float | None = None) -> JobReport:
        """Indexes the memories whose embedding or upsert failed once their backoff has passed.

        Also finishes any `forget` a crash cut short.

        Args:
            now: the time to run as of, in seconds of world time, that backoffs are compared with; None: `clock()`.

        Returns:
            A `JobReport` with `embedded`, `failed` and `errors` set."""
        self._nothing_to_retry = self._left_behind = False
        half_done = [m.id for m in store.memories_in_state(self.env.DB, ["forgetting"])]
        finished = forgetting.finish(self.env, half_done) == len(half_done)  # forgets a crash cut short
        finished = self._remake_summaries() and finished  # and the summaries they hid
        report, empty = scheduled.retry_pending(self, self.clock() if now is None else now)
        self._nothing_to_retry = finished and empty
        return report

    @_settled
    def compact(self, now: float | None = None) -> JobReport:
        """Makes erasure reach the disk.

        Forgets a crash cut short are finished, then the text `forget`, `update_memory` and `forget_npc` removed leaves
        every file of the data folder (`Env.compact`: Chroma's log and free pages, D1's free pages and write-ahead log).
        The `compact` job runs it after an erasure; `memory-sim compact` on demand.

        Args:
            now: the time of the run, in seconds of world time; compaction does not depend on it.

        Returns:
            A `JobReport` of the job `compact`."""
        forgetting.finish(self.env, [m.id for m in store.memories_in_state(self.env.DB, ["forgetting"])])
        self._remake_summaries()
        erasure.compact(self.env)
        return JobReport(job="compact", details=["erased text removed from the data folder's files"])

    def erasure_done(self) -> bool:
        """Whether nothing erased since the last compaction waits to leave the files (the `compact` job is idle)."""
        return not erasure.pending(self.env)

    def nothing_to_consolidate(self) -> bool:
        """Whether `consolidate` would do nothing now, as far as this system knows without reading D1.

        True when its last run found every diary old enough consolidated and no diary was written or unlinked
        since: the `consolidate` job is idle until the next day, or the next such write. Another process writing
        diaries of past days is seen by the next day's run.

        Returns:
            True when a consolidation now would find nothing to condense."""
        done = self._consolidated_through
        return done is not None and done >= scheduled.consolidate_up_to(self.clock(), self.config)

    def nothing_to_retry(self) -> bool:
        """Whether `retry_pending` would do nothing, as far as this system knows without reading D1."""
        return self._nothing_to_retry and not self._left_behind

    @_settled
    def stats(self) -> dict[str, int]:
        """Counts of the memories, the index and the jobs' work.

        Returns:
            The counts by name: `memories`, `forgotten`, `indexed`, `pending`, `summaries`, `vectors` (the index's own;
            -1 when it cannot be asked) and the jobs' running counters (`consolidations`, `prunes`, `retries`,
            `fallbacks`)."""
        out = memory_counts(self.env.DB)  # the one definition of each count (memory/ledger/counts.py)
        try:
            out["vectors"] = self.env.VECTORIZE.describe().vector_count
        except VectorizeError:
            out["vectors"] = -1
        out.update(store.counters(self.env.DB))
        return out
