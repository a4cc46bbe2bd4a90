"""Kiosk mode (idle loop, lock, operator chord) and touch input (swipes, finger-sized targets, the touch card)."""
