"""``python main.py screenshot ...``: the command line of the screenshot command (see ``gui.screenshot``)."""

from __future__ import annotations

import argparse


def build_screenshot_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="main.py screenshot",
                                description="Run N real trips offscreen and save the window as a PNG.")
    p.add_argument("--out", required=True, metavar="FILE.png", help="where to write the PNG")
    p.add_argument("--prompt", default=None, metavar="TEXT", help="the prompt (default: a preset)")
    p.add_argument("--steps", type=int, default=8, metavar="N", help="real trips (forward passes) to run")
    p.add_argument("--batch", type=int, default=1, metavar="N", help="seats sharing the table, 1-16")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p.add_argument("--size", default="1920x1080", metavar="WxH", help="window size in pixels")
    p.add_argument("--model", default=None, metavar="DIR", help="a GPT-2 directory (default: the bundled model)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--threads", type=int, default=None, metavar="N")
    return p


def screenshot_main(argv: list[str]) -> int:
    """Parse ``argv`` and run the screenshot command. Returns the exit status."""
    args = build_screenshot_parser().parse_args(argv)
    from gui.screenshot import screenshot_main as run
    return run(args)
