"""Three NPCs of a valley (Mira the innkeeper, Hilda the baker, Oswin the miller) and two of Mira's busy days, as a
new user writes them from the docs: fifteen memories a day about the baker, the miller, a hooded stranger and
the inn, most of them below the index's importance threshold (kept in D1; consolidation carries them to the
index). Lived hour by hour with a diary each night, then consolidated."""

from __future__ import annotations

from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

PIES = "Hilda's pies are the best in the valley, warm from the oven at dawn."
STRANGER = "A hooded stranger paid in foreign gold and asked the way over the pass."
FEVER = "Oswin came in shaking with a fever and could barely hold his cup."
NPCS = (("mira", "Mira", "innkeeper"), ("hilda", "Hilda", "baker"), ("oswin", "Oswin", "miller"))

# day, hour, text, importance, type, about
DAYS: tuple[tuple[int, int, str, float, str, tuple[str, ...]], ...] = (
    (1, 6, "I lit the fires and swept the taproom before dawn.", 0.2, "event", ()),
    (1, 7, STRANGER, 0.7, "event", ()),
    (1, 8, PIES, 0.7, "opinion", ("hilda",)),
    (1, 9, "The hooded stranger took the corner table and watched the door.", 0.55, "event", ()),
    (1, 10, "Oswin owes me three silver for the ale at the harvest dance.", 0.65, "opinion", ("oswin",)),
    (1, 11, "A cart of barley went past towards the mill.", 0.2, "event", ()),
    (1, 12, "The baker sold me two dozen rolls for the travellers.", 0.6, "event", ("hilda",)),
    (1, 13, "The cellar roof is leaking again over the cider barrels.", 0.4, "event", ()),
    (1, 14, "Oswin sang at the inn all night and kept the guests awake.", 0.5, "event", ("oswin",)),
    (1, 15, "The stranger's horse was lathered as if ridden all night.", 0.5, "event", ()),
    (1, 16, "I counted the week's takings twice.", 0.3, "event", ()),
    (1, 17, "Rain came in from the west at dusk.", 0.2, "event", ()),
    (1, 18, "Hilda asked me to keep a room free for her sister.", 0.4, "relationship", ("hilda",)),
    (1, 19, "The miller paid nothing again and laughed about it.", 0.6, "opinion", ("oswin",)),
    (1, 20, "I locked the doors early.", 0.1, "event", ()),
    (2, 6, "The well by the inn tasted of iron after the rain.", 0.35, "event", ()),
    (2, 7, FEVER, 0.8, "event", ("oswin",)),
    (2, 8, "The stranger left before dawn without a word, owing nothing.", 0.6, "event", ()),
    (2, 9, "Hilda brought bread for the travellers at noon.", 0.5, "event", ("hilda",)),
    (2, 10, "I sold the last barrel of plum brandy.", 0.4, "event", ()),
    (2, 11, "Hilda says the price of flour will rise.", 0.45, "relationship", ("hilda",)),
    (2, 12, "The taproom floor needs new boards.", 0.3, "event", ()),
    (2, 13, "Oswin's daughter came for willow bark tea for him.", 0.5, "event", ("oswin",)),
    (2, 14, "Two pilgrims asked for the cheapest room.", 0.3, "event", ()),
    (2, 15, "The baker's cart lost a wheel outside the inn.", 0.4, "event", ("hilda",)),
    (2, 16, "I patched the cellar roof with tar.", 0.35, "event", ()),
    (2, 17, "A letter came from my brother in the city.", 0.5, "event", ()),
    (2, 18, "The stranger's gold coins bear a king's head I do not know.", 0.55, "event", ()),
    (2, 19, "Hilda's apprentice burned the morning loaves.", 0.35, "event", ("hilda",)),
    (2, 20, "The night was quiet.", 0.1, "event", ()),
)


OSWIN_FEVER = "I woke with a burning fever and could not stand."
# Oswin's own days: the fever is the last thing he remembers of day 2 (its summary's neighbour in the day)
OSWIN_DAYS: tuple[tuple[int, int, str, float, str, tuple[str, ...]], ...] = (
    (1, 8, "Mira says the miller's ale tab is the longest in the valley.", 0.65, "opinion", ("mira",)),
    (1, 10, "The millstone cracked and I lost a day's grinding.", 0.6, "event", ()),
    (1, 14, "Mira charged me double for a bowl of stew.", 0.55, "relationship", ("mira",)),
    (1, 18, "I sang at the inn all night.", 0.5, "event", ()),
    (2, 8, "The miller from Eastbrook undercut my price for flour.", 0.65, "event", ()),
    (2, 10, "Hilda bought ten sacks of flour and paid in full.", 0.6, "relationship", ("hilda",)),
    (2, 12, "A traveller asked whether the miller grinds rye.", 0.5, "event", ()),
    (2, 15, "Hilda says my flour is the finest in the valley.", 0.55, "opinion", ("hilda",)),
    (2, 20, OSWIN_FEVER, 0.8, "event", ()),
)


def live(system: MemorySystem, clock: SimClock, npcs: tuple[str, ...] = ("mira",)) -> dict[str, str]:
    """The NPCs' two days ("mira": DAYS, "oswin": OSWIN_DAYS) hour by hour, a diary each night, then consolidation
    on day 4; the memories' ids by text."""
    for npc_id, name, role in NPCS:
        system.register_npc(npc_id, name, role)
    days = {"mira": DAYS, "oswin": OSWIN_DAYS}
    lived = sorted((day, hour, npc, *rest) for npc in npcs for day, hour, *rest in days[npc])
    ids = {}
    for day in (1, 2):
        for _, hour, npc, text, importance, kind, about in (m for m in lived if m[0] == day):
            clock.advance_to(WorldTime(day, hour))
            memory = ShortTermMemory(npc, text, importance, WorldTime(day, hour), type=kind, about=about)  # type: ignore[arg-type]
            system.remember(memory)
            ids[text] = memory.id
        clock.advance_to(WorldTime(day, 23))
        for npc in npcs:
            system.write_diary(npc, day)
    clock.advance_to(WorldTime(4))
    system.consolidate()
    return ids
