"""``python main.py screenshot ...``: the command line of the screenshot command (see ``gui.screenshot``).

    python main.py screenshot --out FILE.png [--prompt TEXT] [--steps N] [--batch N] [--lang zh|en] [--size WxH]
                              [--draft-k K] [--tp N | --pp N] [--layout-json F] the live window after N real trips
    python main.py screenshot --section N --lang zh|en --out FILE.png  tour page N (1-18), offscreen
"""

from __future__ import annotations

import argparse
import sys


def build_screenshot_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="main.py screenshot",
                                description="Run N real trips offscreen and save the window as a PNG, or "
                                            "render one page of the tour (--section).")
    p.add_argument("--out", required=True, metavar="FILE.png", help="where to write the PNG")
    p.add_argument("--prompt", default=None, metavar="TEXT", help="the prompt (default: a preset)")
    p.add_argument("--steps", type=int, default=8, metavar="N", help="real trips (forward passes) to run")
    p.add_argument("--batch", type=int, default=1, metavar="N", help="seats sharing the table, 1-16")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p.add_argument("--size", default="1920x1080", metavar="WxH", help="window size in pixels")
    p.add_argument("--model", default=None, metavar="DIR", help="a GPT-2 directory (default: the bundled model)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--threads", type=int, default=None, metavar="N")
    p.add_argument("--section", type=int, default=None, metavar="N",
                   help="render tour page N instead (1-15 the sections, 16 the game, 17 the metaphor table, "
                        "18 the three questions)")
    p.add_argument("--illustrative", action="store_true",
                   help="with --section: skip the live measurement on the bundled model")
    p.add_argument("--draft-k", type=int, default=0, metavar="K", help="apprentice guesses per trip, 0-8")
    p.add_argument("--draft-model", default=None, metavar="DIR", help="the draft model (default: the bundled one)")
    tear = p.add_mutually_exclusive_group()
    tear.add_argument("--tp", type=int, default=None, metavar="N", help="tear the book by pages over N desks")
    tear.add_argument("--pp", type=int, default=None, metavar="N", help="tear the book by chapters over N desks")
    p.add_argument("--at", type=float, default=None, metavar="F",
                   help="show the last trip at this fraction of its animation (default 0.55; 0.77 for a verify trip)")
    p.add_argument("--layout-json", default=None, metavar="FILE.json",
                   help="also write every visible text (rect, font px, clipped, role) as JSON (gui.layout_audit)")
    p.add_argument("--presenter", action="store_true", help="presenter mode: one type step larger, fewer buttons")
    return p


def screenshot_main(argv: list[str]) -> int:
    """Parse ``argv`` and run the screenshot command. Returns the exit status."""
    args = build_screenshot_parser().parse_args(argv)
    from gui.screenshot import check_out_path, parse_size
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"screenshot: {exc}", file=sys.stderr)
        return 2
    if (reason := check_out_path(args.out)) is not None:  # before the engine starts, not after the run
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    if args.section is not None:
        from gui.tour import render_section_png
        code = render_section_png(args.section, args.lang, args.out, size=size, live=not args.illustrative,
                                  prompt=args.prompt, layout_json=args.layout_json)
        if code == 0:
            print(f"screenshot: {args.out} ({size[0]}x{size[1]}, tour page {args.section}, {args.lang})")
        return code
    from gui.screenshot import screenshot_main as run
    return run(args)
