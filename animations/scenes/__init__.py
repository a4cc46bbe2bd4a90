"""One QGraphicsScene per page of the tour (no torch): ``base.TourScene`` is what they share, ``look`` their sizes,
fonts and colours."""
