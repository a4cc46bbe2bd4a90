"""The Live session's state, in one Qt-free object that the widgets, the stage, the presenter, the deck and the
kiosk read and change (in the spirit of napari's evented models: a field change emits an event; views subscribe
and never hold the truth).

``SessionState`` owns:

* ``batch``: seats sharing each trip of the weights (1-16, the "sharing a table" slider);
* ``draft_k`` and ``draft_kind``: the apprentice (speculative decoding): guesses per trip (0 = off, 0-8) and
  which apprentice guesses ("ngram": copied from the request's own text, "model": a draft model);
* ``sharding``: ``(mode, n)``, the sharding in force as the engine last confirmed it (mode "tp" = tensor
  parallel, by pages, or "pp" = pipeline parallel, by chapters; n worker processes, 1 = one desk);
* ``sampling``: a ``Sampling`` (temperature, top-p, the seed of the answer being written, greedy or not);
* ``model_key``: which weights write ("code", "poems", or "custom" for a ``--model DIR``);
* ``weights``: their kind, "fp32" or "int8" (the thinner book: the engine restarts with int8 weights);
* ``run_state``: the visitor's answer: "idle" (none), "running" (trips granted), "paused" (in progress, no trips
  granted), "complete" (its last token came);
* ``trip_seconds``: how long one trip takes on screen (s, 0.25-3; the animation's clock, not the engine's);
* ``real_time``: real-time mode: the engine runs its trips back to back and the stage shows them at their measured
  pace (False: paced, one trip granted per trip on screen); the "Real time" checkbox shows it;
* ``engine_status``: the engine's: "stopped" (none started), "loading" (started, not ready yet), "ready",
  "failed" (no model could be loaded; ``engine_error`` says why) or "restarting" (it died, a new one is waited for);
* ``engine_error``: why no model could be loaded (the engine's ``fatal`` message) while "failed", else None;
* ``apprentice_available``: whether the ready engine has an apprentice (a draft model or the n-gram one);
* ``apprentice_offer``: what the last ready engine offers of the apprentice, an ``ApprenticeOffer`` (the kinds it
  has, why it has no draft model), or None before any engine was ready;
* ``sharding_offer``: the degrees the last ready engine may be sharded into, a ``ShardingOffer`` (tensor parallel:
  the worker counts it allows; pipeline parallel: at most how many), or None before any engine was ready;
* ``worker_layers``: the layers of each worker of the sharding in force, ``((first, end), ...)`` (end
  exclusive), as the engine reported them (pipeline parallel); () when it reported none;
* ``sharding_asked``: ``(mode, n)``, the sharding asked of the engine that it has not answered yet, or None;
* ``prompt``: the prompt to run (at most ``MAX_PROMPT_CHARS`` characters);
* ``answer_number``: 1 for the first answer started, +1 for each next one (request ids and seeds use it);
* ``trips``: the last ``history`` step reports (plain dicts from the engine, oldest first);
* ``engine_info``: the ready engine's ``ready`` event (model, device, KV cache, sharding, apprentice), or None
  while no engine is ready;
* ``answer``: the visitor's answer in progress, an ``Answer`` (its prompt and request id, whether it is done,
  the requests submitted and not finished, the tokens written so far, the phrase it looped on);
* ``run_wanted``: Run was pressed (or a run was going) while no engine was ready: it runs once one is;
* ``trip_count``: trips counted since the last Reset (the plots' x axis; a new answer goes on counting);
* ``reports_received``: step reports received from the engine since the window opened (any answer's).

Every change goes through a setter that validates (``ValueError`` with a one-line reason, nothing changed) and,
when the value really changes, calls each subscriber with a ``Change(field, value, old)``. No Qt here: a Qt
view subscribes with ``subscribe(callback, field)`` and re-renders from the event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

MAX_BATCH = 16  # seats at the table
MAX_DRAFT_K = 8  # the apprentice's guesses per trip
DRAFT_KINDS = ("ngram", "model")
SHARDING_MODES = ("tp", "pp")
MAX_SHARDS = 4  # worker processes the book may be torn into (= model.parallel.plan.MAX_WORKERS, not imported: torch)
SHARD_DEGREES = (1, 2, 4)  # the worker counts the page offers, where the engine allows them
RUN_STATES = ("idle", "running", "paused", "complete")
ENGINE_STATES = ("stopped", "loading", "ready", "failed", "restarting")
WEIGHTS = ("default", "fp32", "fp16", "int8")  # "default": the machine's measured choice (fp16 or fp32)
MAX_PROMPT_CHARS = 2000
HISTORY = 64  # step reports kept: enough for the plots' last screens, bounded for a kiosk that runs for days

TRIP_SECONDS_RANGE = (0.25, 3.0)  # s on screen per trip

FIELDS = ("batch", "draft_k", "draft_kind", "sharding", "sampling", "model_key", "weights", "run_state",
          "trip_seconds", "real_time", "engine_status", "engine_error", "apprentice_available", "prompt",
          "answer_number", "trips", "engine_info", "answer", "run_wanted", "trip_count", "reports_received",
          "apprentice_offer", "sharding_offer", "worker_layers", "sharding_asked")


@dataclass(frozen=True)
class Sampling:
    """How a token is drawn. ``temperature`` >= 0 and ``top_p`` in (0, 1] are the model's own (``model.catalog``);
    ``greedy``: always the most likely token (temperature and seed then unused); ``seed``: the seed of the
    answer being written (None before one is started, or when greedy)."""

    temperature: float = 0.8
    top_p: float = 0.95
    seed: int | None = None
    greedy: bool = False

    def __post_init__(self):
        if not (isinstance(self.temperature, (int, float)) and self.temperature >= 0):
            raise ValueError(f"temperature must be a number >= 0, not {self.temperature!r}")
        if not (isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1):
            raise ValueError(f"top_p must be in (0, 1], not {self.top_p!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"seed must be an int or None, not {self.seed!r}")

    def request(self, seed: int) -> dict:
        """Keyword arguments of ``EngineBridge.submit`` for a request drawn with ``seed``: temperature, top_p,
        seed (greedy: temperature 0, top-p 1, no seed)."""
        if self.greedy:
            return {"temperature": 0.0, "top_p": 1.0, "seed": None}
        return {"temperature": float(self.temperature), "top_p": float(self.top_p), "seed": int(seed)}


@dataclass(frozen=True)
class Answer:
    """The visitor's answer in progress, as the Live page has written it so far.

    ``prompt``: the prompt it answers ("" when none is in progress); ``main_request``: its request id
    (``"s<n>-main"``, None when none); ``done``: True when no answer is in progress or its last token came (or it
    was stopped for looping), though its last trips may still be on the stage; ``active``: request ids of this
    answer (the visitor's and the other seats', ``"s<n>-seat<m>"``) submitted to the engine and not finished;
    ``text``: the visitor's tokens written on screen so far (two copies of a loop at most); ``token_ids``: their
    token ids, one per token written; ``loop_phrase``: the phrase it was stopped for repeating, or None.
    """

    prompt: str = ""
    main_request: str | None = None
    done: bool = True
    active: frozenset[str] = frozenset()
    text: str = ""
    token_ids: tuple[int, ...] = ()
    loop_phrase: str | None = None

    def __post_init__(self):
        for name, kind in (("prompt", str), ("done", bool), ("active", frozenset), ("text", str),
                           ("token_ids", tuple)):
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"answer {name} must be {kind.__name__}, not {getattr(self, name)!r}")
        for name in ("main_request", "loop_phrase"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"answer {name} must be text or None, not {getattr(self, name)!r}")

    def in_answer(self, request_id: str) -> bool:
        """True if ``request_id`` belongs to this answer (its requests are ``s<n>-...``, ``n`` from its id)."""
        return self.main_request is not None and request_id.startswith(self.main_request.split("-")[0] + "-")


@dataclass(frozen=True)
class ApprenticeOffer:
    """What a ready engine offers of the apprentice (its ``ready`` event).

    ``kinds``: the apprentices it has, a non-empty tuple of ``DRAFT_KINDS`` ("ngram": guesses copied from the
    request's own text; "model": a draft model), in that order; ``draft_error``: why it has no usable draft model,
    in the engine's words (a non-empty text), or None. Raises ``ValueError`` for other values.
    """

    kinds: tuple[str, ...] = ("ngram",)
    draft_error: str | None = None

    def __post_init__(self):
        if not isinstance(self.kinds, tuple) or self.kinds != tuple(k for k in DRAFT_KINDS if k in self.kinds) \
                or not self.kinds:
            raise ValueError(f"apprentice kinds must be a tuple of {', '.join(DRAFT_KINDS)} in that order, "
                             f"not {self.kinds!r}")
        if self.draft_error is not None and not (isinstance(self.draft_error, str) and self.draft_error):
            raise ValueError(f"a draft model's error is a non-empty text or None, not {self.draft_error!r}")


@dataclass(frozen=True)
class ShardingOffer:
    """The degrees a ready engine may be sharded into (its ``ready`` event's ``sharding``).

    ``degrees_tp``: the worker counts it allows for tensor parallel (each divides the attention heads), a
    non-empty tuple of whole numbers >= 1; ``max_pp``: at most this many workers for pipeline parallel (a whole
    number >= 1: one layer a worker at least). Raises ``ValueError`` for other values.
    """

    degrees_tp: tuple[int, ...] = (1,)
    max_pp: int = 1

    def __post_init__(self):
        if not isinstance(self.degrees_tp, tuple) or not self.degrees_tp or any(
                isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in self.degrees_tp):
            raise ValueError(f"tensor-parallel degrees must be a tuple of whole numbers >= 1, not {self.degrees_tp!r}")
        if isinstance(self.max_pp, bool) or not isinstance(self.max_pp, int) or self.max_pp < 1:
            raise ValueError(f"the pipeline-parallel maximum must be a whole number >= 1, not {self.max_pp!r}")

    def degrees(self, mode: str) -> tuple[int, ...]:
        """The worker counts of ``SHARD_DEGREES`` the engine allows by ``mode`` ("tp" or "pp"), fewest first
        ((1,) where it allows none of them)."""
        if mode == "tp":
            return tuple(d for d in SHARD_DEGREES if d in self.degrees_tp) or (1,)
        return tuple(d for d in SHARD_DEGREES if d <= self.max_pp)

    def fit(self, mode: str, n: int) -> int:
        """The most workers of ``degrees(mode)`` that are at most ``n`` (the fewest offered where none is)."""
        options = self.degrees(mode)
        return max((d for d in options if d <= n), default=options[0])


@dataclass(frozen=True)
class Change:
    """One field's change: ``field`` (one of ``FIELDS``), its new ``value`` and the ``old`` one."""

    field: str
    value: Any
    old: Any


Callback = Callable[[Change], None]


def _layers(layers) -> tuple[tuple[int, int], ...]:
    """``layers`` as a tuple of ``(first, end)`` whole-number pairs with 0 <= first < end; else ``ValueError``."""
    try:
        pairs = tuple((first, end) for first, end in layers)
    except (TypeError, ValueError):
        raise ValueError(f"worker layers are (first, end) pairs, not {layers!r}") from None
    for first, end in pairs:
        if any(isinstance(x, bool) or not isinstance(x, int) for x in (first, end)) or not 0 <= first < end:
            raise ValueError(f"a worker's layers are whole numbers 0 <= first < end, not {(first, end)!r}")
    return pairs


def _int_in(name: str, value, lo: int, hi: int) -> int:
    """``value`` if it is a whole number (an ``int``, not a bool) in [lo, hi]; else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number {lo}-{hi}, not {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be {lo}-{hi}, not {value}")
    return value


class SessionState:
    """The Live session's state (see the module docstring). Args: ``batch``, ``model_key``, ``sampling`` (a
    ``Sampling``), ``history`` (step reports kept, >= 1)."""

    def __init__(self, batch: int = 1, model_key: str = "code", sampling: Sampling | None = None,
                 history: int = HISTORY):
        self._batch = _int_in("batch", batch, 1, MAX_BATCH)
        self._draft_k = 0
        self._draft_kind = "ngram"
        self._sharding: tuple[str, int] = ("tp", 1)
        self._sampling = sampling or Sampling()
        self._model_key = self._check_key(model_key)
        self._weights = "default"
        self._run_state = "idle"
        self._trip_seconds = 1.0
        self._real_time = False
        self._engine_status = "stopped"
        self._engine_error: str | None = None
        self._apprentice_available = False
        self._prompt = ""
        self._answer_number = 0
        self._trips: deque[dict] = deque(maxlen=_int_in("history", history, 1, 1_000_000))
        self._engine_info: dict | None = None
        self._answer = Answer()
        self._run_wanted = False
        self._trip_count = 0
        self._reports_received = 0
        self._apprentice_offer: ApprenticeOffer | None = None
        self._sharding_offer: ShardingOffer | None = None
        self._worker_layers: tuple[tuple[int, int], ...] = ()
        self._sharding_asked: tuple[str, int] | None = None
        self._subscribers: list[tuple[Callback, str | None]] = []

    # ---- events ----------------------------------------------------------------------------------------------
    def subscribe(self, callback: Callback, field: str | None = None) -> Callable[[], None]:
        """Call ``callback(change)`` after each change of ``field`` (every field when None), in the order of
        subscription. Returns a function that unsubscribes. Raises ``ValueError`` for an unknown field."""
        if field is not None and field not in FIELDS:
            raise ValueError(f"no field {field!r}; the fields are {', '.join(FIELDS)}")
        entry = (callback, field)
        self._subscribers.append(entry)

        def unsubscribe() -> None:
            if entry in self._subscribers:
                self._subscribers.remove(entry)
        return unsubscribe

    def _set(self, field: str, value) -> bool:
        old = getattr(self, "_" + field)
        if old == value:
            return False
        setattr(self, "_" + field, value)
        change = Change(field, value, old)
        for callback, wanted in list(self._subscribers):  # a callback may unsubscribe itself
            if wanted is None or wanted == field:
                callback(change)
        return True

    # ---- read ------------------------------------------------------------------------------------------------
    batch = property(lambda self: self._batch, doc="Seats sharing each trip (1-16).")
    draft_k = property(lambda self: self._draft_k, doc="The apprentice's guesses per trip (0 = off).")
    draft_kind = property(lambda self: self._draft_kind, doc='"ngram" or "model".')
    sharding = property(lambda self: self._sharding, doc="(mode, n) in force, as the engine last said.")
    sampling = property(lambda self: self._sampling, doc="The ``Sampling`` of the next answer.")
    model_key = property(lambda self: self._model_key, doc='"code", "poems" or "custom".')
    weights = property(lambda self: self._weights,
                       doc='"default" (the machine\'s measured choice), "fp32", "fp16" or "int8".')
    run_state = property(lambda self: self._run_state, doc="idle | running | paused | complete")
    trip_seconds = property(lambda self: self._trip_seconds, doc="Seconds one trip takes on screen.")
    real_time = property(lambda self: self._real_time, doc="Real-time mode (trips at their measured pace).")
    engine_status = property(lambda self: self._engine_status,
                             doc="stopped | loading | ready | failed | restarting")
    engine_error = property(lambda self: self._engine_error, doc="Why no model could be loaded, or None.")
    apprentice_available = property(lambda self: self._apprentice_available,
                                    doc="Whether the ready engine has an apprentice.")
    prompt = property(lambda self: self._prompt, doc="The prompt to run.")
    answer_number = property(lambda self: self._answer_number, doc="Answers started so far.")
    engine_info = property(lambda self: self._engine_info, doc="The ready engine's ``ready`` event, or None.")
    answer = property(lambda self: self._answer, doc="The visitor's answer in progress (an ``Answer``).")
    run_wanted = property(lambda self: self._run_wanted, doc="Run waits for an engine to be ready.")
    trip_count = property(lambda self: self._trip_count, doc="Trips counted since the last Reset.")
    reports_received = property(lambda self: self._reports_received, doc="Step reports received (any answer's).")
    apprentice_offer = property(lambda self: self._apprentice_offer,
                                doc="The last ready engine's ``ApprenticeOffer``, or None.")
    sharding_offer = property(lambda self: self._sharding_offer,
                              doc="The last ready engine's ``ShardingOffer``, or None.")
    worker_layers = property(lambda self: self._worker_layers,
                             doc="Each worker's layers (first, end) of the sharding in force, or ().")
    sharding_asked = property(lambda self: self._sharding_asked,
                              doc="(mode, n) asked of the engine and not answered yet, or None.")

    @property
    def trips(self) -> tuple[dict, ...]:
        """The last step reports, oldest first (at most ``history``)."""
        return tuple(self._trips)

    @property
    def last_trip(self) -> dict | None:
        return self._trips[-1] if self._trips else None

    @property
    def history(self) -> int:
        return int(self._trips.maxlen or 0)

    def is_running(self) -> bool:
        return self._run_state == "running"

    # ---- change ----------------------------------------------------------------------------------------------
    def set_batch(self, n: int) -> bool:
        """Seats sharing each trip, 1-16. Returns True if it changed."""
        return self._set("batch", _int_in("batch", n, 1, MAX_BATCH))

    def set_draft_k(self, k: int) -> bool:
        """The apprentice's guesses per trip, 0 (off) to 8."""
        return self._set("draft_k", _int_in("draft_k", k, 0, MAX_DRAFT_K))

    def set_draft_kind(self, kind: str) -> bool:
        """Which apprentice guesses: "ngram" or "model"."""
        if kind not in DRAFT_KINDS:
            raise ValueError(f"draft kind must be one of {', '.join(DRAFT_KINDS)}, not {kind!r}")
        return self._set("draft_kind", kind)

    def set_sharding(self, mode: str, n: int, layers: tuple[tuple[int, int], ...] = ()) -> bool:
        """The sharding in force: ``mode`` "tp" or "pp", ``n`` 1-4 worker processes, and ``layers``, each
        worker's layers ``(first, end)`` (end exclusive, first < end) as the engine reported them, or () (then
        ``worker_layers``). ``worker_layers`` changes first, so that a follower of ``sharding`` reads both new.
        Returns True if ``sharding`` changed."""
        if mode not in SHARDING_MODES:
            raise ValueError(f"sharding mode must be tp or pp, not {mode!r}")
        n = _int_in("shards", n, 1, MAX_SHARDS)
        self._set("worker_layers", _layers(layers))
        return self._set("sharding", (mode, n))

    def set_sharding_asked(self, asked: tuple[str, int] | None) -> bool:
        """The sharding asked of the engine and not answered yet: ``(mode, n)`` as in ``set_sharding``, or None
        (answered, refused, or given up)."""
        if asked is not None:
            if not (isinstance(asked, tuple) and len(asked) == 2 and asked[0] in SHARDING_MODES):
                raise ValueError(f"the sharding asked is (mode, n) with mode tp or pp, or None, not {asked!r}")
            _int_in("shards asked", asked[1], 1, MAX_SHARDS)
        return self._set("sharding_asked", asked)

    def set_apprentice_offer(self, offer: ApprenticeOffer) -> bool:
        """What the ready engine offers of the apprentice (an ``ApprenticeOffer``)."""
        if not isinstance(offer, ApprenticeOffer):
            raise ValueError(f"an apprentice offer is an ApprenticeOffer, not {type(offer).__name__}")
        return self._set("apprentice_offer", offer)

    def set_sharding_offer(self, offer: ShardingOffer) -> bool:
        """The degrees the ready engine may be sharded into (a ``ShardingOffer``)."""
        if not isinstance(offer, ShardingOffer):
            raise ValueError(f"a sharding offer is a ShardingOffer, not {type(offer).__name__}")
        return self._set("sharding_offer", offer)

    def set_sampling(self, **fields) -> bool:
        """Change fields of ``sampling`` (temperature, top_p, seed, greedy); the others stay. Raises
        ``ValueError`` for an unknown field or a bad value."""
        unknown = set(fields) - {"temperature", "top_p", "seed", "greedy"}
        if unknown:
            raise ValueError(f"no sampling field {sorted(unknown)[0]!r}")
        if "greedy" in fields and not isinstance(fields["greedy"], bool):
            raise ValueError(f"greedy must be True or False, not {fields['greedy']!r}")
        return self._set("sampling", replace(self._sampling, **fields))

    def set_greedy(self, on: bool) -> bool:
        return self.set_sampling(greedy=bool(on))

    def set_seed(self, seed: int | None) -> bool:
        return self.set_sampling(seed=seed)

    def set_model_key(self, key: str) -> bool:
        return self._set("model_key", self._check_key(key))

    def set_weights(self, kind: str) -> bool:
        """The weights' kind: one of ``WEIGHTS`` ("default": the engine's measured choice for this machine)."""
        if kind not in WEIGHTS:
            raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {kind!r}")
        return self._set("weights", kind)

    def set_run_state(self, state: str) -> bool:
        if state not in RUN_STATES:
            raise ValueError(f"run state must be one of {', '.join(RUN_STATES)}, not {state!r}")
        return self._set("run_state", state)

    def set_trip_seconds(self, seconds: float) -> bool:
        """Seconds one trip takes on screen, 0.25-3 (kept to hundredths, the slider's step)."""
        lo, hi = TRIP_SECONDS_RANGE
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not lo <= seconds <= hi:
            raise ValueError(f"trip seconds must be a number {lo}-{hi}, not {seconds!r}")
        return self._set("trip_seconds", round(float(seconds), 2))

    def set_real_time(self, on: bool) -> bool:
        """Real-time mode on (True) or off (False)."""
        if not isinstance(on, bool):
            raise ValueError(f"real time must be True or False, not {on!r}")
        return self._set("real_time", on)

    def set_engine_status(self, status: str, error: str | None = None) -> bool:
        """The engine's status (one of ``ENGINE_STATES``); ``error``, the reason, only with "failed" (and
        required there). Returns True if the status changed."""
        if status not in ENGINE_STATES:
            raise ValueError(f"engine status must be one of {', '.join(ENGINE_STATES)}, not {status!r}")
        if (status == "failed") != isinstance(error, str):
            raise ValueError(f"an engine error is text with \"failed\" and None otherwise, not {error!r}")
        self._set("engine_error", error)
        return self._set("engine_status", status)

    def is_engine_ready(self) -> bool:
        return self._engine_status == "ready"

    def set_apprentice_available(self, ok: bool) -> bool:
        """Whether the engine has an apprentice (True or False)."""
        if not isinstance(ok, bool):
            raise ValueError(f"apprentice available must be True or False, not {ok!r}")
        return self._set("apprentice_available", ok)

    def set_engine_info(self, info: dict | None) -> bool:
        """The ready engine's ``ready`` event (a dict), or None when no engine is ready."""
        if info is not None and not isinstance(info, dict):
            raise ValueError(f"engine info is a dict or None, not {type(info).__name__}")
        return self._set("engine_info", info)

    def spec_key(self, prompt: str | None = None) -> tuple:
        """What "the same prompt" means for the apprentice's measured speed-up: (prompt, batch, sharding, greedy)
        (a greedy apprentice is compared with greedy plain decoding); ``prompt`` defaults to the answer's."""
        return (self._answer.prompt if prompt is None else prompt, self._batch, self._sharding,
                self._sampling.greedy)

    def set_answer(self, **fields) -> bool:
        """Change fields of ``answer`` (those of ``Answer``); the others stay. Raises ``ValueError`` for an
        unknown field or a bad value. Returns True if the answer changed."""
        unknown = set(fields) - set(Answer.__dataclass_fields__)
        if unknown:
            raise ValueError(f"no answer field {sorted(unknown)[0]!r}")
        return self._set("answer", replace(self._answer, **fields))

    def new_answer(self, request_id: str, prompt: str) -> bool:
        """A new answer to ``prompt``, the visitor's request ``request_id``: nothing written, nothing submitted."""
        return self._set("answer", Answer(prompt=prompt, main_request=request_id, done=False))

    def set_run_wanted(self, on: bool) -> bool:
        """Whether Run waits for an engine to be ready (True or False)."""
        if not isinstance(on, bool):
            raise ValueError(f"run wanted must be True or False, not {on!r}")
        return self._set("run_wanted", on)

    def set_trip_count(self, n: int) -> bool:
        """Trips counted since the last Reset (0 or more)."""
        return self._set("trip_count", _int_in("trip count", n, 0, 1 << 62))

    def count_report(self) -> int:
        """One more step report received; returns how many so far."""
        self._set("reports_received", self._reports_received + 1)
        return self._reports_received

    def set_prompt(self, text: str) -> bool:
        """The prompt to run; cut to ``MAX_PROMPT_CHARS`` characters."""
        if not isinstance(text, str):
            raise ValueError(f"the prompt must be text, not {type(text).__name__}")
        return self._set("prompt", text[:MAX_PROMPT_CHARS])

    def start_answer(self) -> int:
        """A new answer: ``answer_number`` + 1 (returned), and the trips of the last one forgotten."""
        self.clear_trips()
        self._set("answer_number", self._answer_number + 1)
        return self._answer_number

    def add_trip(self, report: dict) -> None:
        """Keep one step report (a dict with at least ``wall_ms``); the oldest goes past ``history``."""
        if not isinstance(report, dict):
            raise ValueError(f"a step report is a dict, not {type(report).__name__}")
        old = self.trips
        self._trips.append(report)
        self._emit_trips(old)

    def clear_trips(self) -> None:
        if self._trips:
            old = self.trips
            self._trips.clear()
            self._emit_trips(old)

    def _emit_trips(self, old: tuple) -> None:
        change = Change("trips", self.trips, old)
        for callback, wanted in list(self._subscribers):
            if wanted is None or wanted == "trips":
                callback(change)

    @staticmethod
    def _check_key(key: str) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError(f"a model key is a non-empty name, not {key!r}")
        return key

    def snapshot(self) -> dict:
        """Every field as plain data (for logs and tests)."""
        return {"batch": self._batch, "draft_k": self._draft_k, "draft_kind": self._draft_kind,
                "sharding": self._sharding, "sampling": self._sampling, "model_key": self._model_key,
                "weights": self._weights, "run_state": self._run_state, "trip_seconds": self._trip_seconds,
                "real_time": self._real_time, "engine_status": self._engine_status,
                "engine_error": self._engine_error, "apprentice_available": self._apprentice_available,
                "prompt": self._prompt, "answer_number": self._answer_number, "trips": len(self._trips),
                "engine_info": self._engine_info, "answer": self._answer, "run_wanted": self._run_wanted,
                "trip_count": self._trip_count, "reports_received": self._reports_received,
                "apprentice_offer": self._apprentice_offer, "sharding_offer": self._sharding_offer,
                "worker_layers": self._worker_layers, "sharding_asked": self._sharding_asked}


__all__ = ["SessionState", "Sampling", "Answer", "Change", "ApprenticeOffer", "ShardingOffer", "FIELDS", "RUN_STATES",
           "MAX_BATCH", "MAX_DRAFT_K", "MAX_PROMPT_CHARS", "ENGINE_STATES", "DRAFT_KINDS", "SHARDING_MODES",
           "SHARD_DEGREES", "HISTORY", "TRIP_SECONDS_RANGE", "WEIGHTS"]
