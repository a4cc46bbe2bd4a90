"""``python -m bench.code_view_bench``: what the code view costs the GUI thread each time a trip reaches a new stage.

A ``CodePanel`` the size of the Live page's code column at 1280x720 and 1920x1080 shows the stages of one plain
step in order, 8 rounds (the first, which reads and parses the sources and lexes the lines, is dropped); prints
the median, p90 and max of ``show_stage`` in ms. Offscreen; run it where no other job shares the cores, or say
the load (``uptime``) beside the figures.
"""

from __future__ import annotations

import os
import statistics
import time

STAGES = ["schedule", "pack", "embedding", "attention:0", "kv_write:0", "mlp:0", "attention:1", "kv_write:1",
          "mlp:1", "lm_head", "sample"]
PANELS = ((712, 532, 720), (1020, 800, 1080))  # the Live page's code column (w, h) at that window height


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from animations.fonts import register_fonts
    from gui.code_view.panel import CodePanel
    app = QApplication.instance() or QApplication([])
    family = register_fonts()
    for w, h, height in PANELS:
        panel = CodePanel()
        panel.resize(w, h)
        panel.apply_type_scale(height, False, family)
        panel.show()
        app.processEvents()
        ms = []
        for _ in range(8):
            for entry in STAGES:
                t0 = time.perf_counter()
                panel.show_stage(entry)
                ms.append((time.perf_counter() - t0) * 1000)
        ms = sorted(ms[len(STAGES):])
        print(f"{height}p code column {w}x{h}: show_stage median {statistics.median(ms):.1f} ms, "
              f"p90 {ms[int(0.9 * len(ms))]:.1f} ms, max {ms[-1]:.1f} ms (n={len(ms)})")
        panel.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
