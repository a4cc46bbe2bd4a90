"""Write the model card of a big book (``assets/models/target-big`` or ``poems-big``) from the shipped files.

    python -m model.training.big_book_card --family code --corpus corpus --models assets/models
    python -m model.training.big_book_card --family poems --corpus corpus-poems --models assets/models

Every figure is computed here from the shipped weights and the family's held-out split, never typed in:
    * held-out bits per byte (code: the code and prose splits; poems: the poems split, with bits per character) of
      the big book and of the pocket book it was grown from, on the same split and windows;
    * the pocket book's greedy acceptance at 4 guesses as the big book's apprentice (``model_card.acceptance``);
    * poems only: the form score of sampled continuations (``poems_card``) and how many generated lines are
      copied whole from the training poems;
    * sizes (parameters, fp32 bytes as the engine holds them, the FP16 file) and the training commands with the
      loss curve.
Writes ``README.md`` and ``eval.json`` into the big book's folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from model.catalog import CODE, POEMS, BundledModel, poem_lines
from model.training.model_card import _commands, _load_timed, _mb, acceptance, bits_per_byte

FAMILIES: dict[str, BundledModel] = {"code": CODE, "poems": POEMS}


def _sizes(model, folder: Path) -> dict:
    cfg = model.config
    return {"n_embd": cfg.n_embd, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "parameters": model.num_parameters(),
            "weight_bytes": model.weight_bytes(), "file_bytes": (folder / "model.safetensors").stat().st_size,
            "file_dtype": _file_dtype(folder)}


def _file_dtype(folder: Path) -> str:
    from safetensors import safe_open
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        return str(f.get_slice(next(iter(f.keys()))).get_dtype())


def heldout_scores(family: str, corpus: Path, big, pocket, tok) -> dict:
    """{model: {domain: {"bpb", ...}}} on the family's held-out splits: code and prose (``bits_per_byte``, windows
    of the context) or poems (``poems_card.bits_per_char``, windows of 256)."""
    out: dict = {"big": {}, "pocket": {}}
    domains = ("code", "prose") if family == "code" else ("poems",)
    for domain in domains:
        ids = np.fromfile(corpus / "heldout" / f"{domain}.bin", dtype=np.uint16)
        for name, model in (("big", big), ("pocket", pocket)):
            if family == "code":
                out[name][domain] = bits_per_byte(model, ids, tok, model.config.n_positions)
            else:
                from model.training.poems_card import bits_per_char
                out[name][domain] = bits_per_char(model, ids, tok)
    return out


def copied_lines(lines: list[str], corpus: Path, tok) -> int:
    """How many of ``lines`` occur whole as a line of a training poem (``train.bin``, decoded)."""
    ids = np.fromfile(corpus / "train.bin", dtype=np.uint16)
    seen: set[str] = set()
    step = 1 << 20
    for i in range(0, len(ids), step):  # a chunk edge may split one line in two: both halves are shorter lines
        seen.update(poem_lines(tok.decode(ids[i:i + step].tolist()) + "\n"))
    return sum(1 for ln in lines if ln in seen)


def poem_form(corpus: Path, big, tok) -> dict:
    """Form score and copied lines of the big book's sampled continuations (poems_card's prompts and seeds)."""
    from model.catalog import form_score
    from model.training.poems_card import FORM_PROMPTS, FORM_SEEDS, continue_poems
    conts = {p: continue_poems(big, tok, p, range(FORM_SEEDS)) for p in FORM_PROMPTS}
    scores = {p: form_score(p, c) for p, c in conts.items()}
    lines = [ln for c in conts.values() for text in c for ln in poem_lines(text)]
    total = sum(s["lines"] for s in scores.values())
    return {"by_prompt": scores, "lines": total, "in_form": sum(s["in_form"] for s in scores.values()),
            "score": sum(s["in_form"] for s in scores.values()) / total if total else 0.0,
            "copied_lines": copied_lines(lines, corpus, tok), "seeds": FORM_SEEDS,
            "samples": [{"prompt": p, "seed": s, "text": conts[p][s]} for p in FORM_PROMPTS for s in (0, 1)]}


def evaluate(family: str, corpus: Path, models: Path) -> dict:
    """All the card's numbers as a JSON-able dict."""
    entry = FAMILIES[family]
    big_dir, pocket_dir = entry.path(models), entry.draft_path(models)
    big, tok, secs = _load_timed(big_dir, tries=1)
    pocket, _, _ = _load_timed(pocket_dir, tries=1)
    res = {"family": family, "big": {**_sizes(big, big_dir), "load_seconds": round(secs, 2),
                                     "training": json.loads((big_dir / "training.json").read_text(encoding="utf-8"))},
           "pocket": _sizes(pocket, pocket_dir), "heldout": heldout_scores(family, corpus, big, pocket, tok)}
    held = np.fromfile(corpus / "heldout" / f"{'code' if family == 'code' else 'poems'}.bin", dtype=np.uint16)
    res["acceptance"] = acceptance(big, pocket, held, context=128 if family == "code" else 64)
    if family == "poems":
        res["form"] = poem_form(corpus, big, tok)
    res["threads"] = torch.get_num_threads()
    return res


def render(res: dict) -> str:
    """The card as Markdown."""
    b, p, fam = res["big"], res["pocket"], res["family"]
    name = "code" if fam == "code" else "poetry"
    L = [f"# The big {name} book", "",
         f"Generated by `python -m model.training.big_book_card --family {fam}` from the shipped files and the "
         "held-out split; do not edit by hand.", "",
         f"The {name} model the window runs by default: the pocket book (`{FAMILIES[fam].draft_folder}/`) "
         "grown twice as wide and twice as deep with its function kept (`model/training/starts.py` `grown_state`), "
         "then trained on. It is larger than a desktop CPU's last-level cache, so every trip reads it from memory; "
         "the pocket book is its apprentice for speculative decoding.", "",
         "| | big book | pocket book (its apprentice) |", "|---|---|---|",
         f"| width × blocks (heads) | {b['n_embd']} × {b['n_layer']} ({b['n_head']}) | "
         f"{p['n_embd']} × {p['n_layer']} ({p['n_head']}) |",
         f"| parameters | {b['parameters']:,} | {p['parameters']:,} "
         f"({p['parameters'] / b['parameters']:.3f} of the big book) |",
         f"| bytes in fp32 (as the engine reads them) | {_mb(b['weight_bytes'])} | {_mb(p['weight_bytes'])} |",
         f"| model.safetensors | {_mb(b['file_bytes'])} ({b['file_dtype']}) | {_mb(p['file_bytes'])} "
         f"({p['file_dtype']}) |", "", "## Held out", "", "| split | big book | pocket book |", "|---|---|---|"]
    for domain, score in res["heldout"]["big"].items():
        other = res["heldout"]["pocket"][domain]
        unit = "bits per byte"
        L.append(f"| {domain} ({unit}) | {score['bpb']:.4f} | {other['bpb']:.4f} |")
        if "bpc" in score:
            L.append(f"| {domain} (bits per character) | {score['bpc']:.4f} | {other['bpc']:.4f} |")
    acc = res["acceptance"]
    L += ["", f"The pocket book as apprentice keeps {100 * acc['rate']:.1f} % of {acc['guesses']} greedy guesses on "
          f"held-out text ({acc['positions']} positions, {acc['context']} tokens of context each; "
          f"{acc['tokens_per_target_pass']:.2f} tokens per check).", ""]
    if "form" in res:
        f = res["form"]
        L += ["## Form", "", f"Sampled continuations of {len(f['by_prompt'])} first lines × {f['seeds']} seeds: "
              f"{f['in_form']} of {f['lines']} lines keep the first line's length ({100 * f['score']:.0f} %); "
              f"{f['copied_lines']} lines are copied whole from the training poems.", ""]
        L += [f"- `{s['prompt']}` (seed {s['seed']}): {s['text'].strip()[:80]}" for s in f["samples"][:4]] + [""]
    corpus = ("python -m model.training.corpus --out corpus --tokenizer assets/models/target/tokenizer.json"
              if fam == "code" else
              "python -m model.training.poems --out corpus-poems --tokenizer assets/models/poems/tokenizer.json")
    quantized = (b["training"].get("quantized") or {}).get("command")
    L += ["## Training", "", "The loss per step of this stage (the pocket book's own curve is in its folder); the "
          "held-out points are nats per token on 32 windows.", "", "![loss](loss.png)", "", "## Reproduce", "",
          "```sh", "pip install -e .[train]", corpus, *_commands(b["training"]), *([quantized] if quantized else []),
          f"python -m model.training.big_book_card --family {fam} --corpus {corpus.split('--out ')[1].split()[0]}",
          "```", ""]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model.training.big_book_card", description=__doc__.splitlines()[0])
    p.add_argument("--family", choices=sorted(FAMILIES), required=True)
    p.add_argument("--corpus", type=Path, required=True, help="the family's corpus folder (held-out split)")
    p.add_argument("--models", type=Path, default=Path("assets/models"))
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    res = evaluate(a.family, a.corpus, a.models)
    out = FAMILIES[a.family].path(a.models)
    (out / "eval.json").write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render(res), encoding="utf-8")
    print(f"wrote {out / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
