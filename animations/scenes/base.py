"""What every tour scene shares: drawing helpers, honesty badges and a timeline that owns scene time (the look:
``animations.scenes.look``).

A tour scene is a ``QGraphicsScene`` of ``SCENE_W × SCENE_H`` scene units (at 1080p about one unit per pixel).
``build(ctx)`` draws it from plain data (a dict, see ``gui/tour/data.py``: the prompt, its tokens, embedding rows,
the engine's measurements or None); it creates every item and fills ``self.timeline`` with an intro animation.
Only ``advance(dt_s)`` and ``seek(t_s)`` move scene time; ``finish()`` jumps to the end state (screenshots).

Every user-visible string goes through :func:`T` (Qt's translation system, context ``"Tour"``; English source,
Chinese in ``assets/i18n/one_trip_zh_CN.ts``). Every number carries a badge saying what it is:
``measured`` (on this computer, now), ``formula`` (computed, source named), ``source`` (quoted from the source
text) or ``illustrative`` (a picture, not a measurement). No torch here.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsPathItem,
    QGraphicsPixmapItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsTextItem,
)

from animations.easing import ease_out_back, smooth
from animations.scenes import look
from animations.scenes.look import (
    BADGE_COLORS,
    BG,
    DIM,
    EDGE,
    INK,
    PANEL,
    PAPER,
    SCENE_H,
    SCENE_W,
    TEXT,
    badge_text,
    fit_factor,
    font,
    page_title,
    px,
)
from animations.textset import rebalance
from animations.textset import set_breaks as keep_together
from animations.timeline import Animation, Fade, Lambda, Timeline, lerp_point
from animations.typescale import set_role


class Appear(Animation):
    """Fade in while growing from ``start_scale`` to 1 (a "pop" for things that appear)."""

    def __init__(self, item: QGraphicsItem, start_scale: float = 0.6):
        super().__init__(smooth)
        self.item, self.s0 = item, start_scale

    def interpolate(self, alpha: float) -> None:  # opacity smooth, scale with a small overshoot
        a = min(1.0, max(0.0, alpha))
        self.item.setOpacity(smooth(a))
        self.item.setScale(self.s0 + (1.0 - self.s0) * ease_out_back(a))

    def apply(self, progress: float) -> None:  # pragma: no cover - interpolate is overridden
        self.interpolate(progress)


class TourScene(QGraphicsScene):
    """Base of the tour's scenes. Subclasses set ``title`` (English source; the tour shows it above the scene,
    ``title_text()``) and implement ``draw(ctx)``.

    ``loop_s``: after the intro, scene time wraps into [duration - loop_s, duration] when set (a gentle loop),
    else the scene rests on its end state.
    """

    title = ""
    number: int | None = None  # the source's section number (1–15), shown as "01 · title"
    loop_s: float | None = None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSceneRect(QRectF(0, 0, SCENE_W, SCENE_H))
        self.setBackgroundBrush(BG)
        self.timeline = Timeline()
        self.t = 0.0
        self.ctx: dict = {}
        self.factor = 1.0  # text size factor the scene was built with (see fit_factor)

    # ---- time -------------------------------------------------------------------------------------------
    @property
    def duration(self) -> float:
        """Seconds of the intro animation."""
        return self.timeline.duration

    def seek(self, t_s: float) -> None:
        """Put every item in its state at scene time ``t_s`` (seconds)."""
        self.t = max(0.0, t_s)
        t = self.t
        if self.loop_s and t > self.duration:
            span = self.loop_s
            t = self.duration - span + (t - self.duration) % span
        self.timeline.seek(t)

    def advance(self, dt_s: float) -> None:
        """Move scene time forward by ``dt_s`` seconds (the tour's clock calls this)."""
        self.seek(self.t + dt_s)

    def finish(self) -> None:
        """Jump to the end state of the intro."""
        self.seek(self.duration)

    @property
    def settled(self) -> bool:
        """True once the intro has played and there is no loop (the clock may stop)."""
        return self.loop_s is None and self.t >= self.duration

    # ---- building ---------------------------------------------------------------------------------------
    def build(self, ctx: dict) -> None:
        """Clear and draw the scene for ``ctx``, then show its first frame. Text sizes follow the view the
        scene is shown in, when it is (``fit_factor``): call ``needs_rebuild(view)`` after the view's size
        settles (a resize, a new controls row) and build again when it says so."""
        self.clear()
        self.timeline = Timeline()
        self.ctx = ctx
        self.t = 0.0
        views = self.views()
        self.factor = fit_factor(views[0] if views else None)
        look.set_text_factor(self.factor)
        try:
            self.draw(ctx)  # the page's title is the tour's widget above the view (gui/tour/layout.py), not drawn here
        finally:
            look.set_text_factor(1.0)
        self.seek(0.0)

    def needs_rebuild(self, view) -> bool:
        """True when the text of this scene, fitted into ``view``, would be more than 1 % smaller or 4 % larger
        than the window's type scale (``fit_factor``): the caller builds again (and seeks back to its time)."""
        needed, built = fit_factor(view), self.factor
        return needed > built * 1.01 or built > needed * 1.04

    def draw(self, ctx: dict) -> None:
        raise NotImplementedError

    def title_text(self) -> str:
        """The page's title as shown: "01 · The request" (a two-digit number for the source's sections)."""
        return page_title(self.title, self.number)

    @property
    def top(self) -> float:
        """The y where a page's content starts (the title is a widget above the scene)."""
        return 12.0

    # ---- helpers ----------------------------------------------------------------------------------------
    def addItem(self, item: QGraphicsItem) -> None:  # noqa: N802 - Qt's name
        """``QGraphicsScene.addItem``, noting the item while ``attempt`` is drawing (so it can take it back)."""
        super().addItem(item)
        added = getattr(self, "_added", None)
        if added is not None:
            added.append(item)

    def collect(self, make) -> tuple[object, list[QGraphicsItem]]:
        """Call ``make()``; returns (what it returned, the items it added to the scene), for ``spread``."""
        outer = getattr(self, "_added", None)
        self._added = []
        try:
            out = make()
        finally:
            mine, self._added = self._added, outer
            if outer is not None:
                outer.extend(mine)
        return out, mine

    def spread(self, groups: list[list[QGraphicsItem]], bottom: float = SCENE_H - 4, most: float = 60.0) -> None:
        """Share the free height between the lowest item of ``groups`` (lists of items from ``collect``, top to
        bottom) and ``bottom`` among the gaps between the groups, at most ``most`` per gap: a page that does not
        fill its scene breathes instead of leaving an empty band at the bottom. Only for items whose animations
        do not set their position."""
        # children move with their card (never ask an item for its parentItem(): see ``attempt``)
        children = {id(c) for g in groups for it in g if it.scene() is self for c in it.childItems()}
        groups = [[it for it in g if it.scene() is self and id(it) not in children] for g in groups]
        groups = [g for g in groups if g]
        if len(groups) < 2:
            return
        low = max(it.sceneBoundingRect().bottom() for g in groups for it in g)
        gap = min(most, max(0.0, bottom - low) / (len(groups) - 1))
        for k, g in enumerate(groups):
            for it in g:
                it.moveBy(0, gap * k)

    def attempt(self, make, bottom: float = SCENE_H - 4, right: float = SCENE_W - 4, left: float = 4,
                top: float = 4):
        """Draw with ``make()``; if anything it drew reaches past ``bottom`` (or ``right``/``left``/``top``),
        take all of it back (its items and its animations) and return None; else return what ``make`` returned.

        A page tries its largest layout first and steps down: ``attempt(lambda: big()) or attempt(...)``. A
        ``make`` that returns None or another falsy value on success should return True instead; one that returns
        False is taken back as well (it found for itself that it does not fit).
        """
        outer = getattr(self, "_added", None)
        self._added = []
        n0 = len(self.timeline)
        try:
            out = make()
        except BaseException:
            self._added = outer
            raise
        mine, self._added = self._added, outer
        area = QRectF(left, top, right - left, bottom - top)
        # never ask an item for its parentItem() here: PySide6 then hands a top-level item to Python, which
        # deletes it with its last reference (a child lies inside its card anyway, or is a fault itself)
        fits = out is not False and all(area.contains(item.sceneBoundingRect()) for item in mine
                                        if item.scene() is self and item.isVisible())
        if fits:
            if outer is not None:
                outer.extend(mine)
            return out
        children = {id(c) for item in mine if item.scene() is self for c in item.childItems()}
        for item in mine:  # removing a card takes its children along
            if item.scene() is self and id(item) not in children:
                self.removeItem(item)
        self.timeline = Timeline(self.timeline.first_added(n0))
        return None

    def text(self, s: str, x: float, y: float, style: str = "body", color: QColor = TEXT, bold: bool = False,
             width: float | None = None, align: str = "left", z: float = 5, role: str = "label") -> QGraphicsItem:
        """A text item at (x, y) (top-left; ``align`` "center"/"right" makes x the centre/right edge), its size the
        type-scale ``style`` (``px``), tagged with ``role`` (``set_role``) for the layout audit.

        With ``width`` the text wraps inside that width (a rich-text item) and grows downwards: read its height
        from ``boundingRect()``; otherwise it is one line.
        """
        size = px(style)
        if width is not None:
            item = QGraphicsTextItem()
            item.setDefaultTextColor(color)
            item.setFont(font(size, bold))
            item.document().setDocumentMargin(0)
            item.setTextWidth(width)
            item.setPlainText(keep_together(s))  # no break inside "2 TB/s" or "QKᵀ/√d"
            if align == "left":
                rebalance(item)  # no last line of one word alone
            doc = item.document()
            if align != "left":
                opt = doc.defaultTextOption()
                opt.setAlignment(Qt.AlignHCenter if align == "center" else Qt.AlignRight)
                doc.setDefaultTextOption(opt)
            item.setPos(x if align == "left" else (x - width / 2 if align == "center" else x - width), y)
        else:
            item = QGraphicsSimpleTextItem(s)
            item.setBrush(color)
            item.setFont(font(size, bold))
            w = item.boundingRect().width()
            item.setPos(x - (w / 2 if align == "center" else (w if align == "right" else 0)), y)
        item.setZValue(z)
        set_role(item, role)
        self.addItem(item)
        return item

    def para(self, s: str, x: float, y: float, width: float, style: str = "body", color: QColor = TEXT,
             bold: bool = False, role: str = "caption", align: str = "left") -> tuple[QGraphicsItem, float]:
        """Wrapped text in ``width``; returns (item, the y just below it)."""
        item = self.text(s, x, y, style, color, bold, width=width, role=role, align=align)
        return item, y + item.boundingRect().height()

    def para_fit(self, s: str, x: float, y: float, width: float, bottom: float,
                 styles: tuple[str, ...] = ("label", "small"), color: QColor = TEXT, bold: bool = False,
                 role: str = "caption", align: str = "left") -> tuple[QGraphicsItem, float]:
        """``para`` in the largest of ``styles`` whose wrapped text ends above ``bottom`` (the last style
        otherwise); returns (item, the y just below it)."""
        for k, st in enumerate(styles):
            item, end = self.para(s, x, y, width, st, color, bold, role, align)
            if end <= bottom or k == len(styles) - 1:
                return item, end
            self.removeItem(item)
        raise ValueError("para_fit needs at least one style")

    @staticmethod
    def measure(s: str, style: str = "body", bold: bool = False) -> QRectF:
        """The bounding rect of ``s`` on one line in ``style`` (scene units)."""
        probe = QGraphicsSimpleTextItem(s)
        probe.setFont(font(px(style), bold))
        return probe.boundingRect()

    @classmethod
    def lh(cls, style: str = "body", bold: bool = False) -> float:
        """The height of one line in ``style`` with Latin and Chinese in it (the taller of the two fonts)."""
        return cls.measure("Ag什", style, bold).height()

    def fit_style(self, s: str, width: float, styles: tuple[str, ...] = ("body", "label", "small"),
                  bold: bool = False) -> str:
        """The largest of ``styles`` in which ``s`` fits ``width`` on one line (the last one otherwise)."""
        for st in styles:
            if self.measure(s, st, bold).width() <= width:
                return st
        return styles[-1]

    def box(self, x: float, y: float, w: float, h: float, fill: QColor | None = PANEL, edge: QColor | None = EDGE,
            radius: float = 10, width: float = 2, z: float = 1, dash: bool = False) -> QGraphicsPathItem:
        """A rounded rectangle; its transform origin is its centre (for ``Appear``)."""
        path = QPainterPath()
        path.addRoundedRect(QRectF(0, 0, w, h), radius, radius)
        item = QGraphicsPathItem(path)
        item.setBrush(QBrush(fill) if fill is not None else Qt.NoBrush)
        if edge is None:
            item.setPen(Qt.NoPen)
        else:
            pen = QPen(edge, width)
            if dash:
                pen.setStyle(Qt.DashLine)
            item.setPen(pen)
        item.setPos(x, y)
        item.setTransformOriginPoint(w / 2, h / 2)
        item.setZValue(z)
        self.addItem(item)
        return item

    def line(self, x1, y1, x2, y2, color: QColor = DIM, width: float = 2, dash: bool = False, z: float = 2):
        pen = QPen(color, width)
        pen.setCapStyle(Qt.RoundCap)
        if dash:
            pen.setStyle(Qt.DashLine)
        item = QGraphicsLineItem(x1, y1, x2, y2)
        item.setPen(pen)
        item.setZValue(z)
        self.addItem(item)
        return item

    def arrow(self, x1, y1, x2, y2, color: QColor = DIM, width: float = 3, z: float = 2) -> QGraphicsPathItem:
        """A line with a head at (x2, y2)."""
        path = QPainterPath(QPointF(x1, y1))
        path.lineTo(x2, y2)
        ang = math.atan2(y2 - y1, x2 - x1)
        for s in (-1, 1):
            path.moveTo(x2, y2)
            path.lineTo(x2 - 14 * math.cos(ang + s * 0.45), y2 - 14 * math.sin(ang + s * 0.45))
        item = QGraphicsPathItem(path)
        pen = QPen(color, width)
        pen.setCapStyle(Qt.RoundCap)
        item.setPen(pen)
        item.setZValue(z)
        self.addItem(item)
        return item

    def chip(self, label: str, x: float, y: float, fill: QColor = PAPER, fg: QColor = INK, style: str = "body",
             sub: str | None = None, min_w: float = 36, dash: bool = False, edge: QColor | None = None,
             role: str = "token") -> tuple[QGraphicsPathItem, float]:
        """A token chip: ``label`` on a card, ``sub`` (the id) in the small style below it; the card is sized
        from the measured text. Returns (card, its width); the card's height is ``boundingRect().height()``."""
        t = QGraphicsSimpleTextItem(label)
        t.setFont(font(px(style)))
        t.setBrush(fg)
        set_role(t, role)
        tr = t.boundingRect()
        s_item = None
        if sub is not None:
            s_item = QGraphicsSimpleTextItem(sub)
            s_item.setFont(font(px("small")))
            s_item.setBrush(fg.lighter(250) if fg.lightness() < 80 else fg.darker(150))
            set_role(s_item, "token id")
        sr = s_item.boundingRect() if s_item is not None else QRectF()
        pad = px("small") * 0.45
        w = max(min_w, tr.width() + 2 * pad, sr.width() + 2 * pad)
        h = tr.height() + sr.height() + pad
        card = self.box(x, y, w, h, fill, edge if edge is not None else fill.darker(130), radius=8, z=3, dash=dash)
        t.setParentItem(card)
        t.setPos((w - tr.width()) / 2, pad / 2)
        if s_item is not None:
            s_item.setParentItem(card)
            s_item.setPos((w - sr.width()) / 2, pad / 2 + tr.height())
        return card, w

    def badge(self, kind: str, x: float, y: float, note: str | None = None, max_w: float | None = None,
              align: str = "left") -> QGraphicsPathItem:
        """An honesty badge (``measured``, ``formula``, ``source``, ``illustrative``) with an optional note, a pill
        sized from its measured text; with ``max_w`` a long note wraps and the pill grows downwards.
        ``align="right"`` makes x the pill's right edge. Its size: ``boundingRect()``."""
        words = badge_text(kind) + (f" · {note}" if note else "")
        color = BADGE_COLORS[kind]
        pad = px("small") * 0.6
        f = font(px("small"), True)
        one = QGraphicsSimpleTextItem(words)
        one.setFont(f)
        if max_w is not None and one.boundingRect().width() + 2 * pad > max_w:
            t = QGraphicsTextItem()
            t.document().setDocumentMargin(0)
            t.setFont(f)
            t.setDefaultTextColor(color.lighter(130))
            t.setTextWidth(max_w - 2 * pad)
            t.setPlainText(words)
            tw = t.boundingRect().width()
        else:
            t = one
            t.setBrush(color.lighter(130))
            tw = t.boundingRect().width()
        th = t.boundingRect().height()
        w, h = tw + 2 * pad, th + pad * 0.5
        if align == "right":
            x -= w
        card = self.box(x, y, w, h, QColor(color.red(), color.green(), color.blue(), 40), color,
                        radius=min(14.0, h / 2), z=4)
        t.setParentItem(card)
        t.setPos(pad, pad * 0.25)
        set_role(t, "pill")
        return card

    def tag(self, s: str, x: float, y: float, style: str = "label", fill: QColor | None = PANEL,
            edge: QColor | None = EDGE, color: QColor = TEXT, bold: bool = False, align: str = "left",
            role: str = "label", pad: float | None = None, min_w: float = 0.0, radius: float = 10,
            width: float | None = None) -> QGraphicsPathItem:
        """A box sized from its measured text ``s`` (one line, or wrapped in ``width``), the text its child;
        ``align`` "center"/"right" makes x the box's centre/right edge. Its size: ``boundingRect()``."""
        pad = px("small") * 0.6 if pad is None else pad
        t = self.text(s, 0, 0, style, color, bold, width=width, role=role, align="left" if width is None else "center")
        r = t.boundingRect()
        w, h = max(min_w, r.width() + 2 * pad), r.height() + pad
        if align == "center":
            x -= w / 2
        elif align == "right":
            x -= w
        card = self.box(x, y, w, h, fill, edge, radius=radius, z=3)
        t.setParentItem(card)
        t.setPos((w - r.width()) / 2, pad / 2)
        return card

    def image(self, img: QImage, x: float, y: float, w: float, h: float) -> QGraphicsPixmapItem:
        """``img`` scaled (nearest neighbour, crisp cells) to ``w × h`` at (x, y)."""
        pix = QPixmap.fromImage(img.scaled(int(w), int(h), Qt.IgnoreAspectRatio, Qt.FastTransformation))
        item = QGraphicsPixmapItem(pix)
        item.setPos(x, y)
        item.setZValue(2)
        self.addItem(item)
        return item

    # ---- animation shortcuts ----------------------------------------------------------------------------
    def fade_in(self, item: QGraphicsItem, start: float, end: float | None = None) -> QGraphicsItem:
        self.timeline.add(Fade(item, 0.0, 1.0), start, start + 0.4 if end is None else end)
        return item

    def pop_in(self, item: QGraphicsItem, start: float, end: float | None = None) -> QGraphicsItem:
        self.timeline.add(Appear(item), start, start + 0.35 if end is None else end)
        return item

    def move(self, item: QGraphicsItem, a: QPointF, b: QPointF, start: float, end: float) -> None:
        self.timeline.add(Lambda(lambda p: item.setPos(lerp_point(a, b, p))), start, end)

    def call(self, fn, start: float, end: float) -> None:
        """``fn(progress)`` over [start, end] seconds."""
        self.timeline.add(Lambda(fn), start, end)

    def hold(self, seconds: float) -> None:
        """Make the intro at least ``seconds`` long (a pause before a loop wraps)."""
        self.timeline.add(Lambda(lambda p: None), 0.0, seconds)


__all__ = ["TourScene", "Appear"]
