"""The tokenizer: GPT-2's byte-level BPE, with streaming that never splits a character, and readable labels.

A byte-level BPE (Radford et al. 2019, section 2.2; Sennrich et al. 2016 for BPE) works on UTF-8 *bytes*, not
characters. Each token stands for a run of bytes, and the vocabulary file spells those bytes with a printable
stand-in alphabet: byte 0x20 (space) is written ``Ġ``, byte 0x0A (newline) ``Ċ``, and so on. Two consequences
shape this module:

* A Chinese character (3 UTF-8 bytes) or an emoji (4 bytes) may be split over several tokens. Decoding one
  token alone then gives half a character, which Python and Rust show as U+FFFD ``�``. :class:`StreamDecoder`
  holds such bytes back until the character is complete, so a stream never shows ``�`` for a split character,
  and the text it streams equals :meth:`Tokenizer.decode` of all the ids.
* The stand-in alphabet is an implementation detail. :meth:`Tokenizer.label` shows a token by its real bytes:
  ``␣`` for a space, ``↵`` for a newline, ``<E4 B8>`` for bytes that are not a whole character, never
  ``Ġ``, ``Ċ`` or ``�``.

The heavy lifting (BPE merges, the GPT-2 pre-tokenizer regex) is done by the Hugging Face ``tokenizers``
library; this module adds the byte view on top of it. No torch, no Qt.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import operator
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer as _HFTokenizer
from tokenizers import decoders, models, pre_tokenizers

from model.errors import ModelLoadError

__all__ = ["Tokenizer", "StreamDecoder", "truncate_left", "label_bytes", "LABEL_MARKS", "EOS_TEXT"]

EOS_TEXT = "<|endoftext|>"  # GPT-2's end-of-text token, id 50256 in the original vocabulary


# --------------------------------------------------------------------------------------------------------------
# The byte-level alphabet
# --------------------------------------------------------------------------------------------------------------
def _byte_alphabet() -> dict[int, str]:
    """Byte value (0..255) -> the printable character GPT-2's vocabulary files use for it.

    The rule, from GPT-2's ``encoder.py`` (Radford et al. 2019) and reproduced by ``tokenizers``' ByteLevel:
    bytes that are already printable, visible Latin-1 characters (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``)
    stand for themselves; the other 68 bytes (controls, space, DEL, NBSP, soft hyphen) are given the
    code points 256, 257, ... in byte order. So space (0x20) becomes U+0120 ``Ġ`` and newline (0x0A) U+010A ``Ċ``.
    """
    visible = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in visible}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_TO_CHAR = _byte_alphabet()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


# --------------------------------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------------------------------
# Visible marks for characters that would otherwise be invisible or move the text around.
_MARKS = {
    " ": "␣",  # U+2423 OPEN BOX
    "\n": "↵",  # U+21B5
    "\r": "␍",  # U+240D SYMBOL FOR CARRIAGE RETURN
    "\t": "⇥",  # U+21E5
    "\x00": "␀",  # U+2400 SYMBOL FOR NULL
    "\x1b": "␛",  # U+241B SYMBOL FOR ESCAPE
    "\u200b": "⟨ZWSP⟩",  # zero-width space
    "\u200c": "⟨ZWNJ⟩",  # zero-width non-joiner
    "\u200d": "⟨ZWJ⟩",  # zero-width joiner (glues emoji sequences)
    "\u2060": "⟨WJ⟩",  # word joiner
    "\ufeff": "⟨BOM⟩",  # zero-width no-break space / byte-order mark
    "\u00a0": "⟨NBSP⟩",  # no-break space
    "\u00ad": "⟨SHY⟩",  # soft hyphen
    "\ufffd": "⟨U+FFFD⟩",  # a real replacement character in the text, not a decoding failure
}

LABEL_MARKS: frozenset[str] = frozenset("".join(_MARKS.values()) + "⟨⟩<>?U+0123456789ABCDEFVSid ")
"""Every character :meth:`Tokenizer.label` may add to a label; a font subset for the GUI must cover them."""


def _label_char(ch: str) -> str:
    mark = _MARKS.get(ch)
    if mark is not None:
        return mark
    cp = ord(ch)
    if 0xFE00 <= cp <= 0xFE0F:  # variation selectors: U+FE0F turns ❤ into the emoji ❤️
        return f"⟨VS{cp - 0xFE00 + 1}⟩"
    # Controls (Cc), format characters such as bidi overrides (Cf), line/paragraph separators (Zl, Zp) and
    # spaces other than U+0020 (Zs) are invisible or reorder text: show their code point.
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"):
        return f"⟨U+{cp:04X}⟩"
    return ch


def label_bytes(raw: bytes) -> str:
    """Readable label of any run of bytes (a token, or :attr:`StreamDecoder.pending_bytes`) as ``str``.

    Valid UTF-8 is shown as text with visible marks for invisible characters (see :meth:`Tokenizer.label`);
    bytes that are not part of a complete character are shown in hex, e.g. ``b" \\xe4\\xb8"`` -> ``"␣<E4 B8>"``.
    """
    if not raw:
        return "⟨empty⟩"
    # surrogateescape maps each byte that is not part of valid UTF-8 to U+DC80..U+DCFF, one per byte.
    text = raw.decode("utf-8", errors="surrogateescape")
    out: list[str] = []
    pending: list[str] = []
    for ch in text:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:
            pending.append(f"{cp - 0xDC00:02X}")
            continue
        if pending:
            out.append("<" + " ".join(pending) + ">")
            pending = []
        out.append(_label_char(ch))
    if pending:
        out.append("<" + " ".join(pending) + ">")
    return "".join(out)


# --------------------------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------------------------
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: every lone surrogate becomes U+FFFD ``\ufffd``.

    Bytes that were not UTF-8 reach Python as surrogates (``sys.argv`` and ``os.environ`` use the
    ``surrogateescape`` handler: ``b"caf\\xff"`` arrives as ``"caf\\udcff"``); they are put back as bytes and
    decoded with ``errors="replace"``, so one maximal invalid subpart gives one U+FFFD, exactly as
    ``bytes.decode("utf-8", "replace")`` would have. Other lone surrogates (``"a\\ud800b"``) become one U+FFFD
    each. Text without surrogates is returned unchanged (the same object).
    """
    if not _SURROGATE.search(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate surrogateescape did not make (not \udc80..\udcff)
        return _SURROGATE.sub("\ufffd", text)


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return msg[:200] or type(exc).__name__


def _as_id(token_id: object) -> int:
    """A token id as a Python int (numpy and 0-d torch integers accepted); ValueError if negative or not one."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        try:
            token_id = operator.index(token_id)  # type: ignore[arg-type]
        except TypeError:
            raise ValueError(f"token id must be an integer, got {token_id!r}") from None
    if token_id < 0:
        raise ValueError(f"token id {token_id} is negative")
    return token_id


class Tokenizer:
    """A byte-level BPE tokenizer (GPT-2 style) with a byte-exact view of every token.

    Build it with :meth:`from_dir` (a Hugging Face GPT-2 directory) or from a ``tokenizers.Tokenizer``.
    Token ids are Python ``int`` in ``[0, vocab_size)``.

    Args:
        hf: a loaded ``tokenizers.Tokenizer``. Its decoder should be ByteLevel; tokens whose characters are
            not all in the byte-level alphabet are taken as their UTF-8 text (as the ByteLevel decoder does).
    """

    def __init__(self, hf: _HFTokenizer):
        self._hf = hf
        self._hf.encode_special_tokens = True  # plain text: "<|endoftext|>" typed by a visitor is just text
        self._hf_special: _HFTokenizer | None = None  # lazily built copy that parses special tokens
        vocab = hf.get_vocab(with_added_tokens=True)  # token string -> id
        self._vocab_size = max(vocab.values()) + 1 if vocab else 0
        self._special_ids = frozenset(i for i, t in hf.get_added_tokens_decoder().items() if t.special)
        eos = vocab.get(EOS_TEXT)
        self._eos_token_id: int | None = eos
        self._bytes: list[bytes] | None = None  # id -> bytes, built on first use
        self._labels: dict[int, str] = {}  # id -> display label, filled as labels are asked for
        self._fingerprint: str | None = None

    # ---- loading ---------------------------------------------------------------------------------------------
    @classmethod
    def from_dir(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Load ``tokenizer.json``, or else ``vocab.json`` + ``merges.txt``, from a Hugging Face GPT-2 directory.

        ``tokenizer.json`` wins when both forms are present. From ``vocab.json`` + ``merges.txt`` the tokenizer
        is assembled as GPT-2's: BPE model, ByteLevel pre-tokenizer (``add_prefix_space=False``, GPT-2 regex),
        ByteLevel decoder, and ``<|endoftext|>`` registered as a special token when the vocabulary has it.

        Raises:
            ModelLoadError: the directory or a file is missing, unreadable or corrupt; the one-line message
                names the file.
        """
        d = Path(path)
        if not d.is_dir():
            raise ModelLoadError(f"tokenizer directory not found: {d}")
        tj = d / "tokenizer.json"
        vj, mt = d / "vocab.json", d / "merges.txt"
        if tj.is_file():
            try:
                hf = _HFTokenizer.from_file(str(tj))
            except Exception as exc:  # the Rust side raises plain Exception with a multi-line message
                raise ModelLoadError(f"corrupt tokenizer file {tj}: {_one_line(exc)}") from None
        elif vj.is_file() or mt.is_file():
            for f in (vj, mt):
                if not f.is_file():
                    raise ModelLoadError(f"tokenizer file missing: {f} (vocab.json and merges.txt go together)")
            try:
                bpe = models.BPE.from_file(str(vj), str(mt))
            except Exception as exc:
                raise ModelLoadError(f"corrupt tokenizer files {vj} / {mt}: {_one_line(exc)}") from None
            hf = _HFTokenizer(bpe)
            hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            hf.decoder = decoders.ByteLevel()
            if hf.token_to_id(EOS_TEXT) is not None:
                hf.add_special_tokens([EOS_TEXT])  # already in the vocabulary: keeps its id
        else:
            raise ModelLoadError(f"no tokenizer in {d}: expected tokenizer.json, or vocab.json and merges.txt")
        tok = cls(hf)
        if tok.vocab_size == 0:
            raise ModelLoadError(f"empty tokenizer vocabulary in {d}")
        return tok

    # ---- sizes and special ids ------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of token ids including added tokens: the highest id plus one (50,257 for GPT-2)."""
        return self._vocab_size

    @property
    def eos_token_id(self) -> int | None:
        """Id of ``<|endoftext|>`` (50,256 for GPT-2), or None when the vocabulary has no such token."""
        return self._eos_token_id

    def set_eos_token_id(self, token_id: int | None) -> None:
        """Make ``token_id`` the end-of-text id (the model's config.json decides it, as in transformers)."""
        self._eos_token_id = None if token_id is None else _as_id(token_id)

    def is_special(self, token_id: int) -> bool:
        """True for added special tokens such as ``<|endoftext|>``."""
        return token_id in self._special_ids

    # ---- encode / decode ------------------------------------------------------------------------------------
    def encode(self, text: str, *, allow_special: bool = False) -> list[int]:
        """Text -> token ids (``list[int]``). No BOS/EOS is added.

        Args:
            text: any ``str``; every Unicode string round-trips (the byte-level alphabet covers all 256 bytes).
                Lone surrogates, which are not encodable as UTF-8, are replaced by U+FFFD first (``valid_text``).
            allow_special: when False (default) the text ``<|endoftext|>`` is encoded as ordinary characters,
                so a typed prompt cannot end a sequence; when True it becomes the special token's id.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode() takes str, not {type(text).__name__}")
        text = valid_text(text)
        hf = self._hf
        if allow_special:
            if self._hf_special is None:
                self._hf_special = _HFTokenizer.from_str(self._hf.to_str())
                self._hf_special.encode_special_tokens = False
            hf = self._hf_special
        return list(hf.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Iterable[int], *, skip_special: bool = False) -> str:
        """Token ids -> text: the tokens' bytes joined and read as UTF-8.

        Bytes that do not form valid UTF-8 (a sequence cut off mid-character) are shown as U+FFFD, one per
        maximal invalid subpart, as Python's ``errors="replace"`` does; this equals Hugging Face's ByteLevel
        decoder on byte-level vocabularies. :class:`StreamDecoder` streams exactly this text.

        Raises:
            ValueError: a negative id (ids past the vocabulary stand for no bytes, see :meth:`token_bytes`).
        """
        return b"".join(self.piece(i, skip_special) for i in ids).decode("utf-8", errors="replace")

    def piece(self, token_id: int, skip_special: bool = False) -> bytes:
        """The bytes ``decode`` writes for one id: its ``token_bytes``, or none for a special token with
        ``skip_special``.

        Raises:
            ValueError: a negative id.
        """
        token_id = _as_id(token_id)
        if skip_special and token_id in self._special_ids:
            return b""
        return self.token_bytes(token_id)

    # ---- the byte view --------------------------------------------------------------------------------------
    def _table(self) -> list[bytes]:
        if self._bytes is None:
            table = [b""] * self._vocab_size
            for i in range(self._vocab_size):
                tok = self._hf.id_to_token(i)
                if tok is None:  # a hole in a non-contiguous vocabulary
                    continue
                if i in self._special_ids:
                    table[i] = tok.encode("utf-8")
                    continue
                try:
                    table[i] = bytes(_CHAR_TO_BYTE[c] for c in tok)
                except KeyError:  # not spelled in the byte alphabet: the ByteLevel decoder takes it as text
                    table[i] = tok.encode("utf-8")
            self._bytes = table
        return self._bytes

    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes a token stands for (``bytes``; e.g. GPT-2 id 220 -> ``b" "``, a special token -> its
        UTF-8 text).

        An id at or past ``vocab_size`` (a model whose embedding is padded past its tokenizer, as nanoGPT pads
        50,257 to 50,304) stands for no bytes, as in Hugging Face's decoder, which skips unknown ids.

        Raises:
            ValueError: a negative id or one that is not an integer.
        """
        token_id = _as_id(token_id)
        if token_id >= self._vocab_size:
            return b""
        return self._table()[token_id]

    def label(self, token_id: int) -> str:
        """A readable label for display, built from the token's bytes.

        Space -> ``␣``, newline -> ``↵``, CR -> ``␍``, tab -> ``⇥``, NUL -> ``␀``, ESC -> ``␛``, zero-width
        characters -> ``⟨ZWSP⟩`` / ``⟨ZWNJ⟩`` / ``⟨ZWJ⟩`` / ``⟨WJ⟩`` / ``⟨BOM⟩``, other controls and invisible
        characters -> ``⟨U+XXXX⟩``, bytes that are not complete UTF-8 -> hex like ``<E4 B8>`` (a token can mix
        both: ``␣<E4>``). Special tokens are shown as their text (``<|endoftext|>``), an id past the vocabulary
        as ``⟨id 50300?⟩``. Never contains the byte-alphabet stand-ins ``Ġ``/``Ċ`` or U+FFFD.

        Raises:
            ValueError: a negative id.
        """
        token_id = _as_id(token_id)
        cached = self._labels.get(token_id)
        if cached is not None:  # the engine labels every step's top-5: build each label once
            return cached
        raw = self.token_bytes(token_id)
        if token_id >= self._vocab_size:
            return f"⟨id {token_id}?⟩"  # no such token in this tokenizer
        if token_id in self._special_ids:
            label = raw.decode("utf-8", errors="replace")
        else:
            label = label_bytes(raw)
        self._labels[token_id] = label
        return label

    def _canon(self) -> dict:
        """The parts that decide the ids: model type, vocabulary, merges and added tokens (plain JSON data)."""
        spec = json.loads(self._hf.to_str())
        model = spec.get("model", {})
        merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in model.get("merges", [])]
        added = sorted(
            (a["id"], a["content"], bool(a.get("special", False))) for a in spec.get("added_tokens", [])
        )
        return {
            "type": model.get("type"),
            "vocab": sorted(model.get("vocab", {}).items(), key=lambda kv: kv[1]),
            "merges": merges,
            "added": added,
        }

    def difference(self, other: Tokenizer) -> str | None:
        """None when ``other`` maps text to the same ids; else the first part that differs, one of "model type",
        "vocabulary", "merges", "special tokens" (the names ``set_draft``'s error uses)."""
        if self.fingerprint() == other.fingerprint():
            return None
        a, b = self._canon(), other._canon()
        for key, name in (("type", "model type"), ("vocab", "vocabulary"), ("merges", "merges"),
                          ("added", "special tokens")):
            if a[key] != b[key]:
                return name
        return "vocabulary"  # equal parts cannot give unequal digests; kept for safety

    def fingerprint(self) -> str:
        """A SHA-256 hex digest of the vocabulary, merges and added tokens (``str``, 64 hex digits).

        Two tokenizers with equal fingerprints map text to the same ids, whichever files they were loaded
        from (``tokenizer.json`` or ``vocab.json`` + ``merges.txt``); a draft model whose tokenizer has another
        fingerprint cannot be verified against the main model.
        """
        if self._fingerprint is None:
            canon = self._canon()
            blob = json.dumps(canon, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self._fingerprint = hashlib.sha256(blob).hexdigest()
        return self._fingerprint

    def __repr__(self) -> str:
        return f"Tokenizer(vocab_size={self._vocab_size}, eos_token_id={self._eos_token_id})"


# --------------------------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------------------------
class StreamDecoder:
    """Turns token ids, fed one at a time, into printable text deltas.

    The bytes of a character split over tokens are held back until the character is complete, so a delta
    never contains U+FFFD for a split character. Invariant, for any ids:
    ``"".join(push(i) for i in ids) + flush() == tokenizer.decode(ids)``.

    A byte that can never start or continue a valid character (possible when a model samples freely) is
    shown as U+FFFD at once, exactly where :meth:`Tokenizer.decode` shows it, so the stream does not stall;
    bytes still waiting for their character at the end are replaced only by :meth:`flush`.

    Args:
        tokenizer: the :class:`Tokenizer` whose ids will be pushed.
        skip_special: leave special tokens (``<|endoftext|>``) out of the text, as ``decode(skip_special=True)``.
    """

    def __init__(self, tokenizer: Tokenizer, *, skip_special: bool = False):
        self._tok = tokenizer
        self._skip_special = skip_special
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        """Feed one token id; return the text that became printable (possibly ``""``).

        Raises:
            ValueError: a negative id.
        """
        return self._dec.decode(self._tok.piece(token_id, self._skip_special))

    def flush(self) -> str:
        """End of stream: return what is left; incomplete bytes become U+FFFD here and only here. Resets."""
        out = self._dec.decode(b"", final=True)
        self._dec.reset()
        return out

    @property
    def pending_bytes(self) -> bytes:
        """Bytes held back, waiting for the rest of their character (``b""`` when none), e.g. ``b"\\xe4\\xb8"``."""
        return self._dec.getstate()[0]


def truncate_left(ids: Sequence[int], max_len: int) -> tuple[list[int], int]:
    """Keep the last ``max_len`` ids: returns ``(kept_ids, n_dropped)``.

    Used to fit a prompt into the context window (``n_positions``), keeping its end, which the next token
    depends on most.

    Raises:
        ValueError: ``max_len`` is negative.
    """
    if max_len < 0:
        raise ValueError(f"max_len must be >= 0, got {max_len}")
    ids = list(ids)
    n_dropped = max(0, len(ids) - max_len)
    return ids[n_dropped:], n_dropped
