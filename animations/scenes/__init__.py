"""One QGraphicsScene per page of the tour (no torch): see ``base.py`` for what they share."""
