"""Tokenizer: round trips, streaming without U+FFFD, readable labels, loading errors.

The tokenizer under test is a small byte-level BPE trained here on text with English, code, Chinese and emoji,
so Chinese characters and emoji are split over several tokens, as under GPT-2's vocabulary.
"""

from __future__ import annotations

import json
import random

import pytest
from tokenizers import ByteLevelBPETokenizer

from model.errors import ModelLoadError
from model.tokenizer import EOS_TEXT, LABEL_MARKS, StreamDecoder, Tokenizer, label_bytes, truncate_left

CORPUS = [
    "The quick brown fox jumps over the lazy dog. One trip, one token.\n",
    "def forward(self, x):\n\treturn self.c_proj(self.c_attn(x))  # (B, T, C)\r\n",
    "for i in range(10):\n    print(i, end=' ')\n",
    "每按一下，就是把书搬一趟。先照常写完一句，再试试带上小徒弟、拉几个人拼桌。\n",
    "KV 缓存 = 2 × 层数 × KV 头数 × 每头维度 × 长度 × 批大小 × 字节数。\n",
    "Emoji: 😀 🚀 👩‍💻 ❤️ 🇨🇳 and more 😀😀\n",
] * 4

HARD_TEXTS = [
    "Hello world",
    "line one\r\nline two\r\n\ttabbed\n",
    "nul\x00byte and \x1b[31mred\x1b[0m escape",
    "zero\u200bwidth\u200c joiner\u200d word\u2060joiner \ufeffbom",
    "😀🚀👩‍💻❤️🇨🇳 emoji",
    "一趟一个字：生僻字 龘 靐 齉 和常用字",
    "mixed 中文 English 😀 code `x = f(y)` \u00a0nbsp\u00ad",
    "<|endoftext|> typed as text",
    "",
    " ",
    "   leading and trailing spaces   ",
    "\U0001f9d1\u200d\U0001f33e 🧑‍🌾 ZWJ sequence",
    "right-to-left \u202eoverride\u202c and \u0301 combining",
]


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory):
    """A directory with tokenizer.json, and a second with vocab.json + merges.txt, of one trained BPE."""
    bpe = ByteLevelBPETokenizer()  # GPT-2 settings: byte-level alphabet, add_prefix_space=False
    bpe.train_from_iterator(
        CORPUS, vocab_size=420, min_frequency=2, special_tokens=[EOS_TEXT], show_progress=False
    )
    d_json = tmp_path_factory.mktemp("tok_json")
    bpe.save(str(d_json / "tokenizer.json"))
    d_files = tmp_path_factory.mktemp("tok_files")
    bpe.save_model(str(d_files))  # vocab.json + merges.txt
    return d_json, d_files


@pytest.fixture(scope="module")
def tok(tok_dir):
    return Tokenizer.from_dir(tok_dir[0])


def test_loads_and_reports_sizes(tok):
    assert tok.vocab_size > 256  # the 256 byte tokens, the special token and some merges
    assert tok.eos_token_id is not None
    assert tok.is_special(tok.eos_token_id)
    assert tok.label(tok.eos_token_id) == EOS_TEXT
    assert tok.token_bytes(tok.eos_token_id) == EOS_TEXT.encode()


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_round_trip(tok, text):
    ids = tok.encode(text)
    assert all(isinstance(i, int) and 0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text
    # Our decode (bytes joined, read as UTF-8) equals the library's ByteLevel decoder.
    assert tok._hf.decode(ids, skip_special_tokens=False) == text
    assert b"".join(tok.token_bytes(i) for i in ids) == text.encode("utf-8")


def test_typed_special_text_is_plain_unless_allowed(tok):
    plain = tok.encode(EOS_TEXT)
    assert tok.eos_token_id not in plain and len(plain) > 1
    assert tok.encode("a" + EOS_TEXT, allow_special=True)[-1] == tok.eos_token_id
    assert tok.decode(tok.encode("a" + EOS_TEXT, allow_special=True)) == "a" + EOS_TEXT
    assert tok.decode([tok.eos_token_id], skip_special=True) == ""


def test_cjk_and_emoji_are_split_into_byte_pieces(tok):
    """The premise of the streaming test: some tokens hold partial characters."""
    ids = tok.encode("龘😀")
    assert any(_not_utf8(tok.token_bytes(i)) for i in ids)


def _not_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def _stream(tok, ids, **kw):
    sd = StreamDecoder(tok, **kw)
    deltas = [sd.push(i) for i in ids]
    return deltas, sd.flush()


@pytest.mark.parametrize("text", HARD_TEXTS + ["".join(CORPUS)])
def test_stream_never_shows_replacement_and_joins_to_decode(tok, text):
    ids = tok.encode(text)
    deltas, tail = _stream(tok, ids)
    assert all("\ufffd" not in d for d in deltas)
    assert "".join(deltas) + tail == tok.decode(ids) == text
    assert tail == ""


def test_stream_holds_split_character_until_complete(tok):
    ids = tok.encode("龘")
    assert len(ids) > 1, "a rare CJK character is several byte tokens in this small vocabulary"
    sd = StreamDecoder(tok)
    for i in ids[:-1]:
        assert sd.push(i) == ""
    assert sd.pending_bytes and "龘".encode().startswith(sd.pending_bytes)
    assert sd.push(ids[-1]) == "龘"
    assert sd.pending_bytes == b""


def test_stream_invariant_on_random_ids(tok):
    """Any id sequence, even one no text encodes to (as a model sampling freely may produce)."""
    rng = random.Random(0)
    for _ in range(200):
        ids = [rng.randrange(tok.vocab_size) for _ in range(rng.randrange(1, 12))]
        deltas, tail = _stream(tok, ids)
        assert "".join(deltas) + tail == tok.decode(ids)
        assert "".join(deltas) + tail == tok._hf.decode(ids, skip_special_tokens=False)
        deltas, tail = _stream(tok, ids, skip_special=True)
        assert "".join(deltas) + tail == tok.decode(ids, skip_special=True)


def test_stream_flush_replaces_leftover_only_at_end(tok):
    ids = tok.encode("😀")[:-1]  # a cut-off emoji
    sd = StreamDecoder(tok)
    assert "".join(sd.push(i) for i in ids) == ""
    assert sd.flush() == "\ufffd" == tok.decode(ids)
    assert sd.push(tok.encode("a")[0]) == "a"  # flush resets the decoder


def test_labels_are_readable(tok):
    for i in range(tok.vocab_size):
        lab = tok.label(i)
        assert lab and not set(lab) & set("ĠĊ\ufffd"), (i, lab)


@pytest.mark.parametrize(
    "text,expected",
    [
        (" ", "␣"),
        ("\n", "↵"),
        ("\t", "⇥"),
        ("\r", "␍"),
        ("\x00", "␀"),
        ("\x1b", "␛"),
        ("\u200b", "⟨ZWSP⟩"),
        ("\u200c", "⟨ZWNJ⟩"),
        ("\u200d", "⟨ZWJ⟩"),
        ("\ufeff", "⟨BOM⟩"),
        ("\u2060", "⟨WJ⟩"),
        ("\x07", "⟨U+0007⟩"),
        ("\u202e", "⟨U+202E⟩"),
        ("\ufffd", "⟨U+FFFD⟩"),
    ],
)
def test_label_marks(tok, text, expected):
    assert label_bytes(text.encode("utf-8")) == expected
    ids = tok.encode(text)
    if len(ids) == 1:  # a whole-character token gets the same label
        assert tok.label(ids[0]) == expected
    else:  # split into byte pieces: each shown as hex, never as U+FFFD
        assert all(tok.label(i).startswith("<") for i in ids)
    assert set(expected) <= LABEL_MARKS | set("ZWSPNJBOMU")


def test_label_partial_bytes_as_hex(tok):
    ids = tok.encode("龘")
    labels = [tok.label(i) for i in ids]
    hexes = " ".join(x.strip("<>") for x in labels)
    assert hexes == "E9 BE 98"  # 龘 is U+9F98, UTF-8 E9 BE 98
    assert all(x.startswith("<") and x.endswith(">") for x in labels)


def test_label_mixed_text_and_partial_bytes():
    assert label_bytes(b" \xe4\xb8") == "␣<E4 B8>"
    assert label_bytes(" 中文".encode()) == "␣中文"
    assert label_bytes(b"\xb8\xadx\xff") == "<B8 AD>x<FF>"


def test_bad_and_padded_ids(tok):
    for bad in (-1, "3", 2.0, None):
        with pytest.raises(ValueError):
            tok.token_bytes(bad)
    with pytest.raises(ValueError):
        StreamDecoder(tok).push(-1)
    # An id past the tokenizer (a model with a padded embedding) stands for no bytes, as HF's decoder skips it.
    past = tok.vocab_size + 3
    assert tok.token_bytes(past) == b""
    assert tok.label(past) == f"⟨id {past}?⟩"
    ids = tok.encode("a b") + [past]
    assert tok.decode(ids) == "a b" == tok._hf.decode(ids, skip_special_tokens=False)
    deltas, tail = _stream(tok, ids)
    assert "".join(deltas) + tail == "a b"


def test_numpy_and_torch_integer_ids(tok):
    np = pytest.importorskip("numpy")
    ids = tok.encode("中文 ok")
    assert tok.decode(np.array(ids)) == "中文 ok"
    torch = pytest.importorskip("torch")
    assert tok.decode(torch.tensor(ids).tolist()) == "中文 ok"
    assert tok.token_bytes(torch.tensor(ids[0])) == tok.token_bytes(ids[0])


def test_vocab_merges_files_load_same_tokenizer(tok, tok_dir):
    tok2 = Tokenizer.from_dir(tok_dir[1])
    assert tok2.vocab_size == tok.vocab_size
    assert tok2.eos_token_id == tok.eos_token_id and tok2.is_special(tok2.eos_token_id)
    for text in HARD_TEXTS:
        assert tok2.encode(text) == tok.encode(text)
        assert tok2.decode(tok2.encode(text)) == text
    assert tok2.fingerprint() == tok.fingerprint()


def test_fingerprint_differs_for_another_vocabulary(tok, tmp_path):
    other = ByteLevelBPETokenizer()
    other.train_from_iterator(CORPUS[:2], vocab_size=300, min_frequency=2, special_tokens=[EOS_TEXT],
                              show_progress=False)
    other.save(str(tmp_path / "tokenizer.json"))
    fp = Tokenizer.from_dir(tmp_path).fingerprint()
    assert len(fp) == 64 and fp != tok.fingerprint()


def test_missing_dir_raises_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="not found"):
        Tokenizer.from_dir(tmp_path / "nope")
    with pytest.raises(ModelLoadError, match="no tokenizer"):
        Tokenizer.from_dir(tmp_path)


def test_corrupt_files_raise_model_load_error(tmp_path, tok_dir):
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": {', encoding="utf-8")
    with pytest.raises(ModelLoadError, match="tokenizer.json") as info:
        Tokenizer.from_dir(tmp_path)
    assert "\n" not in str(info.value)

    d = tmp_path / "half"
    d.mkdir()
    (d / "vocab.json").write_bytes((tok_dir[1] / "vocab.json").read_bytes())
    with pytest.raises(ModelLoadError, match="merges.txt"):
        Tokenizer.from_dir(d)

    (d / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    (d / "vocab.json").write_text(json.dumps(["not", "a", "dict"]), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="vocab.json"):
        Tokenizer.from_dir(d)


def test_long_prompt_encodes_quickly(tok):
    import time

    text = ("一趟一个字 one trip 😀\n" * 12000)[:200_000]
    t0 = time.perf_counter()
    ids = tok.encode(text)
    assert time.perf_counter() - t0 < 10
    kept, dropped = truncate_left(ids, 1024)
    assert len(kept) == 1024 and dropped == len(ids) - 1024 and kept == ids[-1024:]


def test_truncate_left():
    assert truncate_left([1, 2, 3], 5) == ([1, 2, 3], 0)
    assert truncate_left([1, 2, 3], 2) == ([2, 3], 1)
    assert truncate_left([1, 2, 3], 0) == ([], 3)
    assert truncate_left((), 4) == ([], 0)
    with pytest.raises(ValueError):
        truncate_left([1], -1)
