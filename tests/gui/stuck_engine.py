"""An engine that ignores every command (for the bridge's terminate path)."""

import time


def engine_main(commands, events, options):
    while True:
        time.sleep(1)
