"""The Live page's plots carry numbers and units on both axes, and label the floor line where it covers no point."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication


def _plot(qtbot, floor_ms):
    from gui.live.plots import TripPlot
    plot = TripPlot()
    qtbot.addWidget(plot)
    font = QFont()
    font.setPixelSize(16)
    plot.set_text_font(font)
    plot.resize(640, 240)
    plot.show()
    for i in range(40):
        plot.add_trip(i, 3.0 + (i % 5) * 0.5 + (8.0 if i == 0 else 0.0), i == 0)
    plot.set_floor(floor_ms)
    QApplication.processEvents()
    plot.redraw()
    QApplication.processEvents()
    plot.redraw()  # the axis width follows its widest label: settle once more
    QApplication.processEvents()
    return plot


def test_both_axes_have_numbers_and_units(qtbot):
    from gui.audit.layout_audit import collect_layout
    plot = _plot(qtbot, 2.0)
    items = collect_layout(plot, "en")["items"]
    axis = [it["text"] for it in items if it["role"] == "axis"]
    assert any(t.endswith("ms") and t[0].isdigit() for t in axis), axis
    assert any(t.endswith("trips") and t[0].isdigit() for t in axis), axis
    assert sum(1 for t in axis if t.replace(",", "").isdigit()) >= 2  # more numbers than the unit's
    assert not [it for it in items if it["clipped"]]


def test_the_floor_is_labelled_where_it_covers_no_point(qtbot):
    from gui.audit.layout_audit import collect_layout
    plot = _plot(qtbot, 2.0)
    items = collect_layout(plot, "en")["items"]
    (floor,) = [it for it in items if it["text"].startswith("floor")]
    assert "2.00" in floor["text"] and floor["text"].endswith("ms")
    x, y, w, h = floor["rect"]
    rect = QRectF(x, y, w, h)
    vb = plot.getViewBox()
    for px, ms in plot.points():
        scene_pt = vb.mapViewToScene(QPointF(px, ms))
        pt = plot.mapFromScene(scene_pt)
        assert not rect.contains(QPointF(pt)), (px, ms, floor["rect"])
    plot.set_floor(None)
    plot.redraw()
    QApplication.processEvents()
    assert not [it for it in collect_layout(plot, "en")["items"] if it["text"].startswith("floor")]


def test_a_plot_too_short_for_the_floor_label_hides_it(qtbot):
    from gui.audit.layout_audit import collect_layout
    plot = _plot(qtbot, 2.0)
    plot.resize(640, 44)  # about two lines of 16 px text: the label fits neither above nor below the line
    QApplication.processEvents()
    plot.redraw()
    QApplication.processEvents()
    items = collect_layout(plot, "en")["items"]
    assert not [it for it in items if it["text"].startswith("floor")]
    assert not [it for it in items if it["clipped"]]
