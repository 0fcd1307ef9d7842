"""The `MemorySystem` facade's records: NPCs registered (memory/npcs.py), memories listed, fixed and forgotten
(memory/writing/), diaries written (memory/jobs/diary.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.memory import npcs as npc_registry
from memory_sim.memory.facade_base import FacadeBase
from memory_sim.memory.jobs import diary
from memory_sim.memory.models import StoredMemory
from memory_sim.memory.npcs import Npc
from memory_sim.memory.writing import correcting, erasure, forgetting
from memory_sim.memory.writing.background import settled as _settled
from memory_sim.memory.writing.forgetting import MemoryPage


class Records(FacadeBase):
    """NPCs, memories and diaries, as `MemorySystem` offers them."""

    # --- NPCs (memory/npcs.py) ------------------------------------------------------------------------------

    @_settled
    def register_npc(
        self, id: str, name: str, role: str | None = None, aliases: Sequence[str] = (), traits: Sequence[str] = ()
    ) -> Npc:
        """Registers (or re-registers) an NPC.

        Recall expands its name, role, aliases and traits in queries that name it, and key inference finds it named in
        memories.

        Args:
            id: the NPC's id; ids are case-sensitive, and a case twin of a registered id is refused.
            name: the NPC's name.
            role: the NPC's role, if any.
            aliases: other names it goes by.
            traits: its traits.

        Returns:
            The `Npc` as stored now."""
        self._keys.drop()
        return npc_registry.register(self.env.DB, npc_registry.make(id, name, role, aliases, traits))

    @_settled
    def npcs(self) -> list[Npc]:
        """Every registered NPC, by id."""
        return npc_registry.all_npcs(self.env.DB)

    @_settled
    def npc(self, id: str) -> Npc:
        """The registered NPC with this id; NotFound (with a hint when only the case differs) when none."""
        return npc_registry.get(self.env.DB, id)

    @_settled
    def update_npc(self, id: str, *, name: str | None = None, role: str | None = None,
                   aliases: Sequence[str] | None = None, traits: Sequence[str] | None = None) -> Npc:
        """Changes the fields given of a registered NPC; the others stay. Returns the `Npc` as stored now."""
        old = self.npc(id)
        self._keys.drop()
        return npc_registry.register(self.env.DB, npc_registry.make(
            id, old.name if name is None else name, old.role if role is None else role,
            old.aliases if aliases is None else aliases, old.traits if traits is None else traits))

    # --- listing, fixing and forgetting memories (memory/writing/) ------------------------------------------

    @_settled
    def memories(
        self, npc_id: str, *, since_day: int | None = None, until_day: int | None = None, type: str | None = None,
        kind: str | None = None, state: str | None = None, limit: int = 100, cursor: str | None = None,
    ) -> MemoryPage:
        """An NPC's memories in remember order, a page at a time.

        Forgotten memories are listed only with `state="forgotten"`.

        Args:
            npc_id: the NPC whose memories are listed.
            since_day: the first sim day to list (inclusive); None: from the first.
            until_day: the last sim day to list (inclusive); None: to the last.
            type: only memories of this type.
            kind: only memories of this kind ("observation" or "summary").
            state: only memories in this index state ("forgotten": the forgotten ones).
            limit: the page size, 1-100.
            cursor: the last page's `cursor`; None: the first page.

        Returns:
            A `MemoryPage`: the page's memories, and the cursor for the next page (None on the last one)."""
        return forgetting.list_memories(self.env, npc_id, since_day=since_day, until_day=until_day, type=type,
                                        kind=kind, state=state, limit=limit, cursor=cursor)

    @_settled
    def memory(self, id: str) -> StoredMemory:
        """One memory by id, as D1 holds it, forgotten or not; NotFound when there is none."""
        return forgetting.one(self.env, id)

    @_settled
    def update_importance(self, id: str, value: float) -> StoredMemory:
        """Sets a memory's importance (0..1); one in the index is re-indexed. Returns the memory as stored now."""
        self._nothing_to_retry = False
        self._consolidated_through = None
        updated = forgetting.update_importance(self.env, id, value, self.clock(), self.config.index_threshold)
        if updated.index_state == "pending":
            self.index_memories([id])
        return self.memory(id)

    @_settled
    def forget(self, ids: str | Sequence[str], reason: str = forgetting.DEFAULT_REASON) -> list[str]:
        """Forgets memories: out of the index and every recall and listing, text erased from D1.

        A record with `reason` is kept; summaries made from the memories are made again (writing/rederive.py) and
        diaries lose the quote.

        Args:
            ids: one memory id, or several.
            reason: why they are forgotten, kept in the record.

        Returns:
            The ids newly forgotten, sorted.

        Raises:
            NotFound: an id names no memory (nothing is forgotten)."""
        self._nothing_to_retry = False
        self._consolidated_through = None
        erasure.note(self.env)  # the text leaves the files at the next `compact` (a scheduled job)
        done = forgetting.forget(self.env, [ids] if isinstance(ids, str) else list(ids), reason, self.clock())
        self._remake_summaries()
        return done

    @_settled
    def update_memory(self, id: str, *, content: str) -> StoredMemory:
        """Corrects a memory's text.

        D1, the index's copy, the summaries made from it and the diaries quoting it follow (as `forget` does).

        Args:
            id: the memory's id.
            content: the corrected text.

        Returns:
            The memory as stored now."""
        self._nothing_to_retry = False
        self._consolidated_through = None
        erasure.note(self.env)
        forgetting.finish(self.env, correcting.correct(self.env, id, content, self.clock()))
        self._remake_summaries()
        if self.memory(id).index_state == "pending":
            self.index_memories([id])
        return self.memory(id)

    @_settled
    def forget_npc(self, npc_id: str) -> list[str]:
        """Forgets all the NPC's memories, as `forget` does, and drops its registration, diaries and relationships.

        Args:
            npc_id: the NPC to forget.

        Returns:
            The ids newly forgotten."""
        self._nothing_to_retry = False
        self._consolidated_through = None
        self._keys.drop()
        erasure.note(self.env)
        done = forgetting.forget_npc(self.env, npc_id, self.clock())
        self._remake_summaries()
        return done

    @_settled
    def write_diary(self, npc_id: str, day: int, max_entries: int = 6) -> str:
        """Writes the NPC's diary for a sim day.

        The diary holds up to `max_entries` of the day's most important memories in time order and one earlier memory
        they brought back.

        Args:
            npc_id: the NPC whose diary is written.
            day: the sim day.
            max_entries: how many of the day's memories it holds at most.

        Returns:
            The diary's text; "" when nothing was remembered that day."""
        return self.write_diaries([npc_id], day, max_entries).get(npc_id, "")

    @_settled
    def write_diaries(self, npc_ids: Sequence[str], day: int, max_entries: int = 6) -> dict[str, str]:
        """`write_diary` for several NPCs in a few D1 statements; NPCs with no diary that day are left out."""
        self._consolidated_through = None
        return diary.write_diaries(self, npc_ids, day, max_entries)
