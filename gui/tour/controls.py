"""Each tour page's own controls (attention layer and head, the sampling sliders and draw, the cheat-sheet
size, the game's modes and presses, the all-terms switch) and what they do.

``TourControls`` is mixed into ``TourWidget`` (``gui/tour/tour.py``).
"""

from __future__ import annotations

import logging
import random

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSlider

from animations.scenes.look import T
from gui.tour import glossary
from gui.tour.game import GpuGame

log = logging.getLogger(__name__)

# What the game's people write, one sentence each in turn (translated; see game_sentences).
GAME_SENTENCES = ("One trip of the book writes one token.", "The cheat sheet keeps what was read.",
                  "Sharing the table costs no extra trip.")


class TourControls:
    """The section controls and the game (mixed into ``TourWidget``)."""

    def live_draft_reason(self) -> str | None:
        """Why the game's "live draft model" switch is disabled (translated), or None when it can be used."""
        if self.bridge is None:
            return T("no engine is running here")
        info = getattr(self.bridge, "info", None) or self.data.engine_info
        if not info:
            return T("the engine is still starting")
        if not info.get("draft"):
            return T("no draft model is loaded") + (f" ({info['draft_error']})" if info.get("draft_error") else "")
        return None

    # ---- section controls ---------------------------------------------------------------------------------
    def _clear_controls(self) -> None:
        while self.controls_layout.count():
            item = self.controls_layout.takeAt(0)
            w = item.widget()
            if w is not None:
                w.hide()
                w.deleteLater()

    def _button(self, text: str, slot, checkable: bool = False, checked: bool = False) -> QPushButton:
        b = QPushButton(text)
        b.setFont(self._font(self._px("control"), True))
        b.setCheckable(checkable)
        b.setChecked(checked)
        b.clicked.connect(slot)
        self.controls_layout.addWidget(b)
        return b

    def _slider(self, label: str, lo: int, hi: int, value: int, slot) -> QSlider:
        lab = QLabel(label)
        lab.setFont(self._font(self._px("control")))
        self.controls_layout.addWidget(lab)
        s = QSlider(Qt.Horizontal)
        s.setRange(lo, hi)
        s.setValue(value)
        s.setMinimumWidth(8 * self._px("control"))  # 160 px at 720p, wider with the type
        s.setFocusPolicy(Qt.StrongFocus)  # arrows move it only while it has the focus (and shows its ring)
        s.valueChanged.connect(slot)
        self.controls_layout.addWidget(s)
        return s

    def _build_controls(self, key: str) -> None:
        self._clear_controls()
        if key == "prefill":
            a = (self.data.analysis or {}).get("attention") or {}
            n_layer = int(a.get("n_layer") or self.data.config.get("n_layer") or 1)
            n_head = int(a.get("n_head") or self.data.config.get("n_head") or 1)
            self._button(T("Layer {i} of {n}").format(i=self.attn_layer + 1, n=n_layer),
                         lambda: self._set_attn((self.attn_layer + 1) % n_layer, self.attn_head))
            self._button(T("Head {i} of {n}").format(i=self.attn_head + 1, n=n_head),
                         lambda: self._set_attn(self.attn_layer, (self.attn_head + 1) % n_head))
        elif key == "sampling":
            self._slider(T("Temperature"), 0, 200, int(self.temperature * 100),
                         lambda v: self._set_sampling(temperature=v / 100))
            self._slider(T("top-p"), 5, 100, int(self.top_p * 100), lambda v: self._set_sampling(top_p=v / 100))
            self._slider(T("top-k"), 0, 50, self.top_k, lambda v: self._set_sampling(top_k=v))
            self._button(T("Draw"), self._draw)
        elif key == "kv_size":
            for n in (2000, 100_000):
                self._button(T("{n:,} tokens").format(n=n), lambda _=False, n=n: self._set_kv_tokens(n), True,
                             self.kv_tokens == n)
        elif key == "game":
            for mode, label in (("alone", T("Alone")), ("apprentice", T("With the apprentice")),
                                ("shared", T("Sharing the table"))):
                self._button(label, lambda _=False, m=mode: self.start_game(m), True, self.game.mode == mode)
            press = self._button(T("Press: one trip"), self._game_press)
            press.setObjectName("gamePress")
            press.setMinimumWidth(200)
            self._button(T("Start over"), lambda: self.start_game(self.game.mode))
            if self.game.mode == "apprentice":
                reason = self.live_draft_reason()
                self._button(T("Guesses: random"), lambda: self._game_set_live(False), True, not self.game_live)
                live = self._button(T("Guesses: live draft"), lambda: self._game_set_live(True), True,
                                    self.game_live)
                live.setEnabled(reason is None)
                live.setToolTip(T("Disabled: {reason}").format(reason=reason) if reason else
                                T("Each press asks the engine for one real verify trip of the bundled draft model"))
        elif key == "metaphors":
            self.glossary_button = self._button(T("All terms explained ({n})").format(n=len(glossary.TERMS)),
                                                self.show_glossary, True,
                                                self.stage_stack.currentWidget() is self.glossary_view)

    def _refresh(self) -> None:
        self._rebuild(replay=False)

    def _set_attn(self, layer: int, head: int) -> None:
        self.attn_layer, self.attn_head = layer, head
        self._refresh()

    def _set_sampling(self, **kw) -> None:
        for k, v in kw.items():
            setattr(self, k, v)
        self.drawn = None
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _draw(self) -> None:
        """Draw one token from the reshaped top-50 (seeded: the n-th draw is the same every time)."""
        from animations.scenes.sampling import reshape
        probs = reshape(self.context())
        self.draw_seed += 1
        rng = random.Random(self.draw_seed)
        r, acc = rng.random(), 0.0
        self.drawn = None
        for i, p in enumerate(probs):
            acc += p
            if p > 0 and r <= acc:
                self.drawn = i
                break
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _set_kv_tokens(self, n: int) -> None:
        self.kv_tokens = n
        self._refresh()

    def start_game(self, mode: str) -> None:
        """Start the game (page 16) over in ``mode`` ("alone", "apprentice"...): a new board, nothing pressed."""
        live = self.game_live and self.live_draft_reason() is None
        self.game = GpuGame(mode=mode, seed=7, accept_source=(lambda k: self._game_accepted) if live else None,
                            sentences=self.game_sentences())
        self._game_text = self.prompt
        self._game_wait = None
        self._game_trip = None
        self._refresh()

    def game_sentences(self) -> list[list[str]]:
        """The sentences the game's people write, as token labels in the current language: English through this
        model's tokenizer (its real pieces, "␣" for a space), Chinese one character a token (the bundled
        tokenizer cuts Chinese into bytes, which a board cannot show); at most 16 tokens each."""
        out = []
        zh = self._lang() == "zh"
        for source in GAME_SENTENCES:
            text = T(source)
            if zh:
                labels = [c for c in text if not c.isspace()]
            else:
                labels = [t["label"] for t in self.data.tokens(text)] if self.data.tokenizer else []
                if not labels:
                    words = text.split()
                    labels = [("␣" if i else "") + w for i, w in enumerate(words)]
            out.append(labels[:16])
        return out

    def _game_set_live(self, on: bool) -> None:
        """The apprentice's switch: random illustration (False) or the live draft model (True, when loaded)."""
        self.game_live = bool(on) and self.live_draft_reason() is None
        self.start_game(self.game.mode)

    def _game_press(self) -> None:
        """One trip. With the live draft model, a trip with guesses first asks the engine for one real verify
        trip over the running text; the game presses when the answer arrives (``_on_game_trip``)."""
        if self._game_wait is not None:
            return  # the last live trip is still being measured
        k = self.game.next_guesses()
        if self.game.accept_source is not None and k and self.bridge is not None:
            aid = f"game-{next(self._ids)}"
            if self.bridge.analyze(aid, "speculative_trip", self._game_text or self.prompt, k=k):
                self._game_wait = aid
                return
        self._game_after_press()

    def _game_after_press(self) -> None:
        self.game.press()
        if self.game.last and self.game.last[0].get("done"):
            self._game_text = self.prompt  # a new person, a new question
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _on_game_trip(self, event: dict) -> None:
        self._game_wait = None
        data = event.get("data") or {}
        if event.get("error") or not data.get("available"):
            log.warning("game: live trip failed (%s)", event.get("error") or "no draft model")
            self.game_live = False
            self.start_game(self.game.mode)  # back to the illustration, with the switch's reason shown
            return
        self._game_trip = data
        self._game_accepted = int(data.get("accepted", 0))
        self._game_text = (self._game_text or self.prompt) + str(data.get("text", ""))
        self._game_after_press()

