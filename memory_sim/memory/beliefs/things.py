"""The thing a possession, plan or place memory is about, as a key's last part ("horse", "fair", "bridge").

No parser: a noun phrase is a determiner (or number) followed by modifiers and a run of nouns, and its head is the
run's last noun ("my mother's silver locket" -> "locket", "the shop sign green" -> "sign"). A few words that name
a measure or an errand ("a flock of sheep", "a trip to the sea", "the idea of buying a goat", "a mind to visit my
sister", "a share in the cart") hand over to the phrase after them. A run of nouns ends where the sentence goes on:
a verb agreeing with it ("the clock stands in the hall"), a participle ("the chimney swept", "a shop selling
ribbons"), a name in apposition ("my sheepdog Gyp"); "the fair's off" is the fair, not a possessive.

A plan is often named by its sentence's shape more than by its first noun: what it replaces ("oats instead of
barley"), what is said to be off ("so the sea trip is off"), what savings were put by for, where a plan of going
goes ("take the horses to the fair"); and a stranger's deed is about its object ("the bailiff carried off the
clock"). Pure and small: word lists, not a tagger, so it misses what they miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+|[.,;:!?]")
DETERMINERS = frozenset(
    "a an the my his her our their your its this that these those some every all another".split()
)
NUMBERS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred dozen".split()
)
# Words that end a noun run or are never a thing (function words, common verbs and adverbs).
_NOT_NOUNS = frozenset(
    """
    i me we us you he him she they them it itself myself is am are was were be been being has have had do does did
    will would shall should can could may might must won't can't don't didn't isn't wasn't i'm i've i'll i'd it's
    there's he's she's and or but so if of to in on at by for with from into onto over under up down out off about
    after before until since than as like near behind across through around without within against along instead
    again back home away here there anywhere everywhere somewhere nowhere along then now today tonight yesterday
    tomorrow too very still just not no never ever
    all none left right only also even soon later last next once twice too much many more most less few
    rather quite almost aside apart ahead abroad together alone
    who whom whose which what when where why how that this these those
    is gone went go goes going come came comes coming get got gets take took takes taken give gave given make made
    keep kept keeps find found lose lost sell sold buy bought bring brought put puts let lets see saw seen say said
    tell told own owns owned plan plans planned mean means meant want wants wanted intend intends decide decided
    try tried hope hoped need needs needed use used called named worth left stole stolen took missing broke broken
    smashed died killed returned spent saving saved dropped cancelled cancel won't will work works worked
    """.split()
)
ADJECTIVES = frozenset(
    """
    old new young good fine great big small little best better worse worst poor rich fresh rotten sturdy heavy light
    grey gray brown black white red green blue yellow golden silver copper iron wooden stone leather wool woollen
    prize loyal lame sick sound dry wet muddy broken cracked second first third last other own whole half full empty
    long short tall low high deep shallow wide narrow cold warm hot sweet sour dear cheap lovely fat thin strong
    weak two-wheeled lost stolen fallen
    """.split()
)
# Never the thing a plan or possession is keyed by.
TIME_WORDS = frozenset(
    "day days week weeks month months year years morning evening night spring summer autumn winter harvest "
    "monday tuesday wednesday thursday friday saturday sunday while time".split()
)
# People and money: what a plan is for only when nothing else is named ("ask the smith for a plough").
ERRAND_WORDS = frozenset(
    "smith reeve priest miller baker doctor healer physician neighbour man woman boy girl lad lass mother father "
    "brother sister son daughter cousin aunt uncle wife husband friend friends child children widow king lord "
    "lady thief constable drover merchant money savings coin coins penny pennies silver rent".split()
)
# Verbs whose object may come without a determiner ("I keep goats").
_BARE_OBJECT_VERBS = frozenset(
    "own owns keep keeps have has sell sells sold buy bought raise raises plant sow grow paint build fix mend "
    "repair dig visit".split()
)
# Words ending in -ed that are nouns; other -ed words are taken for verbs ("my mule wandered off").
_ED_NOUNS = frozenset("bread thread steed creed speed sled shed bed reed weed seed deed feed need".split())
_LY_NOUNS = frozenset("belly jelly lily holly folly bully ally family fly rally gully tally doily".split())
_PAST_TENSE = frozenset(
    "threw went came ran fell broke took gave got sat stood wore tore drove rode swam sank grew knew flew "
    "bit hid shook woke wrote spoke stole froze chose blew drew sang rang began ate hung felt kept met paid "
    "sent spent thought won "
    # irregular past participles: "the chimney swept", "the roof rebuilt", "the hay mown"
    "swept slept wept crept built rebuilt bent lent dealt burnt dug struck spun bought brought caught taught "
    "fought sought led fed bred fled held lit laid thrown shown sewn sown mown worn torn sworn driven ridden "
    "written hidden spoken frozen chosen woken eaten given taken forgotten beaten bitten shaken grown known "
    "flown blown drawn begun sung sunk shrunk swum".split()
)
# Verbs of position, which follow their subject and take no object ("the clock stands in the hall"): the base
# form after a plural noun, the -s form after a singular one ("a market stand" is a noun: the agreement fails).
_POSITION_VERBS = frozenset("stand sit lie hang rest stay lean wait sleep live".split())
# Adverbs and participles that describe a noun between a determiner and it ("the back gate", "my missing goat").
_ATTRIBUTIVE = frozenset("back home left right missing only next".split())
# Words that follow "is" or "has" but never a possessive: "the fair's off" is "the fair is off".
_AFTER_IS = frozenset("off on over gone done up down out away back still not never been too very here there now just"
                      .split())
# Words that measure or frame the thing meant: the phrase after them names it.
_FRAMES = frozenset(
    "flock herd pair sack sacks basket bag loaf loaves trip journey visit voyage idea thought plan plans dozen "
    "head piece pieces lot bit cup jug barrel crate load hive swarm bolt bale bundle sheaf skein "
    "mind notion fancy share shares stake part".split()  # "a mind to", "a share in"
)
# Frames of a part held in something: "in" names the whole ("a share in the mill cart").
_PART_FRAMES = frozenset("share shares stake part".split())
# Frames of going: a noun before them names where ("a sea trip to see the coast" is a trip to the sea).
_JOURNEYS = frozenset("trip journey voyage visit".split())
# Nouns of money put by for something: "the loom money" is for a loom.
_FOR_WORDS = frozenset("money savings fund purse".split())
SYNONYMS = {
    "mare": "horse", "stallion": "horse", "cob": "horse", "pony": "horse", "colt": "horse", "gelding": "horse",
    "filly": "horse", "steed": "horse", "nag": "horse",
    "handcart": "cart", "wagon": "cart", "waggon": "cart", "barrow": "cart", "wheelbarrow": "cart", "cart": "cart",
    "sow": "pig", "hog": "pig", "boar": "pig", "piglet": "pig",
    "sheepdog": "dog", "hound": "dog", "puppy": "dog", "pup": "dog",
    "heifer": "cow", "calf": "cow",
}


def tokens(text: str) -> list[str]:
    """Words (possessive 's kept on the word) and the punctuation that ends a phrase."""
    return _TOKEN.findall(text)


def _plain(word: str) -> str:
    return word.lower().removesuffix("'s").removesuffix("'")


def _is_possessive(word: str) -> bool:
    return word.lower().endswith("'s") or word.lower().endswith("s'")


def _verb_like(plain: str) -> bool:
    """A past tense or participle ("wandered", "swept"), or an adverb in -ly ("my hand badly")."""
    return (plain in _PAST_TENSE or (plain.endswith("ed") and plain not in _ED_NOUNS)
            or (plain.endswith("ly") and plain not in _LY_NOUNS))


def _noun(word: str) -> bool:
    plain = _plain(word)
    return (  # a hyphenated word is one: "a second-hand cart", "the house-warming party"
        len(plain) > 1 and plain.replace("-", "").isalpha() and plain not in _NOT_NOUNS and plain not in DETERMINERS
        and plain not in ADJECTIVES and plain not in NUMBERS and not _verb_like(plain)
    )


def phrase_heads(text: str, *, names: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(determiner, head noun) of each noun phrase in order; `names` (lower-case) are never heads."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    heads: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        opener = _plain(words[i])
        if (opener in DETERMINERS or opener in NUMBERS or opener in _BARE_OBJECT_VERBS
                or (_is_possessive(words[i]) and i > 0)):
            head, i = _head_after(words, i + 1, skip)
            if head:
                heads.append((opener, head))
            continue
        i += 1
    return heads


def _head_after(words: Sequence[str], start: int, skip: set[str]) -> tuple[str, int]:
    """The head noun of the phrase starting at `start` (after a determiner) and where scanning goes on."""
    i = start
    while i < len(words) and (_plain(words[i]) in ADJECTIVES or _plain(words[i]) in NUMBERS
                              or (_is_possessive(words[i]) and not _contracted(words, i))
                              or _participle_before_noun(words, i) or _attributive(words, i)):
        i += 1  # modifiers: "old", "twenty", "my mother's", "brindled", "back"
    run: list[str] = []
    while i < len(words) and _noun(words[i]) and not _is_possessive(words[i]) and not (run and _ends_run(words, i)):
        run.append(_plain(words[i]))
        i += 1
    if i < len(words) and _contracted(words, i):  # "the fair's off": the noun, then "is"
        run.append(_plain(words[i]))
        i += 1
    run = [w for w in run if w not in skip]
    if not run:
        return "", i
    head = run[-2] if len(run) > 1 and run[-1] in _FOR_WORDS else run[-1]  # "the loom money": a loom
    if head in _FRAMES:
        if len(run) > 1 and head in _JOURNEYS:  # "a sea trip to see the coast": the sea
            return run[-2], i
        rest, after = _framed(words, i, skip, head)
        if rest:
            return rest, after
        if len(run) > 1:  # "the hay bale": the noun before the frame names the thing
            return run[-2], i
    return head, i


def _contracted(words: Sequence[str], i: int) -> bool:
    """Whether words[i] is a noun with "is" or "has" cut to 's ("the fair's off", "the cart's broken"), not a
    possessive: no noun phrase follows it ("the cart's broken wheel" is the wheel of the cart)."""
    if not words[i].lower().endswith("'s") or not _noun(words[i]) or i + 1 >= len(words):
        return False
    after = _plain(words[i + 1])
    then = words[i + 2] if i + 2 < len(words) else "."
    return after in _AFTER_IS or ((_verb_like(after) or after in ADJECTIVES) and not _noun(then))


def _attributive(words: Sequence[str], i: int) -> bool:
    return _plain(words[i]) in _ATTRIBUTIVE and i + 1 < len(words) and _noun(words[i + 1])


def _participle_before_noun(words: Sequence[str], i: int) -> bool:
    """An -ed word right after a determiner and before a noun describes it ("a brindled cat", "the spotted pony")."""
    word = _plain(words[i])
    return (word.endswith("ed") and word not in _ED_NOUNS and i + 1 < len(words) and _noun(words[i + 1])
            and not _is_possessive(words[i + 1]))


def _ends_run(words: Sequence[str], i: int) -> bool:
    """Whether words[i], after a noun, starts what follows the noun phrase rather than going on with it: a verb
    ("my sheepdog guards", "the clock stands in", "the candlesticks stand on"), a name in apposition ("my
    sheepdog Gyp"), or a participle of a known verb opening a clause ("a shop selling ribbons")."""
    word, before = _plain(words[i]), _plain(words[i - 1])
    return (_verb_s(words, i) or _position_verb(word, before) or (words[i][:1].isupper() and words[i - 1].islower())
            or _clause_participle(words, i))


def _position_verb(word: str, before: str) -> bool:
    """A verb of position agreeing with the noun before it: "stands" after "clock", "stand" after "candlesticks"."""
    plural = before.endswith("s") and not before.endswith("ss")
    return (word in _POSITION_VERBS and plural) or (word.removesuffix("s") in _POSITION_VERBS and word.endswith("s")
                                                    and not plural)


def _clause_participle(words: Sequence[str], i: int) -> bool:
    """An -ing form of a known verb with a phrase after it ("a shop selling ribbons", "the cart taking the hay"): a
    clause about the noun, not part of its name ("the church wedding dress": "wed" is no known verb)."""
    word = _plain(words[i])
    after = _plain(words[i + 1]) if i + 1 < len(words) else ""
    if not word.endswith("ing") or not (after in DETERMINERS or after in NUMBERS or _noun(after)):
        return False
    stem = word[:-3]
    known = _NOT_NOUNS | _BARE_OBJECT_VERBS
    return stem in known or stem + "e" in known or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in known)


def _verb_s(words: Sequence[str], i: int) -> bool:
    """Whether words[i], after a noun, is a verb in -s ("my sheepdog guards the flock"): it ends in a single s and
    a determiner follows (before a preposition it may be a plural: "pear trees in the orchard")."""
    word = _plain(words[i])
    after = _plain(words[i + 1]) if i + 1 < len(words) else ""
    return word.endswith("s") and not word.endswith("ss") and after in DETERMINERS


def _framed(words: Sequence[str], i: int, skip: set[str], frame: str) -> tuple[str, int]:
    """After a framing word ("a trip", "a flock", "a mind"): the head of the phrase that follows "of"/"to"/"for"
    (or "in" after a part: "a share in the cart"); after "to", a verb and its object ("a mind to visit my
    sister")."""
    links = ("of", "to", "for", "in") if frame in _PART_FRAMES else ("of", "to", "for")
    if i < len(words) and _plain(words[i]) in links:
        j = i + 1
        while j < len(words) and j < i + 4:  # "of buying a goat": a verb or two before the phrase
            if _plain(words[j]) in DETERMINERS or _plain(words[j]) in NUMBERS:
                return _head_after(words, j + 1, skip)
            infinitive = _plain(words[i]) == "to" and _verb_before_phrase(words, j)
            if _noun(words[j]) and not infinitive and not _plain(words[j]).endswith("ing"):  # not "buying"
                return _head_after(words, j, skip)
            j += 1
    return "", i


def _verb_before_phrase(words: Sequence[str], j: int) -> bool:
    """Whether words[j] (after "to", "rather than") is a verb: a known one, or a word with an object after it ("to
    visit my sister"; "to Harrow" is a place, "barley this year" a noun and a time)."""
    after = _plain(words[j + 1]) if j + 1 < len(words) else ""
    known = _plain(words[j]) in _NOT_NOUNS or _plain(words[j]) in _BARE_OBJECT_VERBS
    object_next = after in DETERMINERS and _head_after(words, j + 2, set())[0] not in TIME_WORDS  # not "this year"
    return known or object_next


def _phrase_head(words: Sequence[str], start: int, skip: set[str]) -> str:
    """The head noun of the phrase at `start`, past a determiner or number opening it ("a lost lamb", "goats")."""
    opener = _plain(words[start])
    return _head_after(words, start + 1 if opener in DETERMINERS or opener in NUMBERS else start, skip)[0]


def object_of(text: str, verbs: frozenset[str], *, names: Iterable[str] = ()) -> str:
    """The head noun of the first phrase right after one of `verbs` ("found a lost lamb" -> "lamb"), or ""."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    for i, word in enumerate(words[:-1]):
        if _plain(word) in verbs:
            head = _phrase_head(words, i + 1, skip)
            if head:
                return head
    return ""


# Verbs of going or of taking something along: a plan made with one is for where it goes.
_GOING_VERBS = frozenset(
    "go goes going went take takes taking took bring brings bringing carry carries carrying send sends sending "
    "drive drives driving ride rides riding walk walks walking travel travels travelling".split()
)
# What may follow a bare place after "to" ("to market on Friday", "to church."): else the word is a verb ("to milk
# the cows") or begins a longer phrase.
_AFTER_BARE_PLACE = frozenset("on at in with for after before by this next tomorrow today tonight".split())


def destination(text: str, *, names: Iterable[str] = ()) -> str:
    """Where a plan of going goes: the phrase after "to" following a verb of going or taking, within its clause
    ("I'll take the horses to the Ashford fair" -> "fair", "I won't go to Dunmere" -> "dunmere"), or after "home
    from" / "away from" ("keeping the horses home from the fair" -> "fair"); "" if none (a verb after "to" is
    an errand's purpose: "going to plant barley")."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    going = -1
    for i, word in enumerate(words):
        plain = _plain(word)
        if plain in _GOING_VERBS:
            going = i
        elif plain in ".,;:!?":
            going = -1
        elif i + 1 < len(words) and ((plain == "to" and going >= 0 and i - going <= 6)
                                     or (plain == "from" and _plain(words[i - 1]) in ("home", "away"))):
            place = _place_after(words, i + 1, skip)
            if place:
                return place
            going = -1  # "going to sell the ring to the tinker": a future, and the tinker a buyer
    return ""


def _place_after(words: Sequence[str], j: int, skip: set[str]) -> str:
    """The place a phrase from words[j] names: a determiner's phrase, a name ("Dunmere", "Dunmere market"), or a
    bare noun ending a phrase ("to market on Friday")."""
    first = _plain(words[j])
    after = _plain(words[j + 1]) if j + 1 < len(words) else "."
    if first in DETERMINERS:
        return _head_after(words, j + 1, skip)[0]
    if _noun(words[j]) and (words[j][:1].isupper() or after in _AFTER_BARE_PLACE or after in ".,;:!?"):
        return _head_after(words, j, skip)[0]
    return ""


def replaced(text: str, *, names: Iterable[str] = ()) -> str:
    """What a changed plan replaces, named after "instead of" or "rather than" ("I'll sow oats instead of barley"
    -> "barley"): the plan it changes, the key the older memory has; "" before a verb."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    for i in range(len(words) - 2):
        pair = (_plain(words[i]), _plain(words[i + 1]))
        if pair in (("instead", "of"), ("rather", "than")):
            if _verb_before_phrase(words, i + 2):  # "rather than pay the smith": another deed, not a thing
                return ""
            return _phrase_head(words, i + 2, skip)
    return ""


# Words right before a "for" that names what savings are for ("put by for", "set aside for", "saving for").
_PUT_BY = frozenset("aside by save saves saved saving".split())


def saved_for(text: str, *, names: Iterable[str] = ()) -> str:
    """What something is put by for ("The timber I'd set aside for the boat went on the byre" -> "boat"): a plan
    is for what its savings are for, whatever they went on; "" if none ("puts a loaf by for me": no thing)."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    for i in range(1, len(words) - 1):
        if _plain(words[i]) == "for" and _plain(words[i - 1]) in _PUT_BY:
            return _phrase_head(words, i + 1, skip)
    return ""


# What a plan called off or put off is said to be: "the sea trip is off", "the henhouse can wait".
_CALLED_OFF = frozenset("off cancelled canceled postponed".split())


def called_off(text: str, *, names: Iterable[str] = ()) -> str:
    """The plan the text says is off or put off ("The savings went on the roof, so the sea trip is off" ->
    "trip"'s thing, "sea"): the noun phrase before "is off", "is cancelled", "can wait", "will have to wait"."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    for start, word in enumerate(words):
        if _plain(word) not in DETERMINERS:
            continue
        head, i = _head_after(words, start + 1, skip)
        after = [_plain(w) for w in words[i : i + 4]] + ["", ""]
        contracted = i > 0 and words[i - 1].lower().endswith("'s")  # "the fair's off"
        said = after[1:] if after[0] in ("is", "was", "are", "were") else after if contracted else ["", ""]
        said = said[1:] if said[:2] == ["put", "off"] else said  # "is put off": "off"
        # "off" before "to" or a phrase is a preposition: "the cart is off to market", "the goat is off her food"
        if head and ((said[0] in _CALLED_OFF and said[1] != "to" and said[1] not in DETERMINERS)
                     or (after[0] in ("can", "will", "must") and "wait" in after[1:4])):
            return head
    return ""


# Particles between a verb and its object ("carried off the clock", "took away the ladder"); not "in", which
# opens a place as often ("died in his sleep").
_PARTICLES = frozenset("off away up out down back".split())


def acted_on(text: str, *, names: Iterable[str] = ()) -> str:
    """The object of what the text's opening subject did ("The bailiff carried off the clock" -> "clock"): the
    subject acts on the thing, so the thing is the object, not the subject; "" where the text opens otherwise or
    its verb takes no object ("The goat wandered off", "The knife was lost"), or the subject is the NPC's own ("My
    sheepdog guards the flock" is about the dog)."""
    words = tokens(text)
    skip = {n.lower() for n in names}
    if not words or _plain(words[0]) not in ("the", "a", "an"):  # "My sheepdog guards the flock": the dog
        return ""
    head, i = _head_after(words, 1, skip)
    if not head or i >= len(words) or not (_verb_like(_plain(words[i])) or _verb_s(words, i)):
        return ""
    i += 1
    if i < len(words) and _plain(words[i]) in _PARTICLES:
        i += 1
    if i < len(words) and (_plain(words[i]) in DETERMINERS or _plain(words[i]) in NUMBERS):
        return _head_after(words, i + 1, skip)[0]
    return ""


def canonical(noun: str) -> str:
    """The key's spelling of a thing: a few kinds named one way ("stallion" -> "horse"), else the noun itself."""
    return SYNONYMS.get(noun, noun)
