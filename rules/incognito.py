"""Incognito: hide a secret word in a public place; find the others' words.

Each round every player gets a secret word and a public place and draws the word
hidden in the place. The players' words plus words from the deck make a numbered
list of six; each player lays one vote card (1-6, all different) on every other
player's drawing. A finder scores 1; a drawer scores 2 when some, but not all, of
the others found the word. Three rounds; ties are shared.

The "5... stop" countdowns belong to the table binding: the engine says whether
one is running (``countdown.running`` in the public view) and how long it lasts
(``countdown.seconds``); when it runs out the binding sends ``{"type":"timeout"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from msgspec.structs import replace

from rules.core import (
    JSON,
    Action,
    BaseGame,
    Event,
    GameState,
    IllegalAction,
    Rng,
    shared_ranking,
)
from rules.declare import N_, GameInfo, Option, Phase

ROUNDS = 3
LIST_SIZE = 6
LANGS = ("fr", "en")
DEFAULT_COUNTDOWN = 5
MAX_COUNTDOWN = 120
NO_VOTE = 0

DRAW, VOTE, REVEAL, OVER = "draw", "vote", "reveal", "over"


def _load_list(kind: str, lang: str) -> tuple[str, ...]:
    """One word or place list: a UTF-8 text file, one entry a line, ``#`` comments."""
    path = resources.files("rules") / "data" / "incognito" / f"{kind}.{lang}.txt"
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


WORDS: dict[str, tuple[str, ...]] = {lang: _load_list("words", lang) for lang in LANGS}
PLACES: dict[str, tuple[str, ...]] = {lang: _load_list("places", lang) for lang in LANGS}


class IncognitoState(GameState, frozen=True):
    """The whole game; ``words``/``word_at`` are secret until the list is shown."""

    lang: str = "fr"
    countdown: int = DEFAULT_COUNTDOWN
    round: int = 0
    phase: str = DRAW
    #: Public place of each seat this round.
    places: tuple[str, ...] = ()
    #: The six words of this round in list order (number = index + 1): the
    #: players' words and the deck's fillers. Hidden during the drawing phase.
    words: tuple[str, ...] = ()
    #: Index in ``words`` of each seat's secret word.
    word_at: tuple[int, ...] = ()
    done: tuple[bool, ...] = ()
    #: ``votes[voter][drawer]``: the vote card number, or 0 for none.
    votes: tuple[tuple[int, ...], ...] = ()
    #: The seat whose missing votes the countdown filled at random, and where.
    late: int | None = None
    filled: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    #: Points of each seat for each finished round.
    history: tuple[tuple[int, ...], ...] = ()
    used_words: tuple[str, ...] = ()
    used_places: tuple[str, ...] = ()


class Done(Action, tag="done", frozen=True):
    """A player has finished drawing (the knob press)."""

    seat: int


class Vote(Action, tag="vote", frozen=True):
    """Lay vote card ``number`` on ``drawer``'s drawing.

    A card is in one place at a time: laying it elsewhere moves it, and a second
    card on the same drawing replaces the first (which goes back to the hand).
    """

    seat: int
    drawer: int
    number: int


class Timeout(Action, tag="timeout", frozen=True):
    """The running countdown reached zero (sent by the table binding)."""


class Next(Action, tag="next", frozen=True):
    """The host moves from a round's reveal to the next round."""


IncognitoAction = Done | Vote | Timeout | Next


INFO = GameInfo(
    id="incognito",
    name=N_("Incognito"),
    min_players=3,
    max_players=6,
    tie_break=N_("ties stay ties"),
    phases={
        DRAW: Phase(N_("Draw"), N_("Draw")),
        VOTE: Phase(N_("Vote"), N_("Vote")),
        REVEAL: Phase(N_("Reveal|phase"), N_("Results")),
        OVER: Phase(N_("Over"), N_("Over")),
    },
    options=(
        Option(
            "lang",
            "choice",
            "fr",
            N_("Words"),
            choices=LANGS,
            values={"fr": N_("French"), "en": N_("English")},
            menu=LANGS,
            table_language=True,
        ),
        Option(
            "countdown",
            "seconds",
            DEFAULT_COUNTDOWN,
            N_("Countdown"),
            lo=1,
            hi=MAX_COUNTDOWN,
            whole=True,
            menu=(5, 10, 20),
        ),
    ),
    # --- the table display between games
    summary=N_(
        "Each of you gets a secret word and a place everyone sees. Draw your word in "
        "silence, then vote: match every other drawing with one of the six words on the "
        "list. 1 point for each drawing you read right, 2 to a drawer found by some but "
        "not all. Three rounds."
    ),
)


class Incognito(BaseGame[IncognitoState]):
    """The Incognito engine."""

    info = INFO
    state_type = IncognitoState
    action_type = IncognitoAction

    # -- setup ---------------------------------------------------------------

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> IncognitoState:
        """A new game, first round dealt."""
        self.check_players(players)
        parsed = INFO.parse(options, players)
        lang, countdown = parsed["lang"], parsed["countdown"]
        state = IncognitoState(
            players=players,
            seed=seed,
            rng=Rng(seed),
            lang=lang,
            countdown=countdown,
            scores=(0,) * players,
        )
        return _start_round(state)

    # -- moves ---------------------------------------------------------------

    def legal_actions(self, state: IncognitoState, seat: int | None) -> list[Action]:
        """Every action ``seat`` may take now (``None``: the table's)."""
        if seat is None:
            if _countdown_running(state):
                return [Timeout()]
            return [Next()] if state.phase == REVEAL else []
        if not 0 <= seat < state.players:
            return []
        if state.phase == DRAW:
            return [] if state.done[seat] else [Done(seat)]
        if state.phase == VOTE:
            row = state.votes[seat]
            return [
                Vote(seat, drawer, number)
                for drawer in range(state.players)
                if drawer != seat
                for number in range(1, LIST_SIZE + 1)
                if row[drawer] != number
            ]
        return []

    def apply(self, state: IncognitoState, action: Action) -> tuple[IncognitoState, list[Event]]:
        """Validate then play one action; bumps ``version``."""
        if isinstance(action, Done):
            new, events = _done(state, action)
        elif isinstance(action, Vote):
            new, events = _vote(state, action)
        elif isinstance(action, Timeout):
            new, events = _timeout(state)
        elif isinstance(action, Next):
            if state.phase != REVEAL:
                raise IllegalAction("The round is not over")
            new, events = _start_round(state), [Event("round", {"round": state.round + 1})]
        else:
            raise IllegalAction("Not an Incognito action")
        return replace(new, version=state.version + 1), events

    # -- views ---------------------------------------------------------------

    def public_view(self, state: IncognitoState) -> JSON:
        """The table: places, the word list once drawn, who voted, scores, the reveal."""
        return _public(state)

    def seat_view(self, state: IncognitoState, seat: int, public: JSON) -> JSON:
        """What ``seat`` may know: its word and its votes, and ``public`` as its ``table``."""
        if not 0 <= seat < state.players:
            raise IllegalAction("No such seat")
        shown = state.phase != DRAW
        return {
            "seat": seat,
            "word": state.words[state.word_at[seat]],
            "number": state.word_at[seat] + 1 if shown else None,
            "votes": [n or None for n in state.votes[seat]],
            "table": public,
        }

    # -- end -----------------------------------------------------------------

    def is_over(self, state: IncognitoState) -> bool:
        """After the third round's votes are scored."""
        return state.phase == OVER

    def scores(self, state: IncognitoState) -> list[int]:
        """Points so far (the slate's score box)."""
        return list(state.scores)

    def ranking(self, state: IncognitoState) -> list[list[int]]:
        """Most points first; ties are shared."""
        return shared_ranking(state.scores)


# -- rules helpers -------------------------------------------------------------


def _check_seat(state: IncognitoState, seat: int) -> None:
    if not 0 <= seat < state.players:
        raise IllegalAction("No such seat")


def _complete(state: IncognitoState, voter: int) -> bool:
    """Whether ``voter`` has a card on every other drawing."""
    row = state.votes[voter]
    return all(row[d] != NO_VOTE for d in range(state.players) if d != voter)


def _countdown_running(state: IncognitoState) -> bool:
    """All but one have finished the current phase: the countdown runs."""
    if state.phase == DRAW:
        return sum(state.done) == state.players - 1
    if state.phase == VOTE:
        finished = sum(_complete(state, v) for v in range(state.players))
        return finished == state.players - 1
    return False


def _start_round(state: IncognitoState) -> IncognitoState:
    """Deal words and places for the next round from what the decks still hold."""
    n = state.players
    used_w, used_p = set(state.used_words), set(state.used_places)
    words, rng = state.rng.sample([w for w in WORDS[state.lang] if w not in used_w], LIST_SIZE)
    word_at, rng = rng.sample(range(LIST_SIZE), n)
    places, rng = rng.sample([p for p in PLACES[state.lang] if p not in used_p], n)
    return replace(
        state,
        rng=rng,
        round=state.round + 1,
        phase=DRAW,
        places=places,
        words=words,
        word_at=word_at,
        done=(False,) * n,
        votes=((NO_VOTE,) * n,) * n,
        late=None,
        filled=(),
        used_words=state.used_words + words,
        used_places=state.used_places + places,
    )


def _done(state: IncognitoState, action: Done) -> tuple[IncognitoState, list[Event]]:
    _check_seat(state, action.seat)
    if state.phase != DRAW:
        raise IllegalAction("Not drawing time")
    if state.done[action.seat]:
        raise IllegalAction("You are already done")
    done = tuple(d or s == action.seat for s, d in enumerate(state.done))
    new = replace(state, done=done)
    events = [Event("done", {"seat": action.seat})]
    if all(done):
        return _show_list(new, events)
    if _countdown_running(new):
        events.append(Event("countdown", {"phase": DRAW, "seconds": state.countdown}))
    return new, events


def _show_list(state: IncognitoState, events: list[Event]) -> tuple[IncognitoState, list[Event]]:
    """Drawings are turned over and the numbered list goes on the table."""
    new = replace(state, phase=VOTE, done=(True,) * state.players)
    events.append(Event("list", {"words": list(state.words)}))
    return new, events


def _vote(state: IncognitoState, action: Vote) -> tuple[IncognitoState, list[Event]]:
    seat, drawer, number = action.seat, action.drawer, action.number
    _check_seat(state, seat)
    if state.phase != VOTE:
        raise IllegalAction("Not voting time")
    if not 0 <= drawer < state.players:
        raise IllegalAction("No such drawing")
    if drawer == seat:
        raise IllegalAction("That's your own drawing")
    if not 1 <= number <= LIST_SIZE:
        raise IllegalAction("Vote cards go 1 to {n}", n=LIST_SIZE)
    row = list(state.votes[seat])
    if row[drawer] == number:
        raise IllegalAction("That card is already there")
    moved_from = row.index(number) if number in row else None
    replaced = row[drawer] or None
    if moved_from is not None:
        row[moved_from] = NO_VOTE
    row[drawer] = number
    votes = tuple(tuple(row) if v == seat else r for v, r in enumerate(state.votes))
    new = replace(state, votes=votes)
    was_running = _countdown_running(state)
    events = [
        Event("vote", {"seat": seat, "drawer": drawer, "moved_from": moved_from}),
        Event(
            "vote_card",
            {"seat": seat, "drawer": drawer, "number": number, "back_in_hand": replaced},
            to=(seat,),
        ),
    ]
    if all(_complete(new, v) for v in range(state.players)):
        return _reveal(new, events)
    running = _countdown_running(new)
    if running != was_running:
        data = {"phase": VOTE, "seconds": state.countdown}
        events.append(Event("countdown" if running else "countdown_stop", data))
    return new, events


def _timeout(state: IncognitoState) -> tuple[IncognitoState, list[Event]]:
    if not _countdown_running(state):
        raise IllegalAction("No countdown running")
    if state.phase == DRAW:
        late = state.done.index(False)
        return _show_list(state, [Event("stop", {"seat": late})])
    late = next(v for v in range(state.players) if not _complete(state, v))
    row = list(state.votes[late])
    missing = tuple(d for d in range(state.players) if d != late and row[d] == NO_VOTE)
    unused = [n for n in range(1, LIST_SIZE + 1) if n not in row]
    picks, rng = state.rng.sample(unused, len(missing))
    for drawer, number in zip(missing, picks, strict=True):
        row[drawer] = number
    votes = tuple(tuple(row) if v == late else r for v, r in enumerate(state.votes))
    new = replace(state, rng=rng, votes=votes, late=late, filled=missing)
    return _reveal(new, [Event("fill", {"seat": late, "drawers": list(missing)})])


def _round_points(state: IncognitoState) -> tuple[int, ...]:
    """+1 per finder; +2 to a drawer found by some but not all."""
    n = state.players
    points = [0] * n
    for drawer in range(n):
        right = state.word_at[drawer] + 1
        finders = [v for v in range(n) if v != drawer and state.votes[v][drawer] == right]
        for v in finders:
            points[v] += 1
        if 0 < len(finders) < n - 1:
            points[drawer] += 2
    return tuple(points)


def _reveal(state: IncognitoState, events: list[Event]) -> tuple[IncognitoState, list[Event]]:
    points = _round_points(state)
    scores = tuple(a + b for a, b in zip(state.scores, points, strict=True))
    phase = OVER if state.round >= ROUNDS else REVEAL
    new = replace(state, phase=phase, scores=scores, history=(*state.history, points))
    events.append(Event("reveal", _reveal_data(new)))
    if phase == OVER:
        events.append(Event("over", {"scores": list(scores), "ranking": shared_ranking(scores)}))
    return new, events


def _reveal_data(state: IncognitoState) -> JSON:
    n = state.players
    points = state.history[-1]
    drawings = []
    for drawer in range(n):
        right = state.word_at[drawer] + 1
        votes = [state.votes[v][drawer] or None for v in range(n)]
        drawings.append(
            {
                "drawer": drawer,
                "word": state.words[state.word_at[drawer]],
                "number": right,
                "votes": votes,
                "finders": [v for v in range(n) if v != drawer and votes[v] == right],
            }
        )
    return {
        "round": state.round,
        "drawings": drawings,
        "points": list(points),
        "late": state.late,
        "filled": list(state.filled),
    }


def _public(state: IncognitoState) -> JSON:
    n = state.players
    shown = state.phase != DRAW
    revealed = state.phase in (REVEAL, OVER)
    return {
        "game": "incognito",
        "phase": state.phase,
        "round": state.round,
        "rounds": ROUNDS,
        "lang": state.lang,
        "players": n,
        "places": list(state.places),
        "countdown": {"seconds": state.countdown, "running": _countdown_running(state)},
        "done": list(state.done),
        "list": list(state.words) if shown else [],
        "voted": [[d for d in range(n) if state.votes[v][d] != NO_VOTE] for v in range(n)],
        "scores": list(state.scores),
        "history": [list(points) for points in state.history],
        "reveal": _reveal_data(state) if revealed else None,
        "over": state.phase == OVER,
        "ranking": shared_ranking(state.scores) if state.phase == OVER else None,
    }


GAME = Incognito()
