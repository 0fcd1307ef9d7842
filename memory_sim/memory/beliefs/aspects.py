"""What kind of state a memory sets (its aspect), read from its meaning: short prototype sentences per aspect, for a
sentence embedder to compare with, and a small lexicon of cue words per aspect, for when no embedder is at hand
and to steady the embedder where its similarities are close. None of it leans on change words ("now", "no
longer", "at last"...): a memory sets a state by what it says, not by how it says that something changed.

Aspects that hold between the NPC and one other NPC are RELATIONAL; the others are the NPC's own (or, reported of
another NPC, that NPC's). NONE gathers what sets no state: kinship, shared habits, one-off events.
"""

from __future__ import annotations

import re

RELATIONAL = ("opinion", "relationship", "debt", "trade")
OWN = ("health", "home", "whereabouts", "work")
THINGS = ("possession", "plan", "place")  # keyed by a thing: "possession:horse", "plan:fair", "place:bridge"
NONE = "none"
ASPECTS = (*RELATIONAL, *OWN, *THINGS, NONE)

PROTOTYPES: dict[str, tuple[str, ...]] = {
    "opinion": (
        "I trust him.", "I don't trust her at all.", "He is an honest man.", "She is a liar and a cheat.",
        "I admire her.", "I can't stand him.", "He is kind and generous.", "She is cruel.", "He is a fool.",
        "We are good friends.", "We quarrelled and are not speaking.", "We made peace.",
        "He is a decent fellow after all.", "We are enemies.", "She is wonderful company.",
    ),
    "relationship": (
        "We are engaged to be married.", "She is my wife.", "He is my husband.", "He is courting me.",
        "We got married.", "She broke off our engagement.", "We have separated.", "We are sweethearts.",
        "The wedding is called off.",
    ),
    "debt": (
        "He owes me money.", "I owe her two silver coins.", "She lent me money.", "I borrowed his tools.",
        "He paid back what he owed.", "I repaid my debt to her.", "She forgave my debt.", "The loan is settled.",
    ),
    "trade": (
        "I buy my bread from her.", "I sell my wool to him.", "She is my supplier.", "I refuse to trade with him.",
        "I will never buy from her again.", "We do business together.", "He sells me his eggs every week.",
        "We are partners in business.",
    ),
    "health": (
        "I am sick with a fever.", "My eyes are weak and I cannot see well.", "I have a bad cough.",
        "I am ill and in bed.", "I broke my leg.",
        "My back hurts.", "I have recovered and feel strong.", "My wound has healed.", "I am healthy.",
        "He is sick.", "She has recovered from her illness.",
        "I worked all day in the field and felt fine.", "She is up and about, full of life.",
    ),
    "home": (
        "I live in a cottage by the river.", "I moved to another town.", "My home is the farm.",
        "I rent a room above the shop.", "She lives with her parents.", "He moved away to the city.",
        "I settled in a new house.",
    ),
    "whereabouts": (
        "I am away travelling.", "I am staying with my cousin for a week.", "I came back from my journey.",
        "He is away on a trip.", "She returned from the city yesterday.", "I am visiting relatives for a while.",
        "She has gone away to look after her family in another village.", "He is home from his travels.",
    ),
    "work": (
        "I work as a shepherd.", "My job is at the mill.", "I serve the smith as his helper.",
        "I took a new job.", "She works at the inn.", "He quit his job and became a baker.",
        "I cut wood for a living.", "He herds sheep for the manor.", "I went into service at the big house.",
    ),
    "possession": (
        "I own a horse.", "I have a cart.", "I lost my ring.", "I found my knife.", "Someone stole my purse.",
        "I sold my cow.", "I bought a new saddle.", "My dog died.", "I keep chickens.",
    ),
    "plan": (
        "I plan to go to the fair.", "I am going to fix the roof next week.", "I intend to buy a goat.",
        "I decided not to go.", "The trip is cancelled.", "I will build a barn this summer.",
        "I put it off until spring.", "I want to visit the city.",
    ),
    "place": (
        "The bridge is broken.", "The road is flooded.", "The well is dry.", "The road is blocked.",
        "The bridge was repaired.", "The tavern is closed.", "The road is open again.",
    ),
    NONE: (
        "He is my brother.", "She is my cousin.", "He is my uncle.", "She is my mother's sister.",
        "We go fishing together every Sunday.", "We sing in the choir together.", "He helped me with the harvest.",
        "We walked to the market together.", "She taught me to sew.", "He fixed my fence.",
        "The baker's bread is excellent.", "She had a baby.", "He is my neighbour.", "I am learning to read.",
    ),
}

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
# "Tom is my mother's brother", "Wren is my cousin", "we are cousins": facts that never stop being true.
KINSHIP = re.compile(
    rf"\b(is|was|are) (my|our) ({_W}'s )?({KIN})\b|\bare (cousins|brothers|sisters|twins|kin)\b"
)
# Nouns a place memory is keyed by, first found first taken.
PLACE_NOUNS = frozenset(
    "bridge road well ford mill tower chapel church inn tavern square market lane path river pond "
    "field fields harbour dock wall gate barn granary forge smithy bakery school fair fairground green pass "
    "track street crossing dam weir quarry mine orchard".split()
)
