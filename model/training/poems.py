"""Build the corpus and tokenizer of the bundled Chinese poetry model (``assets/models/poems``), at training time only.

Source: the ``chinese-poetry`` package on the npm registry, version 2.0.1 (MIT licence), folder
``dist/quantangshi``: the Tang and Song *shi* (``poet.tang.*.json``, ``poet.song.*.json``; about 312,000 poems,
19M characters, in traditional characters). ``npm pack chinese-poetry@2.0.1`` fetches the tarball into a cache
folder once; its SHA-512 must equal :data:`NPM_SHA512` (the registry's ``integrity``) or nothing is built. The
app itself never needs npm or the network: it reads the trained model from ``assets/``.

Recipe:
    * every poem is converted to Simplified characters with OpenCC (``t2s``; PyPI ``opencc``);
    * only *regular* poems are kept: every line (split on ，。！？；) has the same length, 5 or 7 characters, and
      the poem has an even number of lines (couplets). That is the form the model is asked to keep;
    * a poem is one document: its couplets, one per line (``床前明月光，疑是地上霜。``), then ``<|endoftext|>``;
    * a poem goes to the held-out split when the first 8 bytes of the SHA-1 of ``"<file>/<index>"`` divide by
      ``--heldout-every`` (default 100, 1 %); held-out poems are seen by neither the tokenizer nor the model;
    * tokenizer: byte-level BPE whose pre-tokenizer isolates every CJK character, so that merges never cross a
      character: each common character is exactly one token (the title's "一趟一个字" holds literally) and a rare
      one falls back to its UTF-8 bytes.

Outputs under ``--out`` (default ``corpus-poems/``, git-ignored): ``tokenizer.json``, ``train.bin`` (uint16 ids),
``heldout/poems.bin`` and ``.txt``, ``manifest.json`` (source, licence, hash, counts).

    python -m model.training.poems --out corpus-poems          # about two minutes on two CPU cores
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from model.training.corpus import EOT, _encode, _sha256

PACKAGE = "chinese-poetry@2.0.1"
TARBALL = "chinese-poetry-2.0.1.tgz"
# The npm registry's ``integrity`` of chinese-poetry 2.0.1 (sha512, base64).
NPM_SHA512 = "KtYARvV7CWNtax0na9+Jn6PlhGgSoid7PWyDzXI4KsCEm2odZcqEQyval5koaLygZnM/EQ3lfJ//25K8p3uHNg=="
LICENSE = "MIT (chinese-poetry, https://github.com/chinese-poetry/chinese-poetry, npm chinese-poetry 2.0.1)"
DEFAULT_CACHE = Path.home() / ".cache" / "one-trip" / "poetry"

LINE_SPLIT = re.compile(r"[，。！？；]")
CJK_ISOLATE = r"[\u3400-\u9fff\uf900-\ufaff]"


def fetch(cache: Path) -> Path:
    """The verified tarball in ``cache`` (fetched with ``npm pack`` if absent).

    Raises RuntimeError when npm is missing or fails, or when the tarball's SHA-512 is not :data:`NPM_SHA512`.
    """
    cache.mkdir(parents=True, exist_ok=True)
    tgz = cache / TARBALL
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed once to fetch the poems (apt install npm), or put "
                               f"{TARBALL} into {cache}")
        done = subprocess.run([npm, "pack", PACKAGE, "--pack-destination", str(cache)],
                              capture_output=True, text=True)
        if done.returncode != 0 or not tgz.exists():
            raise RuntimeError(f"npm pack {PACKAGE} failed: {done.stderr.strip()[-300:]}")
    digest = base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    if digest != NPM_SHA512:
        raise RuntimeError(f"{tgz} has sha512 {digest}, expected {NPM_SHA512}: delete it and fetch again")
    return tgz


def read_poems(tgz: Path) -> list[tuple[str, list[str]]]:
    """(name, paragraphs) of every poem in ``dist/quantangshi/poet.*.json``, in file order, traditional text."""
    poems: list[tuple[str, list[str]]] = []
    with tarfile.open(tgz, "r:gz") as tar:
        members = sorted((m for m in tar.getmembers()
                          if re.fullmatch(r"package/dist/quantangshi/poet\.(tang|song)\.\d+\.json", m.name)),
                         key=lambda m: m.name)
        for m in members:
            data = json.load(io.TextIOWrapper(tar.extractfile(m), encoding="utf-8"))
            stem = m.name.rsplit("/", 1)[1]
            for i, p in enumerate(data):
                poems.append((f"{stem}/{i}", [str(x) for x in p.get("paragraphs") or []]))
    return poems


def regular_form(text: str) -> int | None:
    """The line length (5 or 7) of a regular poem, or None. ``text``: the poem's characters, punctuation included."""
    lines = [ln for ln in LINE_SPLIT.split(text.replace("\n", "")) if ln]
    if not lines or len(lines) % 2:
        return None
    n = len(lines[0])
    if n not in (5, 7) or any(len(ln) != n for ln in lines):
        return None
    return n


def poem_text(paragraphs: list[str]) -> str:
    """One couplet per line: the paragraphs as the package gives them (each usually one couplet)."""
    return "\n".join(p.strip() for p in paragraphs if p.strip())


def train_tokenizer(texts, vocab_size: int):
    """Byte-level BPE where merges never cross a CJK character; ``<|endoftext|>`` gets id 0."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(CJK_ISOLATE), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def is_heldout(name: str, every: int) -> bool:
    digest = hashlib.sha1(f"poems/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % every == 0


def _regular_poems(raw: list, conv) -> tuple[list[tuple[str, str, int]], int]:
    """The poems (name, paragraphs) in Simplified characters (``conv``: OpenCC t2s) whose every line is 5 or 7
    characters, as (name, text, line length); with the characters read in all."""
    kept: list[tuple[str, str, int]] = []
    total_chars = 0
    for name, paras in raw:
        text = conv.convert(poem_text(paras))
        total_chars += len(text)
        form = regular_form(text)
        if form is not None:
            kept.append((name, text, form))
    return kept, total_chars


def _common_whole(texts: list[str], tok) -> tuple[list[str], int]:
    """The 3,000 most frequent CJK characters of ``texts`` (ties by code point) and how many of them the
    tokenizer keeps as one token."""
    counts: dict[str, int] = {}
    for t in texts:
        for ch in t:
            if re.match(CJK_ISOLATE, ch):
                counts[ch] = counts.get(ch, 0) + 1
    common = sorted(counts, key=lambda c: (-counts[c], c))[:3000]
    return common, sum(1 for ch in common if len(tok.encode(ch).ids) == 1)


def build(out: Path, cache: Path, vocab_size: int, heldout_every: int, seed: int,
          tokenizer: Path | None = None) -> dict:
    """Fetch, convert, filter, split, train the tokenizer, encode; returns the manifest (also manifest.json).

    tokenizer: encode with this existing ``tokenizer.json`` instead of training one, so that a corpus rebuilt
    for a bigger model of the family (``poems-big``) has the bundled model's ids."""
    import opencc

    t0 = time.time()
    tgz = fetch(cache)
    raw = read_poems(tgz)
    kept, total_chars = _regular_poems(raw, opencc.OpenCC("t2s"))
    train = [(n, t) for n, t, _ in kept if not is_heldout(n, heldout_every)]
    held = [(n, t) for n, t, _ in kept if is_heldout(n, heldout_every)]
    print(f"poems: {len(raw)} read, {len(kept)} regular, {len(train)} train, {len(held)} held out "
          f"({time.time() - t0:.0f} s)", file=sys.stderr)
    random.Random(seed).shuffle(train)
    texts = [t for _, t in train]
    out.mkdir(parents=True, exist_ok=True)
    (out / "heldout").mkdir(exist_ok=True)
    if tokenizer is not None:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(str(tokenizer))
    else:
        tok = train_tokenizer(texts, vocab_size)
    tok.save(str(out / "tokenizer.json"))
    eot_id = tok.token_to_id(EOT)
    train_ids = _encode(tok, texts, eot_id)
    train_ids.tofile(out / "train.bin")
    held_ids = _encode(tok, [t for _, t in held], eot_id)
    held_ids.tofile(out / "heldout" / "poems.bin")
    (out / "heldout" / "poems.txt").write_text(f"\n{EOT}\n".join(t for _, t in held), encoding="utf-8")

    common, whole = _common_whole(texts, tok)
    manifest = {
        "source": f"npm {PACKAGE}, dist/quantangshi (Tang and Song shi)", "license": LICENSE,
        "tarball_sha512": NPM_SHA512, "converted_with": "OpenCC t2s " + getattr(opencc, "__version__", ""),
        "poems_read": len(raw), "chars_read": total_chars, "poems_regular": len(kept),
        "forms": {"5": sum(1 for *_, f in kept if f == 5), "7": sum(1 for *_, f in kept if f == 7)},
        "train_poems": len(train), "heldout_poems": len(held), "heldout_every": heldout_every, "seed": seed,
        "train_chars": sum(len(t) for t in texts), "heldout_chars": sum(len(t) for _, t in held),
        "train_tokens": int(train_ids.size), "heldout_tokens": int(held_ids.size),
        "vocab_size": tok.get_vocab_size(), "eot_id": eot_id,
        "cjk_common_whole": {"whole": whole, "top": len(common)},
    }
    manifest["outputs"] = {p.relative_to(out).as_posix(): _sha256(p)
                           for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    manifest["build_seconds"] = round(time.time() - t0, 1)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"train: {train_ids.size} tokens; {whole}/{len(common)} common characters are one token "
          f"({time.time() - t0:.0f} s)", file=sys.stderr)
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model.training.poems", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("corpus-poems"))
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the npm tarball is kept")
    p.add_argument("--vocab-size", type=int, default=6144)
    p.add_argument("--heldout-every", type=int, default=100)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--tokenizer", type=Path, default=None,
                   help="reuse this tokenizer.json (e.g. assets/models/poems/tokenizer.json) instead of training one")
    a = p.parse_args(argv)
    try:
        build(a.out, a.cache, a.vocab_size, a.heldout_every, a.seed, a.tokenizer)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
