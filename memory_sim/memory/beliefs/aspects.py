"""What kind of state a memory sets (its aspect): the aspects, and a small lexicon of cue words per aspect, which
the aspect model (aspect_model.py) reads beside the sentence embedding and which decides alone when no embedder
is at hand. None of it leans on change words ("now", "no longer", "at last"...): a memory sets a state by what
it says, not by how it says that something changed.

Aspects that hold between the NPC and one other NPC are RELATIONAL; the others are the NPC's own (or, reported of
another NPC, that NPC's). NONE gathers what sets no state: kinship, shared habits, one-off events.
"""

from __future__ import annotations

import re

RELATIONAL = ("opinion", "relationship", "debt", "trade")
OWN = ("health", "home", "whereabouts", "work")
THINGS = ("possession", "plan", "place")  # keyed by a thing: "possession:horse", "plan:fair", "place:bridge"
NONE = "none"
NEUTRAL_NAME = "Sam"  # the examples' one NPC name; a memory's NPC names read as it
SPOKEN = f"{NEUTRAL_NAME}: "  # opens the text the aspect model reads for a line of talk (keys.py, speech.py)
ASPECTS = (*RELATIONAL, *OWN, *THINGS, NONE)

# Parts of the body: what happens to them is health, never a possession ("I have a broken finger").
BODY_PARTS = frozenset(
    "arm arms leg legs back ankle ankles knee knees foot feet hand hands finger fingers toe toes head eye eyes "
    "ear ears tooth teeth chest side throat hip hips shoulder neck wrist stomach belly skin lungs heart".split()
)
_W = r"[a-z'-]+"
CUES: dict[str, re.Pattern[str]] = {
    "opinion": re.compile(
        r"\b(trust|distrust|like|likes|dislike|admire|despise|hate|loathe|can't stand|honest|cheat|"
        r"thief|sneak|fool|bully|wary|kind|kindest|cruel|generous|decent|wicked|good man|good woman|friends?|"
        r"enem(y|ies)|quarrel\w*|feud\w*|falling out|grudge|made peace|"
        r"buried the hatchet|haven't spoken|wrong about|loggerheads|fight|fought)\b"
    ),
    "relationship": re.compile(
        r"\b(marr(y|ied|iage)|engaged|engagement|betroth\w*|court(ing|ed|s)?|sweethearts?|"
        r"husband|wife|wed|wedding|walking out|seeing each other|parted ways|separated|ring|divorce\w*)\b"
    ),
    "debt": re.compile(
        r"\b(owe|owes|owed|owing|debts?|borrow\w*|lent|lend|loan|repa(y|id)|paid|pay|settled?|"
        r"quits|into me for|returned|"
        r"(brought|gave|handed|paid)( \w+){0,3} back)\b"
    ),
    "trade": re.compile(
        r"\b(buy|buys|bought from|sell|sells|trade|trades|trading|deal|deals|dealings|supplier|customer|custom|"
        r"gets? (my|her|his|our|their) \w+ from|"
        r"partners?|stall)\b"
    ),
    "health": re.compile(
        r"\b(fever|sick|sickness|ill|illness|cough\w*|pain|aches?|hurts?|injur\w*|broke my|broken (arm|leg)|"
        r"wound\w*|heal(s|ed|ing)?|recover\w*|pox|chill|plague|ague|limp\w*|sore|ankle|"
        r"in bed|to (my|his|her) bed|bedridden|"
        r"healthy|well again|"
        r"strong)\b|\bmy (" + "|".join(sorted(BODY_PARTS)) + r")\b"
    ),
    "home": re.compile(
        r"\b(live|lives|lived|living|(my|our|a|new) home|home is|has a house|moved|move|lodge|lodging|rooms|settled|"
        r"house of (my|her|his) own)\b"
    ),
    "whereabouts": re.compile(
        r"\b(away|staying|visiting|back (in|from)|returned from|home again|home from|gone to (nurse|stay|visit)|"
        r"for (a|the) (week|fortnight|month))\b"
    ),
    "work": re.compile(
        r"\b(work|works|worked|job|farmhand|employ\w*|hired|became|become|as a|for a living|into service)\b"
    ),
    "possession": re.compile(
        r"\b(own|owns|have an?|keep|lost|found|can't find|stole|stolen|missing|traded my|sold my|"
        r"bought an?|took my|got my|died|"
        r"killed|smashed)\b"
    ),
    "plan": re.compile(
        r"\b(plan|plans|planning|mean to|going to|i'll|will|won't|want to|hoping to|set on|decided|cancel\w*|"
        r"postpone\w*|idea of|until next|instead|have to wait|thought better)\b"
    ),
    NONE: re.compile(r"\b(together|taught me|showed me|helped me)\b"),
    "place": re.compile(
        r"\b(flooded|repaired|broken|dry|closed|open|opened|crumbling|cracked|"
        r"muddy|collapsed|choked|snowed in|cleared)\b"
    ),
}

KIN = (
    r"brother|sister|cousin|aunt|uncle|niece|nephew|mother|father|son|daughter|grandmother|grandfather|"
    r"grandson|granddaughter|godfather|godmother|godson|goddaughter|stepmother|stepfather|twin|kin|"
    r"[a-z]+-in-law"
)
# "Tom is my mother's brother", "Wren is my cousin", "we are cousins": facts that never stop being true ("a kettle
# that was my mother's" is not kinship).
KINSHIP = re.compile(
    rf"\b(is|was|are) (my|our) ({_W}'s )?({KIN})\b(?!'s?\s*([.,;:!?]|$))|\bare (cousins|brothers|sisters|twins|kin)\b"
)
# Nouns a place memory is keyed by, first found first taken.
PLACE_NOUNS = frozenset(
    "bridge road well ford mill tower chapel church inn tavern square market lane path river pond "
    "field fields harbour dock wall gate barn granary forge smithy bakery school fair fairground green pass "
    "track street dam weir quarry mine orchard watchtower churchyard graveyard castle manor hall abbey priory "
    "shrine pier jetty quay canal ferry pasture meadow common wood forest marsh moor cave stables school tannery "
    "brewery alehouse tower".split()
)
