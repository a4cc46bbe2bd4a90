"""Make the bundled fonts: a Simplified-Chinese subset of Noto Sans CJK and a small DejaVu Sans subset.

    python scripts/make_font_subset.py [--cjk PATH.ttc] [--dejavu-dir DIR] [--out assets/fonts]

Why two fonts. Noto Sans CJK SC has every Chinese character the app needs but draws · “ ” ‘ ’ … as full-width
(CJK convention), which looks wrong in English text, and has no glyph for several token-label marks (↵ ⇥ ␀ ␛ ␍
⟨ ⟩). DejaVu Sans has those and proportional Latin punctuation. English text uses DejaVu first and falls back to
the CJK font; Chinese text uses the CJK font first and falls back to DejaVu (see ``gui/tour``'s font families).

Characters kept in the CJK subset (``NotoSansSC-OneTrip.otf``, family "Noto Sans SC OneTrip"):
  * every character of every translation in ``assets/i18n/*.ts`` (all contexts, every engineer's);
  * every character of the source text ``../shared/seed/*.txt`` when it is there;
  * the 3,755 level-1 hanzi of GB 2312 (the common characters, so typed prompts mostly render);
  * every character a bundled model can write in one token (each ``assets/models/*/tokenizer.json``, decoded
    token by token: the poetry model's 6,144 tokens hold some 4,000 hanzi, many outside GB 2312 level 1);
  * ASCII, Latin-1, general punctuation, CJK symbols and punctuation, full-width forms, arrows and math symbols.
Characters kept in the DejaVu subset (``OneTripLatin-DejaVuSans.ttf`` and ``-Bold``, family "DejaVu Sans
OneTrip"): ASCII, Latin-1, Latin Extended-A, general punctuation, super/subscripts, arrows, math operators,
technical symbols, control pictures (␀ ␛ ␍ ␣), geometric shapes, ⟨ ⟩, and the token-label marks.

Sources and licences: Noto Sans CJK (Debian ``fonts-noto-cjk``, SIL Open Font License 1.1, no Reserved Font
Name); DejaVu Sans (Debian ``fonts-dejavu-core``, Bitstream Vera licence plus public-domain changes). Both allow
subsetting and redistribution; the licence texts are copied beside the fonts. Needs ``fonttools`` (the ``dev``
extra). The CJK font must stay under 8 MB.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CJK_TTC = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
DEJAVU_DIR = Path("/usr/share/fonts/truetype/dejavu")
CJK_FAMILY = "Noto Sans SC OneTrip"
DEJAVU_FAMILY = "DejaVu Sans OneTrip"
MAX_CJK_BYTES = 8 * 10**6

# The readable marks model/tokenizer.py uses in token labels, and a few the tour draws.
MARKS = "␣↵⇥␀␛␍⟨⟩·…→←↑↓⇒×÷≈≤≥−±√∑Σ²³ᵀ◀▶▲▼●○■□✓✗§"

RANGES_CJK = [(0x20, 0x7E), (0xA0, 0xFF), (0x2000, 0x206F), (0x2190, 0x21FF), (0x2200, 0x22FF),
              (0x2460, 0x24FF), (0x25A0, 0x25FF), (0x3000, 0x303F), (0xFF00, 0xFFEF)]
RANGES_LATIN = [(0x20, 0x7E), (0xA0, 0x17F), (0x2000, 0x206F), (0x2070, 0x209F), (0x2190, 0x21FF),
                (0x2200, 0x22FF), (0x2300, 0x23FF), (0x2400, 0x243F), (0x25A0, 0x25FF), (0x27E8, 0x27E9),
                (0x1D40, 0x1D40)]


def gb2312_level1() -> str:
    """The 3,755 level-1 hanzi of GB 2312 (rows 16–55 of the code table), decoded with Python's gb2312 codec."""
    chars = []
    for row in range(0xB0, 0xD8):
        for cell in range(0xA1, 0xFF):
            try:
                chars.append(bytes([row, cell]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return "".join(chars)


def ts_translations(i18n_dir: Path) -> str:
    """Every character of every <translation> and <source> in the .ts files of ``i18n_dir``."""
    text = []
    for ts in sorted(i18n_dir.glob("*.ts")):
        raw = ts.read_text(encoding="utf-8")
        for m in re.finditer(r"<(translation|source)[^>]*>(.*?)</\1>", raw, re.S):
            text.append(m.group(2).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
                        .replace("&quot;", '"').replace("&apos;", "'"))
    return "".join(text)


def seed_text() -> str:
    seed_dir = ROOT.parent / "shared" / "seed"
    if not seed_dir.is_dir():
        return ""
    return "".join(p.read_text(encoding="utf-8") for p in sorted(seed_dir.glob("*.txt")))


def tokenizer_text(models_dir: Path) -> str:
    """Every character of every token of every bundled model's tokenizer, decoded one token at a time."""
    sys.path.insert(0, str(ROOT))
    from model.tokenizer import Tokenizer

    text = []
    for tj in sorted(models_dir.glob("*/tokenizer.json")):
        tok = Tokenizer.from_dir(tj.parent)
        text.extend(tok.decode([i]) for i in range(tok.vocab_size))
    return "".join(text).replace("\ufffd", "")


def _ranges(ranges) -> set[int]:
    return {cp for lo, hi in ranges for cp in range(lo, hi + 1)}


def _subset(font, codepoints: set[int], family: str, out: Path) -> int:
    from fontTools import subset

    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.glyph_names = False
    options.hinting = True
    sub = subset.Subsetter(options)
    sub.populate(unicodes=sorted(codepoints))
    sub.subset(font)
    _rename(font, family)
    out.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(out))
    return len(font.getBestCmap())


def _rename(font, family: str) -> None:
    """Give the subset its own family name, so it never shadows (or is shadowed by) an installed font."""
    style = font["name"].getDebugName(2) or "Regular"
    full = f"{family} {style}" if style != "Regular" else family
    ps = (family + "-" + style).replace(" ", "")
    for rec in font["name"].names:
        if rec.nameID in (1, 16):
            rec.string = family
        elif rec.nameID == 4:
            rec.string = full
        elif rec.nameID == 6:
            rec.string = ps
        elif rec.nameID == 3:
            rec.string = f"{ps};one-trip-subset"
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [ps]
        top = cff.topDictIndex[0]
        top.FullName, top.FamilyName = full, family


# Control pictures no installed font has: drawn as composites of small capital letters set on a diagonal, the
# way Unicode's reference glyphs show them (␀ = NUL, ␍ = CR, ␛ = ESC).
CONTROL_PICTURES = {0x2400: "NUL", 0x240D: "CR", 0x241B: "ESC"}


def add_control_pictures(font) -> list[str]:
    """Add the glyphs of ``CONTROL_PICTURES`` the TrueType ``font`` lacks; returns the characters added."""
    from fontTools.ttLib.tables._g_l_y_f import Glyph, GlyphComponent

    cmap = font.getBestCmap()
    glyf, hmtx = font["glyf"], font["hmtx"]
    upm = font["head"].unitsPerEm
    added = []
    for cp, letters in CONTROL_PICTURES.items():
        if cp in cmap or not all(ord(c) in cmap for c in letters):
            continue
        scale = 0.5 if len(letters) == 3 else 0.6
        step_x, step_y = upm * 0.28, -upm * 0.3
        glyph = Glyph()
        glyph.numberOfContours = -1
        glyph.components = []
        for i, ch in enumerate(letters):
            comp = GlyphComponent()
            comp.glyphName = cmap[ord(ch)]
            comp.x, comp.y = int(upm * 0.06 + i * step_x), int(upm * 0.62 + i * step_y)
            comp.flags = 0
            comp.transform = [[scale, 0], [0, scale]]
            glyph.components.append(comp)
        name = f"uni{cp:04X}"
        glyf.glyphs[name] = glyph
        font.setGlyphOrder(font.getGlyphOrder() + [name])
        glyph.recalcBounds(glyf)
        hmtx.metrics[name] = (int(upm * 0.06 * 2 + (len(letters) - 1) * step_x + upm * 0.4), glyph.xMin)
        for table in font["cmap"].tables:
            if table.isUnicode():
                table.cmap[cp] = name
        added.append(chr(cp))
    return added


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cjk", type=Path, default=CJK_TTC, help="NotoSansCJK-Regular.ttc (the SC face is used)")
    p.add_argument("--dejavu-dir", type=Path, default=DEJAVU_DIR, help="directory with DejaVuSans.ttf")
    p.add_argument("--out", type=Path, default=ROOT / "assets" / "fonts")
    p.add_argument("--licenses", type=Path, default=Path("/usr/share/doc"),
                   help="folder with fonts-noto-cjk/copyright and fonts-dejavu-core/copyright")
    args = p.parse_args(argv)
    try:
        from fontTools.ttLib import TTCollection, TTFont
    except ImportError:
        print("make_font_subset: needs fonttools (pip install -e '.[dev]')", file=sys.stderr)
        return 2
    if not args.cjk.is_file():
        print(f"make_font_subset: no {args.cjk} (apt-get install fonts-noto-cjk)", file=sys.stderr)
        return 2

    text = (ts_translations(ROOT / "assets" / "i18n") + seed_text() + gb2312_level1()
            + tokenizer_text(ROOT / "assets" / "models") + MARKS)
    wanted = {ord(c) for c in text if not c.isspace() or c == " "} | _ranges(RANGES_CJK)
    sc = next(f for f in TTCollection(str(args.cjk)).fonts if f["name"].getDebugName(1) == "Noto Sans CJK SC")
    have = set(sc.getBestCmap())
    missing = sorted(c for c in {ord(ch) for ch in text} - have if not chr(c).isspace())
    cjk_out = args.out / "NotoSansSC-OneTrip.otf"
    n = _subset(sc, wanted & have, CJK_FAMILY, cjk_out)
    size = cjk_out.stat().st_size
    print(f"{cjk_out.relative_to(ROOT)}: {n} characters, {size / 1e6:.2f} MB")
    if size > MAX_CJK_BYTES:
        print(f"make_font_subset: {cjk_out} is over {MAX_CJK_BYTES / 1e6:.0f} MB", file=sys.stderr)
        return 1

    latin = _ranges(RANGES_LATIN) | {ord(c) for c in MARKS}
    for style in ("", "-Bold"):
        src = args.dejavu_dir / f"DejaVuSans{style}.ttf"
        if not src.is_file():
            print(f"make_font_subset: no {src} (apt-get install fonts-dejavu-core)", file=sys.stderr)
            return 2
        font = TTFont(str(src))
        # "OneTripLatin-…" sorts after "NotoSans…": animations/fonts.py takes the first registered family with Chinese
        out = args.out / f"OneTripLatin-DejaVuSans{style}.ttf"
        n = _subset(font, latin & set(font.getBestCmap()), DEJAVU_FAMILY, out)
        font = TTFont(str(out))
        if add_control_pictures(font):
            font.save(str(out))
            n = len(font.getBestCmap())
        print(f"{out.relative_to(ROOT)}: {n} characters, {out.stat().st_size / 1e3:.0f} kB")

    still = [c for c in missing if c not in latin]
    if still:
        print("not in either font: " + " ".join(f"U+{c:04X}" for c in still[:40]), file=sys.stderr)
    for src, name in ((args.licenses / "fonts-noto-cjk" / "copyright", "LICENSE-NotoSansCJK.txt"),
                      (args.licenses / "fonts-dejavu-core" / "copyright", "LICENSE-DejaVu.txt")):
        if src.is_file():
            shutil.copyfile(src, args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
