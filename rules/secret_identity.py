"""Secret Identity: make the others guess the character your mystery key points at.

Two modes share one state shape. Competitive (4 rounds): every seat locks a
mystery key and places pictos, everyone votes with numbered keys in every
opponent's safe, then the safes open one by one in seat order and score.
Co-op (10 turns): one active player at a time, the others agree on one answer.

The JSON notation, options and view keys are in ``rules/docs/secret-identity.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec
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
from rules.declare import N_, Band, GameInfo, Option, Phase

_KEYS = 8  # mystery and vote keys are numbered 1.._KEYS (8 character slots)
_ROUNDS = 4
_TURNS = 10
_HAND = 10
_TRACK = 30  # the score track wraps at 30; each lap is a "30" marker
_MAX_PICTOS = 3
_COOP_HAND = {3: 10, 4: 10, 5: 8, 6: 8, 7: 6, 8: 6}

COMPETITIVE = "competitive"
COOP = "coop"
KEYS = "keys"
DEALT = "dealt"

PREPARE = "prepare"
VOTE = "vote"
REVEAL = "reveal"
ANSWER = "answer"
OVER = "over"

INFO = GameInfo(
    id="secret-identity",
    name=N_("Secret Identity"),
    min_players=3,
    max_players=8,
    tie_break=N_("ties broken by most picto cards left"),
    phases={
        PREPARE: Phase(N_("Prepare|phase"), N_("Prepare")),
        VOTE: Phase(N_("Vote"), N_("Vote")),
        REVEAL: Phase(N_("Reveal|phase"), N_("Reveal")),
        ANSWER: Phase(N_("Answer"), N_("Answer")),
        OVER: Phase(N_("Over"), N_("Over")),
    },
    options=(
        Option(
            "mode",
            "choice",
            COMPETITIVE,
            N_("Mode"),
            choices=(COMPETITIVE, COOP),
            values={COMPETITIVE: N_("competitive"), COOP: N_("co-op")},
            menu=(COMPETITIVE, COOP),
        ),
        Option(
            "mystery",
            "choice",
            KEYS,
            N_("Secret no."),
            choices=(KEYS, DEALT),
            values={KEYS: N_("by key"), DEALT: N_("dealt|mystery")},
            menu=(KEYS, DEALT),
        ),
    ),
    #: Co-op result bands: right answers, in our own words (rules/docs/secret-identity.md).
    bands=(
        Band(
            0,
            2,
            N_("Locked out: the safes kept their secrets."),
            N_("Locked out: the safes kept their secrets"),
        ),
        Band(
            3,
            5,
            N_("Warming up: a few safes cracked open."),
            N_("Warming up: a few safes cracked"),
        ),
        Band(6, 8, N_("Fine crew: most safes gave way."), N_("Fine crew: most safes gave way")),
        Band(9, 10, N_("Master safecrackers: nothing hides from you."), N_("Master safecrackers!")),
    ),
    # --- the table display between games
    summary=N_(
        "Each round you lock a secret number in your safe and lay up to 3 picto cards as "
        "clues. Then everyone puts a key in each other's safe, guessing its number. Each "
        "safe opened scores a point to its owner and to every right guess. Four rounds; "
        "co-op: the team guesses together over ten turns."
    ),
)
#: Co-op result bands: (lowest, highest right answers, the wording).
BANDS: tuple[tuple[int, int, str], ...] = tuple((b.lo, b.hi, b.text) for b in INFO.bands)


# --- actions ---------------------------------------------------------------


class Mystery(Action, tag="mystery", frozen=True):
    """Seat locks its mystery key ``number`` in its own safe (``mystery: keys``)."""

    seat: int
    number: int


class Pictos(Action, tag="pictos", frozen=True):
    """Seat confirms how many picto cards it placed: its "ready"."""

    seat: int
    count: int


class Vote(Action, tag="vote", frozen=True):
    """Seat puts its vote key ``number`` in the safe of seat ``safe``."""

    seat: int
    safe: int
    number: int


class Answer(Action, tag="answer", frozen=True):
    """Co-op: a guesser taps the team's answer key on the active station."""

    seat: int
    number: int


class Open(Action, tag="open", frozen=True):
    """Co-op: the active player opens their safe."""

    seat: int


class Advance(Action, tag="advance", frozen=True):
    """The host's "next" or the table's timer."""


SecretIdentityAction = Mystery | Pictos | Vote | Answer | Open | Advance


# --- state -----------------------------------------------------------------


class RoundRecord(msgspec.Struct, frozen=True):
    """A finished competitive round, every safe opened."""

    round: int
    mystery: tuple[int, ...]
    votes: tuple[tuple[int, ...], ...]
    placed: tuple[int, ...]


class TurnRecord(msgspec.Struct, frozen=True):
    """A finished co-op turn."""

    turn: int
    active: int
    mystery: int
    answer: int
    placed: int


class SecretIdentityState(GameState, frozen=True):
    """The whole game. Numbers are 1..8; 0 means "no key"."""

    mode: str = COMPETITIVE
    mystery_mode: str = KEYS
    #: Competitive: round 1..4. Co-op: turn 1..10.
    round: int = 1
    phase: str = PREPARE
    #: Per seat: the mystery number locked in its safe (co-op: only the active seat's).
    mystery: tuple[int, ...] = ()
    #: Per seat: pictos confirmed this round, and how many.
    ready: tuple[bool, ...] = ()
    placed: tuple[int, ...] = ()
    #: Per seat: picto cards still in hand (placed cards lie on the safe).
    hand: tuple[int, ...] = ()
    #: Competitive: votes[voter][safe] = vote key number, 0 = none.
    votes: tuple[tuple[int, ...], ...] = ()
    #: Competitive reveal: safes of seats < opened are open.
    opened: int = 0
    #: Per seat; in co-op every seat holds the team score.
    scores: tuple[int, ...] = ()
    #: Co-op: the active seat, the team's answer and who tapped it (-1 = nobody).
    active: int = -1
    answer: int = 0
    answered_by: int = -1
    rounds_done: tuple[RoundRecord, ...] = ()
    turns_done: tuple[TurnRecord, ...] = ()


State = SecretIdentityState


# --- the game --------------------------------------------------------------


class SecretIdentity(BaseGame[SecretIdentityState]):
    """The Secret Identity engine (competitive and co-op)."""

    info = INFO

    def __init__(self) -> None:
        self.state_type = SecretIdentityState
        self.action_type = SecretIdentityAction
        self._handlers: dict[type[Action], Callable[[State, Any], tuple[State, list[Event]]]] = {
            Mystery: self._mystery,
            Pictos: self._pictos,
            Vote: self._vote,
            Answer: self._answer,
            Open: self._open,
            Advance: self._advance,
        }

    # setup ------------------------------------------------------------------

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> State:
        """A new game in its first round (or turn), keys dealt if ``mystery: dealt``."""
        self.check_players(players)
        parsed = INFO.parse(options, players)
        mode, mystery_mode = parsed["mode"], parsed["mystery"]
        hand = _COOP_HAND[players] if mode == COOP else _HAND
        state = State(
            players=players,
            seed=seed,
            rng=Rng(seed),
            mode=mode,
            mystery_mode=mystery_mode,
            hand=(hand,) * players,
            scores=(0,) * players,
        )
        if mode == COOP:
            state, _ = _start_turn(state, 1, 0)
        else:
            state, _ = _start_round(state, 1)
        return state

    # apply ------------------------------------------------------------------

    def apply(self, state: State, action: Action) -> tuple[State, list[Event]]:
        """Validate then apply one action; bumps ``version`` by one."""
        if state.phase == OVER:
            raise IllegalAction("The game is over")
        handler = self._handlers.get(type(action))
        if handler is None:
            raise IllegalAction("Not a Secret Identity action")
        new, events = handler(state, action)
        return replace(new, version=state.version + 1), events

    def _mystery(self, st: State, a: Mystery) -> tuple[State, list[Event]]:
        s = _seat(st, a.seat)
        if st.mode == COOP and s != st.active:
            raise IllegalAction("Not your turn")
        if st.phase != PREPARE:
            raise IllegalAction("Mystery keys go in before the vote")
        if st.mystery_mode == DEALT:
            raise IllegalAction("Numbers are dealt")
        _number(a.number)
        if st.mystery[s]:
            raise IllegalAction("Your mystery key is locked")
        if a.number in st.mystery:
            raise IllegalAction("That key is in another safe")
        st = replace(st, mystery=_set(st.mystery, s, a.number))
        events = [
            Event("mystery_locked", {"seat": s}),
            Event("my_mystery", {"seat": s, "number": a.number}, to=(s,)),
        ]
        return _maybe_close_prepare(st, events)

    def _pictos(self, st: State, a: Pictos) -> tuple[State, list[Event]]:
        s = _seat(st, a.seat)
        if st.mode == COOP and s != st.active:
            raise IllegalAction("Not your turn")
        if st.phase != PREPARE:
            raise IllegalAction("Pictos go in before the vote")
        if st.ready[s]:
            raise IllegalAction("Pictos already confirmed")
        lo, hi = _picto_range(st.hand[s])
        if not lo <= a.count <= hi:
            if hi == 0:
                raise IllegalAction("No picto left: confirm 0")
            if hi == 1:
                raise IllegalAction("Place 1 picto")
            raise IllegalAction("Place 1 to {n} pictos", n=hi)
        st = replace(
            st,
            ready=_set(st.ready, s, True),
            placed=_set(st.placed, s, a.count),
            hand=_set(st.hand, s, st.hand[s] - a.count),
        )
        events = [Event("pictos_placed", {"seat": s, "count": a.count})]
        return _maybe_close_prepare(st, events)

    def _vote(self, st: State, a: Vote) -> tuple[State, list[Event]]:
        if st.mode == COOP:
            raise IllegalAction("In co-op, send one answer")
        s = _seat(st, a.seat)
        if not 0 <= a.safe < st.players:
            raise IllegalAction("No such safe")
        if st.phase != VOTE:
            if st.phase == PREPARE:
                raise IllegalAction("Voting has not started")
            raise IllegalAction("Voting is closed")
        t = a.safe
        if t == s:
            raise IllegalAction("That's your own safe")
        n = _number(a.number)
        row = st.votes[s]
        if row[t] == n:
            raise IllegalAction("That key is already there")
        moved_from = row.index(n) if n in row else -1
        returned = row[t]
        new_row = list(row)
        if moved_from >= 0:
            new_row[moved_from] = 0
        new_row[t] = n
        st = replace(st, votes=_set(st.votes, s, tuple(new_row)))
        src = moved_from if moved_from >= 0 else None
        events = [
            Event("vote", {"voter": s, "safe": t, "from": src, "replaced": returned != 0}),
            Event(
                "my_vote",
                {"safe": t, "number": n, "from": src, "returned": returned or None},
                to=(s,),
            ),
        ]
        need = st.players - 1
        if all(sum(1 for x in r if x) == need for r in st.votes):
            st = replace(st, phase=REVEAL, opened=0)
            events.append(Event("phase", {"phase": REVEAL, "missing": 0}))
        return st, events

    def _answer(self, st: State, a: Answer) -> tuple[State, list[Event]]:
        if st.mode != COOP:
            raise IllegalAction("Answers are for co-op")
        s = _seat(st, a.seat)
        if st.phase != ANSWER:
            raise IllegalAction("Wait for the pictos")
        if s == st.active:
            raise IllegalAction("You can't answer your own safe")
        n = _number(a.number)
        if st.answer == n:
            raise IllegalAction("That key is already there")
        st = replace(st, answer=n, answered_by=s)
        guessers = tuple(i for i in range(st.players) if i != st.active)
        events = [
            Event("answered", {"seat": s}),
            Event("team_answer", {"seat": s, "number": n}, to=guessers),
        ]
        return st, events

    def _open(self, st: State, a: Open) -> tuple[State, list[Event]]:
        if st.mode != COOP:
            raise IllegalAction("Safes open on the host's next")
        s = _seat(st, a.seat)
        if s != st.active:
            raise IllegalAction("Only the active player opens")
        if st.phase != ANSWER:
            raise IllegalAction("Wait for the pictos")
        if not st.answer:
            raise IllegalAction("No answer yet")
        return _coop_open(st)

    def _advance(self, st: State, a: Advance) -> tuple[State, list[Event]]:
        if st.phase == PREPARE:
            raise IllegalAction("Not everyone is ready")
        if st.phase == ANSWER:
            return _coop_open(st)
        if st.phase == VOTE:
            need = st.players - 1
            missing = sum(need - sum(1 for x in r if x) for r in st.votes)
            st = replace(st, phase=REVEAL, opened=0)
            return st, [Event("phase", {"phase": REVEAL, "missing": missing})]
        if st.opened < st.players:
            return _open_safe(st)
        return _end_round(st)

    # queries ----------------------------------------------------------------

    def legal_actions(self, state: State, seat: int | None) -> list[Action]:
        """Every action ``seat`` may take now (``None``: the table's ``advance``)."""
        st = state
        if st.phase == OVER:
            return []
        if seat is None:
            return [] if st.phase == PREPARE else [Advance()]
        if not 0 <= seat < st.players:
            return []
        out: list[Action] = []
        if st.phase == PREPARE:
            if st.mode == COOP and seat != st.active:
                return out
            if st.mystery_mode == KEYS and not st.mystery[seat]:
                taken = set(st.mystery)
                out += [Mystery(seat, n) for n in range(1, _KEYS + 1) if n not in taken]
            if not st.ready[seat]:
                lo, hi = _picto_range(st.hand[seat])
                out += [Pictos(seat, c) for c in range(lo, hi + 1)]
        elif st.phase == VOTE:
            row = st.votes[seat]
            out += [
                Vote(seat, t, n)
                for t in range(st.players)
                if t != seat
                for n in range(1, _KEYS + 1)
                if row[t] != n
            ]
        elif st.phase == ANSWER:
            if seat == st.active:
                if st.answer:
                    out.append(Open(seat))
            else:
                out += [Answer(seat, n) for n in range(1, _KEYS + 1) if n != st.answer]
        return out

    def is_over(self, state: State) -> bool:
        """Whether the game has ended."""
        return state.phase == OVER

    def scores(self, state: State) -> list[int]:
        """Points per seat (co-op: the team's right answers, for every seat)."""
        return list(state.scores)

    def ranking(self, state: State) -> list[list[int]]:
        """Best first; ties broken by picto cards left, then shared. Co-op: one group."""
        if state.mode == COOP:
            return [list(range(state.players))]
        return shared_ranking(state.scores, state.hand)

    def context(self, public: JSON) -> JSON:
        """The shared keys; co-op: the active player is the one the table waits for."""
        return {**super().context(public), "to_play": public.get("active")}

    def result(self, state: State) -> JSON | None:
        """Co-op, game over: the band of right answers and its wording."""
        if state.mode != COOP or state.phase != OVER:
            return None
        right = state.scores[0]
        for lo, hi, text in BANDS:
            if lo <= right <= hi:
                return {"right": right, "band": [lo, hi], "text": text}
        raise AssertionError(f"no band for {right}")  # pragma: no cover

    def seat_view(self, state: State, seat: int, public: JSON) -> JSON:
        """What ``seat`` may know: its own secrets, and ``public`` as its ``table``."""
        st = state
        if not 0 <= seat < st.players:
            raise ValueError(f"no seat {seat}")
        mine = st.mystery[seat] if st.mystery else 0
        my_votes: list[JSON] = []
        free = list(range(1, _KEYS + 1))
        if st.mode == COMPETITIVE:
            row = st.votes[seat]
            my_votes = [{"safe": t, "number": n} for t, n in enumerate(row) if n]
            free = [n for n in free if n not in row]
        answer = None
        if st.mode == COOP and seat != st.active and st.answer:
            answer = st.answer
        return {
            "seat": seat,
            "my_mystery": mine or None,
            "my_votes": my_votes,
            "free_keys": free,
            "pictos_left": st.hand[seat],
            "pictos_placed": st.placed[seat],
            "ready": st.ready[seat],
            "active": st.mode == COOP and seat == st.active,
            "answer": answer,
            "table": public,
        }

    def public_view(self, state: State) -> JSON:
        """The table: each seat's score, pictos and votes cast, the opened safes."""
        st = state
        n = st.players
        coop = st.mode == COOP
        seats: list[JSON] = []
        for i in range(n):
            score = st.scores[i]
            entry: JSON = {
                "seat": i,
                "score": score,
                "position": score % _TRACK,
                "markers": score // _TRACK,
                "pictos_placed": st.placed[i],
                "pictos_left": st.hand[i],
                "ready": st.ready[i],
                "mystery_locked": bool(st.mystery[i]),
            }
            if coop:
                entry["voters"] = []
                entry["votes_in"] = 0
                entry["votes_cast"] = 0
            else:
                voters = [v for v in range(n) if st.votes[v][i]]
                entry["voters"] = voters
                entry["votes_in"] = len(voters)
                entry["votes_cast"] = sum(1 for x in st.votes[i] if x)
            seats.append(entry)
        over = st.phase == OVER
        out: JSON = {
            "game": self.id,
            "mode": st.mode,
            "mystery": st.mystery_mode,
            "round": st.round,
            "rounds": _TURNS if coop else _ROUNDS,
            "phase": st.phase,
            "version": st.version,
            "active": st.active if coop and not over else None,
            "seats": seats,
        }
        if coop:
            team = st.scores[0]
            out["team"] = {"score": team, "position": team % _TRACK, "markers": team // _TRACK}
            out["answered"] = bool(st.answer)
            out["answered_by"] = st.answered_by if st.answer else None
            out["revealed"] = []
            out["next_safe"] = None
            out["history"] = [_turn_json(t) for t in st.turns_done]
        else:
            out["team"] = None
            out["answered"] = False
            out["answered_by"] = None
            out["revealed"] = [_safe_json(st.mystery, st.votes, o) for o in range(st.opened)]
            out["next_safe"] = st.opened if st.phase == REVEAL and st.opened < n else None
            out["history"] = [
                {
                    "round": r.round,
                    "safes": [_safe_json(r.mystery, r.votes, o) for o in range(n)],
                    "pictos": list(r.placed),
                }
                for r in st.rounds_done
            ]
        out["is_over"] = over
        out["ranking"] = self.ranking(st) if over else None
        out["result"] = self.result(st)
        return out


# --- helpers ---------------------------------------------------------------


def _seat(st: State, seat: int) -> int:
    if not 0 <= seat < st.players:
        raise IllegalAction("No such seat")
    return seat


def _number(n: int) -> int:
    if not 1 <= n <= _KEYS:
        raise IllegalAction("Keys are 1 to {n}", n=_KEYS)
    return n


def _picto_range(left: int) -> tuple[int, int]:
    """Pictos a seat may confirm: 1..min(3, left); 0 only when its hand is empty."""
    hi = min(_MAX_PICTOS, left)
    return (1 if hi else 0), hi


def _set(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


def _maybe_close_prepare(st: State, events: list[Event]) -> tuple[State, list[Event]]:
    """Leave "prepare" once every seat that must has locked a key and confirmed pictos."""
    if st.mode == COOP:
        if st.mystery[st.active] and st.ready[st.active]:
            st = replace(st, phase=ANSWER)
            events.append(Event("phase", {"phase": ANSWER}))
    elif all(st.mystery) and all(st.ready):
        st = replace(st, phase=VOTE)
        events.append(Event("phase", {"phase": VOTE}))
    return st, events


def _start_round(st: State, number: int) -> tuple[State, list[Event]]:
    n = st.players
    st = replace(
        st,
        round=number,
        phase=PREPARE,
        mystery=(0,) * n,
        ready=(False,) * n,
        placed=(0,) * n,
        votes=((0,) * n,) * n,
        opened=0,
    )
    events = [Event("round_started", {"round": number})]
    if st.mystery_mode == DEALT:
        numbers, rng = st.rng.sample(range(1, _KEYS + 1), n)
        st = replace(st, mystery=numbers, rng=rng)
        events += [
            Event("my_mystery", {"seat": s, "number": numbers[s]}, to=(s,)) for s in range(n)
        ]
    return st, events


def _start_turn(st: State, number: int, active: int) -> tuple[State, list[Event]]:
    n = st.players
    st = replace(
        st,
        round=number,
        phase=PREPARE,
        active=active,
        mystery=(0,) * n,
        ready=(False,) * n,
        placed=(0,) * n,
        answer=0,
        answered_by=-1,
    )
    events = [Event("turn_started", {"turn": number, "active": active})]
    if st.mystery_mode == DEALT:
        i, rng = st.rng.randrange(_KEYS)
        st = replace(st, mystery=_set(st.mystery, active, i + 1), rng=rng)
        events.append(Event("my_mystery", {"seat": active, "number": i + 1}, to=(active,)))
    return st, events


Votes = tuple[tuple[int, ...], ...]


def _right_guessers(mystery: tuple[int, ...], votes: Votes, o: int) -> list[int]:
    m = mystery[o]
    return [v for v in range(len(mystery)) if v != o and m and votes[v][o] == m]


def _safe_json(mystery: tuple[int, ...], votes: Votes, o: int) -> JSON:
    """An opened safe: its mystery number, every vote in it, the points it gave."""
    right = _right_guessers(mystery, votes, o)
    return {
        "safe": o,
        "mystery": mystery[o],
        "votes": [
            {"voter": v, "number": votes[v][o], "right": v in right}
            for v in range(len(mystery))
            if votes[v][o]
        ],
        "right": right,
        "points": len(right),
    }


def _turn_json(t: TurnRecord) -> JSON:
    return {
        "turn": t.turn,
        "active": t.active,
        "mystery": t.mystery,
        "answer": t.answer or None,
        "right": t.answer == t.mystery,
        "pictos": t.placed,
    }


def _open_safe(st: State) -> tuple[State, list[Event]]:
    """Open the next safe in seat order and score it at once."""
    o = st.opened
    right = _right_guessers(st.mystery, st.votes, o)
    scores = list(st.scores)
    scores[o] += len(right)
    for v in right:
        scores[v] += 1
    st = replace(st, scores=tuple(scores), opened=o + 1)
    data = _safe_json(st.mystery, st.votes, o)
    data["scores"] = scores
    return st, [Event("safe_opened", data)]


def _end_round(st: State) -> tuple[State, list[Event]]:
    record = RoundRecord(st.round, st.mystery, st.votes, st.placed)
    st = replace(st, rounds_done=(*st.rounds_done, record))
    events = [Event("round_over", {"round": st.round, "scores": list(st.scores)})]
    if st.round >= _ROUNDS:
        st = replace(st, phase=OVER)
        events.append(Event("game_over", {"ranking": GAME.ranking(st)}))
        return st, events
    st, more = _start_round(st, st.round + 1)
    return st, events + more


def _coop_open(st: State) -> tuple[State, list[Event]]:
    """Open the active safe: a right answer is +1 for the team; then the next turn."""
    a = st.active
    right = st.answer == st.mystery[a]
    scores = tuple(x + 1 for x in st.scores) if right else st.scores
    record = TurnRecord(st.round, a, st.mystery[a], st.answer, st.placed[a])
    st = replace(st, scores=scores, turns_done=(*st.turns_done, record))
    events = [Event("safe_opened", {**_turn_json(record), "team_score": scores[0]})]
    nxt = _next_active(st)
    if st.round >= _TURNS or nxt < 0:
        n = st.players
        # Nothing of the last turn stays on the table: it lives on in turns_done.
        st = replace(
            st,
            phase=OVER,
            mystery=(0,) * n,
            ready=(False,) * n,
            placed=(0,) * n,
            answer=0,
            answered_by=-1,
        )
        reason = "turns" if st.round >= _TURNS else "no pictos left"
        events.append(Event("game_over", {"result": GAME.result(st), "reason": reason}))
        return st, events
    st, more = _start_turn(st, st.round + 1, nxt)
    return st, events + more


def _next_active(st: State) -> int:
    """The next seat after the active one that still has a picto card, or -1."""
    n = st.players
    for k in range(1, n + 1):
        s = (st.active + k) % n
        if st.hand[s]:
            return s
    return -1


GAME = SecretIdentity()
