"""The kiosk's invitation while the attract loop plays: "触摸开始 / Touch to start", both languages at once, big
enough to read across a room, with the book's cart rolling under it (motion draws the eye).

``InviteBanner(window, idle)`` follows the kiosk's ``IdleWatcher``: shown on ``idle`` (the attract loop starts),
hidden on ``woken`` (a visitor). It lets every input through to the window (it is transparent for the mouse and
``gui.kiosk.touch`` routes touches by the widgets under it), and it never takes the keyboard focus. Its animation runs
only while it is shown.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from animations.items import CartItem

FRAME_MS = 16
CROSSING_S = 4.0  # the cart crosses the banner in this long, then comes round again
HEIGHT_FRACTION = 0.24  # of the window's height
CONTEXT = "Invite"


def invitation_lines() -> tuple[str, str]:
    """The invitation in Chinese and in English, whatever the interface's language: the Chinese line through
    the Chinese translator itself (``gui.i18n.load_translator``), so it comes from the .ts like every string."""
    from gui import i18n
    QCoreApplication.translate("Invite", "Touch to start")  # the source text, as the i18n check finds it
    translator = i18n.load_translator("zh")
    chinese = translator.translate("Invite", "Touch to start") if translator is not None else ""
    return (chinese or "Touch to start"), "Touch to start"


class InviteBanner(QWidget):
    """The banner across the lower part of ``window`` while the attract loop plays."""

    def __init__(self, parent: QWidget, idle: QObject):
        super().__init__(parent)
        self.setObjectName("inviteBanner")
        self.setAttribute(Qt.WA_TransparentForMouseEvents, True)
        self.setFocusPolicy(Qt.NoFocus)
        self.progress = 0.0  # of the cart's crossing, 0..1
        self._lines = ("", "")
        self._timer = QTimer(self)
        self._timer.setObjectName("inviteTimer")
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._tick)
        self._cart = CartItem(120.0, 40.0)
        self.hide()
        idle.idle.connect(self.begin)
        idle.woken.connect(self.end)
        parent.installEventFilter(self)

    def begin(self) -> None:
        """Show the invitation (the attract loop starts)."""
        self._lines = invitation_lines()
        self._place()
        self.raise_()
        self.show()
        self._timer.start()

    def end(self) -> None:
        """Hide it (a visitor touched, or the kiosk is leaving)."""
        self._timer.stop()
        self.hide()

    def lines(self) -> tuple[str, str]:
        """The two lines shown (Chinese, English)."""
        return self._lines

    def audit_rects(self) -> dict[str, QRectF]:
        """Where the Chinese ("zh") and English ("en") lines are painted (banner coordinates) and their font px."""
        zh_px, en_px = self._font_px()
        h = self.height()
        return {"zh": QRectF(0, h * 0.06, self.width(), zh_px * 1.3), "en": QRectF(0, h * 0.06 + zh_px * 1.3,
                                                                                  self.width(), en_px * 1.3)}

    def _font_px(self) -> tuple[int, int]:
        h = self.height()
        return max(24, round(h * 0.34)), max(18, round(h * 0.2))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.parentWidget() and event.type() == QEvent.Resize and self.isVisible():
            self._place()
        return False

    def _place(self) -> None:
        window = self.parentWidget()
        h = max(120, round(window.height() * HEIGHT_FRACTION))
        self.setGeometry(0, window.height() - h, window.width(), h)

    def _tick(self) -> None:
        self.progress = (self.progress + FRAME_MS / 1000 / CROSSING_S) % 1.0
        self.update()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        super().hideEvent(event)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.fillRect(self.rect(), QColor(10, 14, 19, 225))
        p.setPen(QPen(QColor("#ffc94a"), 3))
        p.drawLine(0, 1, self.width(), 1)
        # the cart on its trip, across the whole banner, behind the words
        p.save()
        scale = self.height() / 230  # the cart (about 110 units with its load and handle) half the banner's height
        x = -160 * scale + self.progress * (self.width() + 320 * scale)
        p.translate(QPointF(x, self.height() * 0.62))
        p.scale(scale, scale)
        p.setOpacity(0.8)
        self._cart.paint(p, QStyleOptionGraphicsItem(), None)
        p.restore()
        zh_px, en_px = self._font_px()
        rects = self.audit_rects()
        family = self.font().family()
        for (key, text), px, color in ((("zh", self._lines[0]), zh_px, "#ffc94a"),
                                       (("en", self._lines[1]), en_px, "#eef3f8")):
            font = QFont(family)
            font.setPixelSize(px)
            font.setBold(key == "zh")
            p.setFont(font)
            p.setPen(QColor(color))
            p.drawText(rects[key], Qt.AlignHCenter | Qt.AlignVCenter, text)
        p.end()
