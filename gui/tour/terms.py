"""The words around a tour page: the caption with its glossary terms (hover, tap), the one-line explanation of
a tapped term, the line that says what the loaded model is, and the list of every term (page 17).

``TourTerms`` is mixed into ``TourWidget`` (``gui/tour/tour.py``).
"""

from __future__ import annotations

import html
import re

from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem, QToolTip

from animations.scenes.look import T
from animations.textset import set_breaks as keep_together
from gui.tour import glossary

# Pages whose scene shows what the loaded model writes: they say in one line what that model is.
MODEL_OUTPUT_PAGES = ("sampling", "decode", "streaming", "reasoning", "speculative", "questions")
TERM_COLOR = "#9fd0ff"  # underlined terms in a caption: hover for a tooltip, click or tap for the line below
NO_BREAK_HYPHEN = "\u2011"  # a term is never broken at its hyphen ("top-" / "p"); the bundled fonts have it

# a run with a slash or a root, with the number before it: "(QKᵀ/√d)·V," and "2 TB/s," are set on one line
_FORMULA = re.compile(r"(?:\d[\d,.]*[ \u00a0])?\S*[/√]\S*")


def _set_html(text: str) -> str:
    """Plain caption text as HTML: units kept with their numbers, formulas in a no-wrap span."""
    out, pos = [], 0
    for m in _FORMULA.finditer(text):
        out.append(html.escape(keep_together(text[pos:m.start()])))
        out.append(f'<span style="white-space: nowrap;">{html.escape(keep_together(m.group(0)))}</span>')
        pos = m.end()
    out.append(html.escape(keep_together(text[pos:])))
    return "".join(out)


class TourTerms:
    """Caption, terms, model line and glossary (mixed into ``TourWidget``)."""

    def _lang(self) -> str:
        from gui import i18n
        current = getattr(i18n, "current_language", None)
        lang = current() if callable(current) else self.lang
        return lang if lang in ("en", "zh") else self.lang

    def _set_caption(self, text: str) -> None:
        """The caption as rich text: every glossary term underlined, a link to its explanation."""
        self._caption_plain = text
        out, pos, seen = [], 0, set()
        for start, end, term in glossary.spans(text, self._lang()):
            if term.key in seen:
                continue  # a term is a link once per caption
            seen.add(term.key)
            out.append(_set_html(text[pos:start]))
            out.append(f'<a href="term:{term.key}" style="color:{TERM_COLOR}; text-decoration: underline;">'
                       f'{_set_html(text[start:end].replace("-", NO_BREAK_HYPHEN))}</a>')
            pos = end
        out.append(_set_html(text[pos:]))
        self.caption.setText("".join(out))
        self.term_line.hide()
        self.term_line.clear()

    def caption_terms(self) -> list[str]:
        """Keys of the glossary terms underlined in the caption shown."""
        return list(dict.fromkeys(t.key for _, _, t in glossary.spans(getattr(self, "_caption_plain", ""),
                                                                        self._lang())))

    def _term_of(self, link: str):
        return glossary.BY_KEY.get(link.split(":", 1)[-1]) if link else None

    def _on_term_hovered(self, link: str) -> None:
        term = self._term_of(link)
        if term is None:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), f"{glossary.term_name(term)}: {glossary.explanation(term)}", self.caption)

    def _on_term_tapped(self, link: str) -> None:
        """A click or tap on a term: its explanation in the line under the caption (a second tap hides it)."""
        term = self._term_of(link)
        if term is None:
            return
        text = f"{glossary.term_name(term)}: {glossary.explanation(term)}"
        if self.term_line.isVisible() and self.term_line.text() == text:
            self.term_line.hide()
            return
        self.term_line.setText(text)
        self.term_line.show()

    def explain_term(self, key: str) -> None:
        """Show the explanation of glossary term ``key`` under the caption (as a tap on it does)."""
        self._on_term_tapped(f"term:{key}")

    def _annotate_scene(self, scene) -> None:
        """Give every text of the scene that shows a glossary term a tooltip with the term's explanation."""
        lang = self._lang()
        for item in scene.items():
            if isinstance(item, QGraphicsTextItem):
                text = item.toPlainText()
            elif isinstance(item, QGraphicsSimpleTextItem):
                text = item.text()
            else:
                continue
            terms = glossary.find_terms(text, lang)
            if terms:
                item.setToolTip("\n".join(f"{glossary.term_name(t)}: {glossary.explanation(t)}" for t in terms))

    def model_sentence(self) -> str:
        """One line that says what the loaded model is and why it writes as it does (translated)."""
        params = None
        try:
            params = sum(int(getattr(v, "size", 0)) for v in self.data.weights.values()) or None
        except Exception:  # noqa: BLE001 - no weights file: the line without the count
            params = None
        name = self.data.model_dir.name.lower() if getattr(self.data, "model_dir", None) else ""
        poetry = "poem" in name or "poetry" in name
        if params:
            size = (T("{w:.0f} × 10,000").format(w=params / 1e4) if self._lang() == "zh" else
                    T("{m:.1f} million").format(m=params / 1e6))
            text = (T("The model here: a GPT-2 of {size} parameters trained only on classical Chinese poems: it "
                      "continues a poem, it does not answer.") if poetry else
                    T("The model here: a GPT-2 of {size} parameters trained only on Python's documentation: it "
                      "imitates it, it does not answer."))
            return text.format(size=size)
        return T("No model is loaded here: the words on this page are an illustration.")

    def _update_model_line(self, key: str) -> None:
        if key in MODEL_OUTPUT_PAGES and not getattr(self, "presenter", False):  # a speaker says it
            self.model_line.setText(self.model_sentence())
            self.model_line.show()
        else:
            self.model_line.hide()

    def glossary_html(self) -> str:
        """Every glossary term and its one-line explanation, in the current language, grouped by section."""
        rows = []
        for term in sorted(glossary.TERMS, key=lambda t: t.section):
            rows.append(f"<tr><td style='padding:2px 12px 2px 0; color:{TERM_COLOR}; white-space:nowrap'>"
                        f"{html.escape(glossary.term_name(term))}</td>"
                        f"<td style='padding:2px 12px 2px 0; color:#aab7c4'>§{term.section}</td>"
                        f"<td style='padding:2px 0'>{html.escape(glossary.explanation(term))}</td></tr>")
        return "<table cellspacing='0'>" + "".join(rows) + "</table>"

    def show_glossary(self, on: bool) -> None:
        """Page 17: the list of every term (on) or the metaphor table (off)."""
        if on:
            self.glossary_view.setFont(self._font(self._px("control")))
            self.glossary_view.setHtml(self.glossary_html())
            self.stage_stack.setCurrentWidget(self.glossary_view)
        else:
            self.stage_stack.setCurrentWidget(self.view)

