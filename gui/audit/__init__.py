"""The layout audit: every visible text and control of a screen, the faults found in them, the report over all
screens."""
