"""``python -m gui.audit.audit_matrix``: the layout audit (``gui.audit.layout_faults``) over every screen, written as
a report.

Screens: every tour page (1–18, the states of pages that draw differently: see ``TOUR_STATES``) and the Live page's
states (batch 1, 4 and 16, the apprentice, the book torn 2 ways by pages and by chapters, the details view open
when the page has one), in Chinese and English, at 1280×720, 1280×800, 1920×1080 and 3840×2160 (a 1920×1080
window at scale factor 2, run in a child process: the factor is read when the application starts).

    python -m gui.audit.audit_matrix --out docs/audit-report.md [--json faults.json] [--sizes 1280x720,1920x1080]
                               [--langs zh,en] [--pages 1-18] [--live STATES] [--no-tour] [--no-live]
                               [--illustrative] [--presenter] [--shots DIR]

The Live page runs the real engine on the bundled models (a few real trips per state); the tour measures on the
bundled model once per language, as ``screenshot --section`` does (``--illustrative`` skips it). The report
lists, per screen, each fault with its class and the offending text; the JSON has the same as data. Exit status
0 when no screen has a fault, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = ("1280x720", "1280x800", "1920x1080", "3840x2160@2")
LANGS = ("zh", "en")
LIVE_STATES = ("batch 1", "batch 4", "batch 16", "apprentice", "tp 2", "pp 2", "details")
TOUR_KINDS = ("floor", "hierarchy", "cut", "border", "break", "raw", "language", "band")
LIVE_KINDS = ("floor", "hierarchy", "cut", "border", "break", "raw", "language", "stage")
TRIPS = 8  # real trips before a Live state is looked at (as ``screenshot --steps`` defaults to)


def _size(spec: str) -> tuple[int, int, float]:
    """"1280x720" -> (1280, 720, 1.0); "3840x2160@2" -> (1920, 1080, 2.0): the logical window at that factor."""
    dims, _, factor = spec.partition("@")
    w, _, h = dims.lower().partition("x")
    f = float(factor or 1)
    return round(int(w) / f), round(int(h) / f), f


def _pages(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _record(results: list, screen: str, layout: dict, kinds, shots: Path | None, widget) -> None:
    from gui.audit.layout_faults import faults
    found = faults(layout, kinds)
    results.append({"screen": screen, "items": len(layout["items"]),
                    "faults": [{"kind": f.kind, "text": f.text, "detail": f.detail} for f in found]})
    if shots is not None:
        from gui.audit.layout_audit import exact_image
        exact_image(widget).save(str(shots / (screen.replace(" ", "_").replace("/", "-") + ".png")))
    print(f"{screen}: {len(found)} faults", flush=True)


# ---- the tour ----------------------------------------------------------------------------------------------
def _tour_states(widget) -> list[tuple[str, object]]:
    key = widget.pages_key()
    if key == "game":
        def press(mode, n):
            def go(w):
                w.start_game(mode)
                for _ in range(n):
                    w.game_press()
            return go
        return [(" (game in progress)", press("alone", 3))]
    return [("", None)]


def audit_tour(app, langs, sizes, pages, factor_label: str, live: bool, shots, results,
               presenter: bool = False) -> None:
    """Every tour page in ``pages`` (1-based) for each language and logical size (``presenter``: in presenter
    mode, the tour's text one type step larger)."""
    from PySide6.QtCore import QCoreApplication

    from animations.fonts import register_fonts
    from gui import i18n
    from gui.audit.layout_audit import collect_layout
    from gui.tour.data import TourData, default_prompt
    from gui.tour.measure import measure_in_subprocess
    from gui.tour.tour import TourWidget
    from model.catalog import for_language

    family = register_fonts()
    factor_label += " · presenter" if presenter else ""
    for lang in langs:
        i18n.set_language(lang)
        model_dir = for_language(lang).path()
        data = TourData(model_dir)
        question = default_prompt(model_dir, lang)  # the question a visitor meets first: the app's default
        data.analysis = measure_in_subprocess(question, model_dir) if live and data.tokenizer is not None else None
        widget = TourWidget(bridge=None, data=data, lang=lang, font_family=family)
        widget.prompt = question
        widget.prompt_edit.setText(question)
        if presenter:
            widget.set_presenter(True)
        widget.show()
        try:
            for w, h, label in sizes:
                widget.resize(w, h)
                QCoreApplication.processEvents()
                for page in pages:
                    widget.goto(page - 1)
                    for state, change in _tour_states(widget):
                        if change is not None:
                            change(widget)
                        widget.finish_animation()  # settles: the scene built again for its view if it needs it
                        layout = collect_layout(widget, lang, bands=True)
                        _record(results, f"tour page {page}{state} · {lang} · {label}{factor_label}", layout,
                                TOUR_KINDS, shots, widget)
        finally:
            widget.clock.stop()
            widget.close()
            widget.deleteLater()
            QCoreApplication.processEvents()


# ---- the Live page -----------------------------------------------------------------------------------------
def _details(window, on: bool) -> bool:
    """Open or close the Live page's details view; False when the page has none (yet)."""
    for owner in (window, getattr(window, "live_page", None)):
        setter = getattr(owner, "set_details_open", None) or getattr(owner, "set_details", None)
        if setter is not None:
            setter(on)
            return True
    return False


def _live_state(app, window, state: str) -> str | None:
    """Put the Live page in ``state`` and run ``TRIPS`` real trips; None, or why the state cannot be shown."""
    from gui.capture.screenshot import RUN_TIMEOUT_S, wait_until
    window.set_draft_k(0)
    if window.sharding() != ("tp", 1):
        window.set_sharding("tp", 1)
        wait_until(app, lambda: not window.tear.is_pending(), 60.0)
    _details(window, False)
    window.reset()
    batch = int(state.split()[1]) if state.startswith("batch") else 1
    window.set_batch(batch)
    if state == "apprentice":
        if not window.apprentice.is_available():
            return f"no apprentice ({window.apprentice.reason()})"
        window.set_draft_k(4)
    elif state in ("tp 2", "pp 2"):
        mode = state.split()[0]
        window.set_sharding(mode, 2)
        if not wait_until(app, lambda: not window.tear.is_pending(), 60.0) or window.sharding() != (mode, 2):
            return "the book could not be torn 2 ways"
    elif state == "details" and not _details(window, True):
        return "the page has no details view yet"
    window.set_real_time(True)
    if not window.run_trips(TRIPS):
        return "the run did not start"
    start = window.reports_received
    wait_until(app, lambda: window.reports_received - start >= TRIPS or window.is_session_done(), RUN_TIMEOUT_S)
    wait_until(app, lambda: False, 0.3)
    window.clock.stop()
    window.set_real_time(False)
    if window.last_report is not None:  # the last trip half-way, as the screenshot shows it
        window.scene.show_trip(window.last_report)
        duration = float(getattr(window.scene, "trip_duration_s", 1.0))
        for _ in range(30):
            window.scene.advance(duration * 0.55 / 30)
    return None


def audit_live(app, langs, sizes, states, factor_label: str, shots, results, presenter: bool = False) -> None:
    """The Live page in each state, language and logical size, on the real engine (``presenter``: in presenter
    mode, as ``screenshot --presenter`` shows it: the presenter keys installed, every text one type step larger,
    then the Live page shown as L shows it, since presenter mode opens on the deck's first item)."""
    from PySide6.QtCore import QCoreApplication

    from gui.app import build_window
    from gui.audit.layout_audit import collect_layout
    from gui.capture.screenshot import wait_until
    factor_label += " · presenter" if presenter else ""
    for lang in langs:
        args = argparse.Namespace(model=None, draft_model=None, lang=lang, device="cpu", threads=None, batch=16)
        window = build_window(args, app)
        if presenter:
            from gui.presenter.presenter import Presenter
            Presenter(window).install(presenter_mode=True)
        window.resize(*sizes[0][:2])
        window.show()
        if presenter:
            window.presenter.show_live()  # what L does: the Live page, not the tour's first page
            QCoreApplication.processEvents()
        window.start()
        try:
            if not wait_until(app, lambda: window.engine_info is not None, 120.0):
                results.append({"screen": f"live · {lang}", "items": 0,
                                "faults": [{"kind": "error", "text": "", "detail": "the engine did not start"}]})
                continue
            for state in states:
                why = _live_state(app, window, state)
                if why is not None:
                    print(f"live {state} · {lang}: skipped ({why})", flush=True)
                    results.append({"screen": f"live {state} · {lang}", "skipped": why})
                    continue
                for w, h, label in sizes:
                    window.resize(w, h)
                    for _ in range(5):
                        QCoreApplication.processEvents()
                    for plot in (getattr(window, "trip_plot", None), getattr(window, "rate_plot", None)):
                        if plot is not None:
                            plot.redraw()
                    QCoreApplication.processEvents()
                    layout = collect_layout(window, lang)
                    _record(results, f"live {state} · {lang} · {label}{factor_label}", layout, LIVE_KINDS,
                            shots, window)
                    if (window.width(), window.height()) != (w, h):  # the page's minimum size is larger
                        results[-1]["faults"].insert(0, {"kind": "size", "text": "", "detail":
                                                         f"the window cannot be {w}x{h}: it is "
                                                         f"{window.width()}x{window.height()}"})
        finally:
            window.close()
            window.stop()
            QCoreApplication.processEvents()


# ---- the report --------------------------------------------------------------------------------------------
def write_report(results: list[dict], path: Path, command: str) -> None:
    """``results`` as Markdown: a table of fault counts by class and screen, then each screen's faults."""
    from gui.audit.layout_faults import KINDS
    screens = [r for r in results if "faults" in r]
    failing = [r for r in screens if r["faults"]]
    kinds = ["size", *KINDS] + (["error"] if any(f["kind"] == "error" for r in screens for f in r["faults"]) else [])
    lines = ["# Layout audit report", "",
             f"Made by `{command}` ({time.strftime('%Y-%m-%d %H:%M')}, `gui.audit.layout_faults`): "
             f"{len(failing)} of {len(screens)} screens have faults.", "",
             "Fault classes: floor (text under height/48), hierarchy (title > heading > body >= label, title "
             ">= 1.6 × body), cut (clipped or elided), border (text across a box's edge), break (a line break "
             "inside a number+unit, formula or token), raw (<|endoftext|>, U+FFFD, □), language (English on a zh "
             "screen, Chinese on an en one), stage (Live stage under 90 % of the width), band (an empty band "
             "over 10 % of the height on a tour page), size (the window refuses the size: its minimum is larger).",
             "", "Each screen's faults name the offending text, its role, font size and rect [x, y, w, h] in "
             "window pixels (logical pixels at scale factor 2). Rerun after a fix: `python -m gui.audit.audit_matrix "
             "--sizes 1280x720 --langs en --pages 10 --no-live` audits one screen.", "",
             "The hierarchy reads each text's role (`animations.typescale.ROLE_TIER`): \"title\", \"heading\", "
             "\"caption\" (body text), \"label\"/\"button\"/diagram names; figures and token chips stand outside it.",
             ""]
    skipped = dict.fromkeys(f"{r['screen']} ({r['skipped']})" for r in results if "skipped" in r)
    if skipped:
        lines += ["Skipped: " + "; ".join(skipped) + ".", ""]
    totals = {k: sum(1 for r in screens for f in r["faults"] if f["kind"] == k) for k in kinds}
    lines += ["## Faults by class", "", "| class | faults | screens |", "|---|---|---|"]
    for k in kinds:
        n_screens = sum(1 for r in screens if any(f["kind"] == k for f in r["faults"]))
        lines.append(f"| {k} | {totals[k]} | {n_screens} |")
    lines += ["", "## Screens", "", "| screen | texts | " + " | ".join(kinds) + " |",
              "|---|---|" + "---|" * len(kinds)]
    for r in screens:
        counts = [str(sum(1 for f in r["faults"] if f["kind"] == k) or "") for k in kinds]
        lines.append(f"| {r['screen']} | {r['items']} | " + " | ".join(counts) + " |")
    lines += ["", "## Faults per screen", ""]
    for r in failing:
        lines += [f"### {r['screen']}", ""]
        for f in r["faults"]:
            text = f["text"].replace("\n", "⏎").replace("|", "\\|").replace("`", "'")
            shown = f" `{text[:80]}`" if text else ""
            lines.append(f"- **{f['kind']}**{shown}: {f['detail']}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---- the command -------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gui.audit.audit_matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="docs/audit-report.md", metavar="FILE.md", help="the Markdown report")
    p.add_argument("--json", default=None, metavar="FILE.json", help="also every screen's faults as JSON")
    p.add_argument("--sizes", default=",".join(SIZES), help="WxH or WxH@factor, comma-separated")
    p.add_argument("--langs", default=",".join(LANGS), help="zh, en or both (comma-separated)")
    p.add_argument("--pages", default="1-18", help="tour pages, e.g. 1-18 or 6,10,12")
    p.add_argument("--live", default=",".join(LIVE_STATES), help="Live states: " + ", ".join(LIVE_STATES))
    p.add_argument("--no-tour", action="store_true", help="skip the tour")
    p.add_argument("--no-live", action="store_true", help="skip the Live page")
    p.add_argument("--illustrative", action="store_true", help="the tour without its measurement")
    p.add_argument("--presenter", action="store_true",
                   help="presenter mode (one type step larger): the tour and the Live page")
    p.add_argument("--shots", default=None, metavar="DIR", help="also save each screen as a PNG here")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one scale factor, JSON to --json
    return p


def _run_here(args, specs: list[str]) -> list[dict]:
    """The screens at ``specs`` (one scale factor, this process's)."""
    from gui.app import create_app, install_qt_message_handler
    install_qt_message_handler()
    app = create_app()
    sizes = [(*_size(s)[:2], s.partition("@")[0]) for s in specs]
    factor = _size(specs[0])[2]
    label = f" @{factor:g}" if factor != 1 else ""
    langs = [y for x in args.langs.split(",") if x for y in (LANGS if x.strip() == "both" else (x.strip(),))]
    unknown = sorted(set(langs) - set(LANGS))
    if unknown:
        raise SystemExit(f"python -m gui.audit.audit_matrix: error: --langs: {', '.join(unknown)}: use zh, en or both")
    shots = Path(args.shots) if args.shots else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    if not args.no_tour:
        audit_tour(app, langs, sizes, _pages(args.pages), label, not args.illustrative, shots, results,
                   presenter=args.presenter)
    if not args.no_live:
        states = [s.strip() for s in args.live.split(",") if s.strip()]
        audit_live(app, langs, sizes, states, label, shots, results, presenter=args.presenter)
    return results


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        specs = [s.strip() for s in args.sizes.split(",") if s.strip()]
        groups: dict[float, list[str]] = {}
        for s in specs:
            groups.setdefault(_size(s)[2], []).append(s)
        _pages(args.pages)
    except ValueError as exc:
        print(f"audit_matrix: bad --sizes or --pages ({exc})", file=sys.stderr)
        return 2
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("ONE_TRIP_CONFIG_DIR", tempfile.mkdtemp(prefix="one-trip-audit-"))  # no user settings
    if args.child:
        Path(args.json).write_text(json.dumps(_run_here(args, specs), ensure_ascii=False), encoding="utf-8")
        return 0
    results: list[dict] = []
    here = float(os.environ.get("QT_SCALE_FACTOR", "1") or 1)
    for factor, group in groups.items():
        if factor == here:
            results += _run_here(args, group)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "child.json"
            child = [sys.executable, "-m", "gui.audit.audit_matrix", "--child", "--json", str(out),
                     "--sizes", ",".join(group), "--langs", args.langs, "--pages", args.pages, "--live", args.live]
            child += [flag for flag, on in (("--no-tour", args.no_tour), ("--no-live", args.no_live),
                                            ("--illustrative", args.illustrative),
                                            ("--presenter", args.presenter)) if on]
            child += ["--shots", args.shots] if args.shots else []
            env = dict(os.environ, QT_SCALE_FACTOR=f"{factor:g}")
            code = subprocess.call(child, env=env)
            if code != 0 or not out.is_file():
                results.append({"screen": f"scale factor {factor:g}", "items": 0,
                                "faults": [{"kind": "error", "text": "", "detail": f"the child exited {code}"}]})
            else:
                results += json.loads(out.read_text(encoding="utf-8"))
    command = "python -m gui.audit.audit_matrix " + " ".join(argv if argv is not None else sys.argv[1:])
    write_report(results, Path(args.out), command.strip())
    if args.json:
        Path(args.json).write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    bad = sum(1 for r in results if r.get("faults"))
    print(f"audit_matrix: {bad} of {sum(1 for r in results if 'faults' in r)} screens with faults; "
          f"report in {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
