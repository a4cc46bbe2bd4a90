"""Build the training corpus and the byte-level BPE tokenizer of the bundled models, offline and deterministically.

Sources (all on disk from Debian packages / the Python install; nothing is downloaded):
    prose  the reStructuredText sources of the Python 3.11 documentation (Debian ``python3.11-doc``,
           ``/usr/share/doc/python3.11/html/_sources``), PSF License
    code   the Python 3.11 standard library source, ``*.py`` outside test and site-packages folders, PSF License
    zh     the Simplified Chinese manual pages (Debian ``manpages-zh``, ``/usr/share/man/zh_CN``), GFDL-1.2+
           (some pages GPL-2.0 and others, see ``/usr/share/doc/manpages-zh/copyright``), roff markup stripped,
           capped in size: it is there so the tokenizer keeps common Chinese characters whole

Every file is one document. A document goes to the held-out split when the first 8 bytes of the SHA-1 of
``"<domain>/<relative path>"``, as an integer, divide by ``--heldout-every`` (default 40, about 2.5 %), so the
split depends only on the file's name and never changes between runs. Held-out documents are never seen by the
tokenizer trainer or the model trainer.

Outputs under ``--out`` (default ``corpus/``, git-ignored):
    tokenizer.json        byte-level BPE, ``vocab_size`` tokens, ``<|endoftext|>`` is id 0
    train.bin             uint16 token ids, every training document followed by ``<|endoftext|>``, documents
                          in a seeded shuffled order
    heldout/{prose,code,zh}.bin and .txt   the held-out documents, tokens and text
    manifest.json         sources, licenses, file counts, bytes, tokens, the held-out file names, sha256 of outputs

Run ``python -m model.training.corpus --out corpus`` (about a minute on two CPU cores).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

EOT = "<|endoftext|>"

DOCS_DIR = Path("/usr/share/doc/python3.11/html/_sources")
ZH_DIR = Path("/usr/share/man/zh_CN")

LICENSES = {
    "prose": "PSF License Version 2 (Python documentation, Debian package python3.11-doc)",
    "code": "PSF License Version 2 (Python standard library source)",
    "zh": "GFDL-1.2+ (Debian package manpages-zh; a few pages GPL-2.0 or other free licenses, "
          "see /usr/share/doc/manpages-zh/copyright)",
}

# Folders of the standard library that are tests or third-party code, not the library itself.
_CODE_SKIP = {"test", "tests", "idle_test", "site-packages", "__pycache__", "lib2to3_tests"}


@dataclass
class Document:
    domain: str  # "prose", "code" or "zh"
    name: str  # path relative to the source root
    text: str


def default_stdlib_dir() -> Path:
    """The folder of the running interpreter's standard library (``sysconfig``'s ``stdlib`` path)."""
    return Path(sysconfig.get_paths()["stdlib"])


def _read_text(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (UnicodeDecodeError, OSError, EOFError):
        return None


def collect_prose(root: Path) -> list[Document]:
    docs = []
    for path in sorted(root.rglob("*.rst.txt")):
        text = _read_text(path)
        if text and text.strip():
            docs.append(Document("prose", str(path.relative_to(root)), text))
    return docs


def collect_code(root: Path) -> list[Document]:
    docs = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _CODE_SKIP.intersection(rel.parts[:-1]):
            continue
        text = _read_text(path)
        if text and text.strip():
            docs.append(Document("code", str(rel), text))
    return docs


_ROFF_KEEP = {"SH", "SS", "B", "I", "BR", "BI", "IR", "RB", "RI", "IB", "IP", "TP", "SM", "SB"}
_ROFF_ESCAPE = re.compile(r"\\f[BIRP1-4]|\\f\(..|\\s[+-]?\d|\\&|\\\||\\\^|\\c")


def strip_roff(text: str) -> str:
    """A manual page's roff source → plain text (macro lines dropped or reduced to their arguments)."""
    out = []
    for line in text.splitlines():
        if line.startswith(("'", '.\\"', "'\\\"")):
            continue
        if line.startswith("."):
            macro, _, rest = line[1:].strip().partition(" ")
            if macro not in _ROFF_KEEP:
                continue
            line = rest.replace('"', "")
        line = _ROFF_ESCAPE.sub("", line)
        line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\(em", "—").replace("\\ ", " ")
        line = re.sub(r"\\\(..", "", line)
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def collect_zh(root: Path, max_bytes: int) -> list[Document]:
    """Chinese manual pages in name order until ``max_bytes`` of UTF-8 text; pages with little Chinese skipped."""
    docs, total = [], 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        text = _read_text(path)
        if not text:
            continue
        text = strip_roff(text)
        cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
        if cjk < 0.1 * len(text):
            continue
        docs.append(Document("zh", str(path.relative_to(root)), text))
        total += len(text.encode("utf-8"))
        if total >= max_bytes:
            break
    return docs


def is_heldout(doc: Document, every: int) -> bool:
    digest = hashlib.sha1(f"{doc.domain}/{doc.name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % every == 0


def train_tokenizer(texts, vocab_size: int):
    """Byte-level BPE (GPT-2 style) trained on an iterator of strings. ``<|endoftext|>`` gets id 0."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def _encode(tok, texts: list[str], eot_id: int) -> np.ndarray:
    ids: list[int] = []
    for enc in tok.encode_batch(texts):
        ids.extend(enc.ids)
        ids.append(eot_id)
    return np.asarray(ids, dtype=np.uint16)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cjk_single_tokens(tok, text: str, top: int = 500) -> tuple[int, int]:
    """Of the ``top`` most frequent CJK characters in ``text``, how many are one token each. Returns (whole, top)."""
    counts: dict[str, int] = {}
    for ch in text:
        if "\u4e00" <= ch <= "\u9fff":
            counts[ch] = counts.get(ch, 0) + 1
    common = sorted(counts, key=lambda c: (-counts[c], c))[:top]
    whole = sum(1 for ch in common if len(tok.encode(ch).ids) == 1)
    return whole, len(common)


def _split(domains: dict[str, list[Document]], sources: dict[str, str], heldout_every: int,
           manifest: dict) -> tuple[list[Document], dict[str, list[Document]]]:
    """Each domain's documents split into training and held out (``is_heldout``), each domain's counts and
    held-out names put in ``manifest["domains"]``. Returns the training documents (in domain order) and the
    held-out ones by domain."""
    train_docs: list[Document] = []
    heldout: dict[str, list[Document]] = {}
    for domain, docs in domains.items():
        held = [d for d in docs if is_heldout(d, heldout_every)]
        train = [d for d in docs if not is_heldout(d, heldout_every)]
        heldout[domain] = held
        train_docs.extend(train)
        manifest["domains"][domain] = {
            "source": sources[domain], "license": LICENSES[domain],
            "train_files": len(train), "train_bytes": sum(len(d.text.encode()) for d in train),
            "heldout_files": len(held), "heldout_bytes": sum(len(d.text.encode()) for d in held),
            "heldout_names": [d.name for d in held],
        }
        print(f"{domain}: {len(train)} train files, {len(held)} held out", file=sys.stderr)
    return train_docs, heldout


def _write_heldout(out: Path, tok, eot_id: int, domain: str, train_docs: list[Document], held: list[Document],
                   dm: dict) -> None:
    """A domain's held-out tokens (heldout/<domain>.bin, uint16) and text (.txt), and its token counts in ``dm``
    (its entry in the manifest)."""
    dm["train_tokens"] = int(sum(len(e.ids) for e in tok.encode_batch(
        [d.text for d in train_docs if d.domain == domain])))
    held_ids = _encode(tok, [d.text for d in held], eot_id)
    held_ids.tofile(out / "heldout" / f"{domain}.bin")
    (out / "heldout" / f"{domain}.txt").write_text(
        f"\n{EOT}\n".join(d.text for d in held), encoding="utf-8")
    dm["heldout_tokens"] = int(held_ids.size)
    dm["bytes_per_token_train"] = dm["train_bytes"] / max(1, dm["train_tokens"])


def build(out: Path, docs_dir: Path, stdlib_dir: Path, zh_dir: Path | None, zh_max_bytes: int,
          vocab_size: int, heldout_every: int, seed: int, tokenizer: Path | None = None) -> dict:
    """Collect, split, train the tokenizer, encode; returns the manifest (also written to out/manifest.json).

    tokenizer: encode with this existing ``tokenizer.json`` (copied to ``out``) instead of training one: the
    tokenizer trainer breaks ties between equally frequent merges differently when the inputs differ by a file,
    so a corpus rebuilt on another machine must reuse the bundled models' tokenizer to match their ids.
    """
    t0 = time.time()
    out.mkdir(parents=True, exist_ok=True)
    (out / "heldout").mkdir(exist_ok=True)
    domains = {"prose": collect_prose(docs_dir), "code": collect_code(stdlib_dir)}
    if zh_dir is not None and zh_dir.is_dir():
        domains["zh"] = collect_zh(zh_dir, zh_max_bytes)
    sources = {"prose": str(docs_dir), "code": str(stdlib_dir), "zh": str(zh_dir)}

    manifest: dict = {"seed": seed, "heldout_every": heldout_every, "vocab_size": vocab_size, "domains": {}}
    train_docs, heldout = _split(domains, sources, heldout_every, manifest)
    random.Random(seed).shuffle(train_docs)
    texts = [d.text for d in train_docs]
    if tokenizer is not None:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(str(tokenizer))
    else:
        tok = train_tokenizer(texts, vocab_size)
    tok.save(str(out / "tokenizer.json"))
    eot_id = tok.token_to_id(EOT)
    print(f"tokenizer: {tok.get_vocab_size()} tokens, {EOT} = {eot_id} ({time.time() - t0:.0f} s)", file=sys.stderr)

    train_ids = _encode(tok, texts, eot_id)
    train_ids.tofile(out / "train.bin")
    for domain in domains:
        _write_heldout(out, tok, eot_id, domain, train_docs, heldout[domain], manifest["domains"][domain])
    if "zh" in domains:
        whole, top = cjk_single_tokens(tok, "".join(d.text for d in domains["zh"]))
        manifest["cjk_common_whole"] = {"whole": whole, "top": top}
    manifest["train_tokens"] = int(train_ids.size)
    manifest["train_bytes"] = sum(len(t.encode()) for t in texts)
    manifest["eot_id"] = eot_id
    manifest["outputs"] = {p.relative_to(out).as_posix(): _sha256(p)
                           for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    manifest["build_seconds"] = round(time.time() - t0, 1)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"train: {train_ids.size} tokens, {manifest['train_bytes']} bytes ({time.time() - t0:.0f} s)",
          file=sys.stderr)
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model.training.corpus", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("corpus"))
    p.add_argument("--docs", type=Path, default=DOCS_DIR, help="Python documentation reST sources")
    p.add_argument("--stdlib", type=Path, default=None, help="standard library folder (default: this Python's)")
    p.add_argument("--zh", type=Path, default=ZH_DIR, help="Chinese man pages folder")
    p.add_argument("--no-zh", action="store_true", help="leave the Chinese text out")
    p.add_argument("--zh-max-bytes", type=int, default=2_000_000)
    p.add_argument("--vocab-size", type=int, default=4096)
    p.add_argument("--heldout-every", type=int, default=40)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--tokenizer", type=Path, default=None,
                   help="reuse this tokenizer.json (e.g. assets/models/target/tokenizer.json) instead of training one")
    a = p.parse_args(argv)
    build(a.out, a.docs, a.stdlib or default_stdlib_dir(), None if a.no_zh else a.zh, a.zh_max_bytes,
          a.vocab_size, a.heldout_every, a.seed, a.tokenizer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
