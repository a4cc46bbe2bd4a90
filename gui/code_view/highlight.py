"""Python syntax colours from Pygments in a ``QSyntaxHighlighter`` (the shape of napari's
``_qt/code_syntax_highlight.py``): Pygments' Python lexer cuts each line into tokens, a Pygments style gives each
token type its colour, and Qt paints them.

Each block (one source line) is lexed on its own, as napari does: a string that spans lines (a docstring) is
coloured line by line as code; the code view shows function bodies, where that is rare.
"""

from __future__ import annotations

from functools import cache, lru_cache

from pygments.lexers import PythonLexer
from pygments.styles import get_style_by_name
from pygments.token import Token
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

STYLE = "github-dark"  # light text on a dark ground, as the app's pages are
BACKGROUND = "#0d1117"  # the style's own ground
FOREGROUND = "#e6edf3"


@cache
def _formats(style_name: str) -> dict:
    style = get_style_by_name(style_name)
    out = {}
    for token, spec in style:
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor("#" + spec["color"]))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        out[token] = fmt
    return out


def format_for(token, style_name: str = STYLE) -> QTextCharFormat | None:
    """The format of ``token``'s type, or of its nearest parent type that the style colours."""
    formats = _formats(style_name)
    t = token
    while t is not None:
        fmt = formats.get(t)
        if fmt is not None and fmt.foreground().style() != 0:
            return fmt
        t = t.parent
    return None


class PygmentsHighlighter(QSyntaxHighlighter):
    """Colours a document of Python source with Pygments (``STYLE``)."""

    def __init__(self, document, style_name: str = STYLE):
        super().__init__(document)
        self._style = style_name

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        for pos, n, fmt in _spans(text, self._style):
            self.setFormat(pos, n, fmt)


_LEXER = PythonLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=4096)
def _spans(text: str, style_name: str) -> tuple:
    """(start, length, format) of each coloured token of one line: a line is lexed once per run, however often
    the code view shows it again."""
    out, pos = [], 0
    for token, value in _LEXER.get_tokens(text):
        n = len(value)
        if n and token is not Token.Text:
            fmt = format_for(token, style_name)
            if fmt is not None:
                out.append((pos, n, fmt))
        pos += n
    return tuple(out)
