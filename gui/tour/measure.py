"""The tour's measurements for offscreen pictures: ``model.teaching.analysis`` kind "tour" in a spawned helper
process, so that torch never loads in this one (the window's tour asks its engine instead)."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)


def _measure_child(model_dir: str, prompt: str, draft_dir: str | None) -> dict:
    """Runs in the helper process: load the model, measure everything the tour shows."""
    from model.teaching.analysis import analyze_model_dir  # torch: only ever imported in the child
    return analyze_model_dir(model_dir, {"kind": "tour", "prompt": prompt, "analysis_id": "offline"},
                             draft_dir=draft_dir)


def _measure_entry(conn, model_dir: str, prompt: str, draft_dir: str | None) -> None:
    """The helper process's target: the measurement (or its error) sent up ``conn``. A parent that went away
    meanwhile (Ctrl+C) is not an error here: nothing is printed, the helper just ends."""
    try:
        try:
            event = _measure_child(model_dir, prompt, draft_dir)
        except Exception as exc:  # noqa: BLE001 - said by the parent, in its log
            event = {"error": f"{type(exc).__name__}: {exc}"}
        conn.send(event)
    except (BrokenPipeError, ConnectionError, EOFError, OSError):
        pass
    finally:
        conn.close()


POLL_S = 0.05  # how often the wait for the helper looks at its pipe


def measure_in_subprocess(prompt: str, model_dir: str | Path | None = None, timeout_s: float = 180.0) -> dict | None:
    """``model.teaching.analysis`` kind "tour" for ``prompt``, run in a spawned helper process (torch stays out of this
    one). Returns the data by kind, or None if the model cannot be loaded or it takes longer than ``timeout_s``.

    The wait sleeps in this file (``time.sleep``), where the record and screenshot commands' Ctrl+C handler may
    raise KeyboardInterrupt (``gui.cli._SAFE_FILES``); the helper is then ended, without a word of its own."""
    import multiprocessing as mp
    import time

    from gui.tour.data import BUNDLED_MODEL
    from model.catalog import identify  # standard library only: no torch in this process
    from model.procs import children_ignore_sigint
    model_dir = Path(model_dir) if model_dir else BUNDLED_MODEL
    bundled = identify(model_dir)
    draft = bundled.draft_path() if bundled else model_dir.parent / "draft"
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    helper = ctx.Process(target=_measure_entry, args=(send, str(model_dir), prompt,
                                                     str(draft) if draft.is_dir() else None), daemon=True)
    try:
        with children_ignore_sigint():  # Ctrl+C is this process's to handle, not the helper's
            helper.start()
        send.close()  # the helper holds the only writing end: its death reads as EOF here
        deadline = time.monotonic() + timeout_s
        while not receive.poll(0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer in {timeout_s:g} s")
            time.sleep(POLL_S)
        event = receive.recv()
    except Exception as exc:  # noqa: BLE001 - no model, a crash or a timeout: the tour shows illustrations
        log.warning("tour: measurement failed (%s: %s)", type(exc).__name__, exc)
        return None
    finally:
        receive.close()
        if helper.pid is not None:
            if helper.is_alive():
                helper.terminate()
            helper.join(5)
    if event.get("error"):
        log.warning("tour: measurement failed (%s)", event["error"])
        return None
    return event.get("data")
