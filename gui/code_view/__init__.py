"""The code view: the engine's own source of the stage a trip is in, read from the installed package at run time.

``panel.CodePanel`` shows one stage's function (file path, line numbers, the stage's lines highlighted) in the
type scale's "code" role, highlighted by Pygments (``highlight.PygmentsHighlighter``, a ``QSyntaxHighlighter``);
``live.LiveCode`` puts it in the Live page's details view, following the stage on screen step by step;
``tour.TourCode`` puts it on the tour pages the engine carries out. The locations come from ``model.stages``
(names and lines only: no torch in this process).
"""
