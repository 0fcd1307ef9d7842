"""The seeded village: NPCs with roles, places, relationships that change, and hourly ticks that produce what
each NPC notices (events, conversations, opinions, gossip, places) with an importance.

Everything is drawn from one `random.Random` (seeded by `seed`, or given) in a fixed order, so the same seed gives
the same village, the same memories and the same ids. Content comes from templates in `data/` (package data). NPCs
often name each other by role or description ("the blacksmith"), not by name: Margaret, especially, rarely says
"Tom".

Opinions move through events, with inertia (sim/opinions.py): a kindness, a quarrel, a slight, a rumour or a
pleasant chat is remembered and shifts the NPC's affinity for the other; its view turns only past a dead band,
and then it remembers an opinion saying so and naming that event. Otherwise its opinions restate the view it
holds.

The village says what it knows of the state its memories set: each opinion of another NPC sets the view
(`state_key` "opinion:<other>", `state_value` "warm" or "cold", so restatements tell as one view), and what
happens between two NPCs (a chat, a kindness, a slight) sets no state (`infer_key=False`): it may move a view,
and the opinion that says so is the view's change. Gossip, places and the world's news are left to the memory
system's key inference.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from memory_sim.memory.models import MemoryType, ShortTermMemory, WorldTime
from memory_sim.sim.opinions import VIEW_VALUES, WARM, Cause, Feeling, View

DAY_START, DAY_END = 7, 22  # hours when villagers are about
STORY, STORY_WEIGHT = ("margaret", "tom"), 6.0  # the pair the demo asks about, and how much more often it meets
KINDNESS, SLIGHT = 0.15, 0.15  # shares of what one villager sees another do that is a kindness or a slight to it
SUNDAY = 6


def load_data(name: str) -> Any:
    return json.loads(resources.files("memory_sim.sim").joinpath(f"data/{name}.json").read_text("utf-8"))


@dataclass(frozen=True, slots=True)
class Npc:
    id: str
    name: str
    role: str
    work: str
    descriptors: tuple[str, ...]
    pronouns: tuple[str, str, str]  # he/him/his


@dataclass(frozen=True, slots=True)
class WorldEvent:
    id: str
    when: WorldTime
    place: str
    text: str
    importance: float


@dataclass(frozen=True, slots=True)
class Turn:
    """An NPC's view of another turning (sim/opinions.py): when, to which view, the kind of event that tipped
    it, the id of the memory of that event, and the id of the opinion memory saying so."""

    npc_id: str
    other_id: str
    when: WorldTime
    view: View
    cause: Cause
    cause_id: str
    opinion_id: str


@dataclass
class Tick:
    """What one hour produced."""

    when: WorldTime
    memories: list[ShortTermMemory] = field(default_factory=list)
    events: list[WorldEvent] = field(default_factory=list)
    locations: dict[str, str] = field(default_factory=dict)


def pick_npcs(count: int) -> list[Npc]:
    rows = load_data("npcs")
    if not 2 <= count <= len(rows):
        raise ValueError(f"the village has between 2 and {len(rows)} NPCs, got {count}")
    return [
        Npc(r["id"], r["name"], r["role"], r["work"], tuple(r["descriptors"]), tuple(r["pronouns"]))
        for r in rows[:count]
    ]


class Village:
    """A village of `npcs` NPCs (Margaret and Tom always among them), driven by `rng` (`random.Random(seed)` when
    none is given). `affinity` and `feelings` say how each NPC feels about each other one (sim/opinions.py)."""

    def __init__(self, npcs: int = 8, seed: int = 7, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random(seed)
        self.npcs = pick_npcs(npcs)
        self.by_id = {n.id: n for n in self.npcs}
        self.places: dict[str, Any] = load_data("places")
        self.text: dict[str, Any] = load_data("templates")
        self.feelings = {
            (a.id, b.id): Feeling.starting_at(round(self.rng.uniform(-0.3, 0.6), 3))
            for a in self.npcs for b in self.npcs if a != b
        }
        self.turns: list[Turn] = []  # every view that turned, in order

    @property
    def affinity(self) -> dict[tuple[str, str], float]:
        """Each ordered pair's affinity (-1..1), as D1's `relationships` stores it."""
        return {pair: feeling.affinity for pair, feeling in self.feelings.items()}

    # --- choices ----------------------------------------------------------------------------------------------

    def place_of(self, npc: Npc, when: WorldTime) -> str | None:
        hour, rng = when.hour, self.rng
        if not DAY_START <= hour <= DAY_END:
            return None
        if when.day % 7 == SUNDAY and 9 <= hour <= 11:
            return "church"
        if hour <= 17:
            return npc.work if rng.random() < 0.75 else rng.choice(self._errands(npc))
        roll = rng.random()
        return "pub" if roll < 0.5 else ("green" if roll < 0.7 else None)

    def _errands(self, npc: Npc) -> list[str]:
        """Where `npc` goes when not at work by day: market and green, and Margaret to Tom's forge too (the
        demo's pair has to do with each other)."""
        story = self.by_id.get(STORY[1])
        return ["market", "green", story.work] if npc.id == STORY[0] and story is not None else ["market", "green"]

    def refer(self, speaker: Npc, target: Npc) -> str:
        """How `speaker` names `target`: by name, or by role/description (Margaret names Tom rarely)."""
        by_name = 0.2 if (speaker.id, target.id) == ("margaret", "tom") else 0.55
        return target.name if self.rng.random() < by_name else self.rng.choice(target.descriptors)

    def opinion_target(self, npc: Npc) -> Npc:
        return self.partner(npc, [o for o in self.npcs if o.id != npc.id])

    def partner(self, npc: Npc, others: list[Npc]) -> Npc:
        """Whom `npc` has to do with among `others`: Margaret seeks Tom out (the demo's story), the rest anyone."""
        weights = [STORY_WEIGHT if (npc.id, o.id) == STORY else 1.0 for o in others]
        return self.rng.choices(others, weights)[0]

    def _fill(self, template: list[Any], **values: str) -> tuple[str, float]:
        text, low, high = template
        sentence = text.format(**values)
        return sentence[0].upper() + sentence[1:], round(self.rng.uniform(low, high), 2)

    def _place_phrase(self, place: str) -> str:
        return self.rng.choice(self.places[place]["phrases"])

    # --- one hour ---------------------------------------------------------------------------------------------

    def tick(self, when: WorldTime) -> Tick:
        tick = Tick(when)
        for npc in self.npcs:
            place = self.place_of(npc, when)
            if place is not None:
                tick.locations[npc.id] = place
        for npc in self.npcs:
            if npc.id in tick.locations:
                self._notice(npc, tick)
        self._maybe_world_event(tick)
        return tick

    def _remember(
        self, tick: Tick, npc: Npc, text: str, importance: float, kind: MemoryType, about: tuple[str, ...] = (),
        **state: Any,
    ) -> ShortTermMemory:
        """`state`: what the village knows of the state the memory sets (`state_key`, `state_value`,
        `infer_key`: see ShortTermMemory); otherwise the memory system infers it."""
        memory = ShortTermMemory(npc.id, text, importance, tick.when, kind, about, **state)
        tick.memories.append(memory)
        return memory

    def _seen(
        self, tick: Tick, npc: Npc, text: str, importance: float, kind: MemoryType, other: Npc
    ) -> ShortTermMemory:
        """Something that happened between `npc` and `other` (a chat, a kindness): an event that may move a view
        but is not one, so it sets no state (`infer_key=False`)."""
        return self._remember(tick, npc, text, importance, kind, (other.id,), infer_key=False)

    def _said(self, tick: Tick, npc: Npc, text: str, importance: float, other: Npc, view: View) -> ShortTermMemory:
        """An opinion of `other`: it sets `npc`'s view of them (state key "opinion:<other>", value warm or cold)."""
        return self._remember(tick, npc, text, importance, "opinion", (other.id,), state_key=f"opinion:{other.id}",
                              state_value=VIEW_VALUES[view])

    def _notice(self, npc: Npc, tick: Tick) -> None:
        rng, place = self.rng, tick.locations[npc.id]
        here = [self.by_id[o] for o, p in sorted(tick.locations.items()) if p == place and o != npc.id]
        if rng.random() < 0.12:
            self._place_memory(npc, place, tick)
        if here and rng.random() < 0.15:
            self._event(npc, self.partner(npc, here), place, tick)
        if here and rng.random() < 0.2:
            self._conversation(npc, self.partner(npc, here), place, tick)
        if rng.random() < 0.07:
            self._opinion(npc, self.opinion_target(npc), tick)
        if here and rng.random() < 0.05:
            self._gossip(npc, rng.choice(here), tick)

    def _place_memory(self, npc: Npc, place: str, tick: Tick) -> None:
        template = self.rng.choice(self.text["place"])
        text, importance = self._fill(
            template,
            place=self._place_phrase(place),
            smell=self.rng.choice(self.text["smells"]),
            time=self.rng.choice(self.text["times"]),
        )
        self._remember(tick, npc, text, importance, "place")

    def _other_values(self, speaker: Npc, other: Npc, prefix: str) -> dict[str, str]:
        he, him, his = other.pronouns
        return {
            prefix: self.refer(speaker, other),
            f"{prefix[0]}_he": he,
            f"{prefix[0]}_him": him,
            f"{prefix[0]}_his": his,
        }

    def _event(self, npc: Npc, other: Npc, place: str, tick: Tick) -> None:
        """Something `npc` saw `other` do: mostly neither here nor there; sometimes a kindness or a slight to it."""
        roll = self.rng.random()
        kind: Cause | None = "kindness" if roll < KINDNESS else "slight" if roll < KINDNESS + SLIGHT else None
        template = self.rng.choice(self.text[kind or "event"])
        where = self._place_phrase(place)
        text, importance = self._fill(template, place=where, **self._other_values(npc, other, "other"))
        seen = self._seen(tick, npc, text, importance, "event", other)
        if kind is not None:
            self._feel(npc, other, kind, seen, tick, place=where)

    def _conversation(self, npc: Npc, other: Npc, place: str, tick: Tick) -> None:
        template = self.rng.choice(self.text["conversation"])
        topic = self.rng.choice(self.text["topics"])
        text, importance = self._fill(
            template, place=self._place_phrase(place), topic=topic, **self._other_values(npc, other, "other")
        )
        talk = self._seen(tick, npc, text, importance, "relationship", other)
        self._feel(npc, other, "quarrel" if "disagreement" in template[0] else "chat", talk, tick, topic=topic)

    def _opinion(self, npc: Npc, target: Npc, tick: Tick) -> None:
        """The view `npc` holds of `target`, said again in other words: it changes nothing."""
        view = self.feelings[(npc.id, target.id)].view
        template = self.rng.choice(self.text["opinion_positive" if view == WARM else "opinion_negative"])
        text, importance = self._fill(template, **self._other_values(npc, target, "target"))
        self._said(tick, npc, text, importance, target, view)

    def _feel(self, npc: Npc, other: Npc, cause: Cause, because: ShortTermMemory, tick: Tick, **details: str) -> None:
        """`cause` (remembered as `because`) moves how `npc` feels about `other`; when its view turns, it remembers
        an opinion saying so that names the cause (`details`: the topic, the place or who told it, as the cause's
        memory says them), and `turns` records it."""
        before = self.feelings[(npc.id, other.id)]
        after = before.after(cause)
        self.feelings[(npc.id, other.id)] = after
        if not after.turned_from(before):
            return
        turns = self.text["turn_warm" if after.view == WARM else "turn_cold"][cause]
        text, importance = self._fill(self.rng.choice(turns), **details, **self._other_values(npc, other, "target"))
        said = self._said(tick, npc, text, importance, other, after.view)
        self.turns.append(Turn(npc.id, other.id, tick.when, after.view, cause, because.id, said.id))

    def _gossip(self, npc: Npc, speaker: Npc, tick: Tick) -> None:
        targets = [o for o in self.npcs if o.id not in (npc.id, speaker.id)]
        if not targets:
            return
        target = self.rng.choice(targets)
        template = self.rng.choice(self.text["gossip"])
        values = self._other_values(npc, target, "target")
        values["speaker"] = self.refer(npc, speaker)
        text, importance = self._fill(template, **values)
        heard = self._remember(tick, npc, text, importance, "opinion", (speaker.id, target.id))
        self._feel(npc, target, "rumour", heard, tick, speaker=values["speaker"])

    def _maybe_world_event(self, tick: Tick) -> None:
        if not DAY_START <= tick.when.hour <= DAY_END or self.rng.random() >= 0.03:
            return
        place = self.rng.choice(sorted(self.places))
        template = self.rng.choice(self.text["world"])
        text, importance = self._fill(template, place=self.places[place]["name"])
        event = WorldEvent(f"event-{tick.when.day}-{tick.when.hour}", tick.when, place, text, importance)
        tick.events.append(event)
        for npc in self.npcs:  # news travels: everyone about that hour notices
            if npc.id in tick.locations:
                self._remember(tick, npc, text, importance, "event")
