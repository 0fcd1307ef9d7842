"""How a villager's view of another moves: through events, with inertia. Pure: no randomness, no I/O.

Each NPC holds an affinity for each other (-1..1) and a view (warm or cold). What happens between them shifts the
affinity by a fixed amount for its kind (`SHIFTS`: a kindness, a quarrel, a slight, a rumour, a pleasant chat).
The view turns only when the affinity crosses the far side of a dead band (`TURN_AT`): a warm view turns cold
below -0.2, a cold one warm above +0.2, so one quarrel never undoes a friendship and the view does not flicker
around zero (hysteresis). The village writes an opinion memory saying so when a view turns, naming the event
that tipped it, and otherwise restates the view it holds: the NPC's opinions change only for reasons its
memories show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cause = Literal["kindness", "quarrel", "slight", "rumour", "chat"]
View = Literal[1, -1]  # warm, cold
WARM: View = 1
COLD: View = -1
VIEW_VALUES: dict[View, str] = {WARM: "warm", COLD: "cold"}  # the state value an opinion memory gives its view

SHIFTS: dict[Cause, float] = {
    "kindness": 0.15,  # they did me a kindness
    "chat": 0.02,  # a pleasant talk
    "quarrel": -0.12,  # a sharp disagreement
    "slight": -0.12,  # rude, unfair or a broken promise
    "rumour": -0.04,  # something unkind heard about them
}
TURN_AT = 0.2  # the dead band's half width: a view turns only past -0.2 (to cold) or +0.2 (to warm)


def initial_view(affinity: float) -> View:
    return WARM if affinity >= 0.0 else COLD


def shifted(affinity: float, cause: Cause) -> float:
    """The affinity after one event of that kind, kept in -1..1 and rounded as the village stores it."""
    return round(max(-1.0, min(1.0, affinity + SHIFTS[cause])), 3)


def view_after(view: View, affinity: float, turn_at: float = TURN_AT) -> View:
    """The view held at this affinity, coming from `view`: it turns only beyond the dead band's far side."""
    if view == WARM and affinity < -turn_at:
        return COLD
    if view == COLD and affinity > turn_at:
        return WARM
    return view


def turns_towards(cause: Cause) -> View:
    """The direction an event of this kind pushes a view."""
    return WARM if SHIFTS[cause] > 0 else COLD


@dataclass(frozen=True, slots=True)
class Feeling:
    """One NPC's feeling for another: the affinity and the view it holds."""

    affinity: float
    view: View

    @classmethod
    def starting_at(cls, affinity: float) -> Feeling:
        return cls(affinity, initial_view(affinity))

    def after(self, cause: Cause) -> Feeling:
        affinity = shifted(self.affinity, cause)
        return Feeling(affinity, view_after(self.view, affinity))

    def turned_from(self, before: Feeling) -> bool:
        return self.view != before.view
