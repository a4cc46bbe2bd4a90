"""Write ``assets/models/README.md``, the model card of the bundled models, from the real files.

    python -m model.training.model_card --corpus corpus --models assets/models

Everything in the card is measured here from the shipped directories (``target/``, ``draft/``: config.json,
model.safetensors, tokenizer.json, training.json) and the corpus folder's held-out split: parameter counts and
bytes, load time, held-out bits per byte, greedy continuations and the draft's greedy acceptance. The corpus
manifest is copied to ``assets/models/corpus.json`` and the numbers to ``assets/models/eval.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import re
import shutil
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from model.checkpoint import load_pretrained
from model.gpt2 import GPT2
from model.tokenizer import Tokenizer

PROMPTS = [
    ("code", "def fibonacci(n):"),
    ("code", "import os\nimport sys\n\n\ndef main():"),
    ("code", "class Stack:\n    \"\"\"A last-in, first-out stack.\"\"\"\n\n    def __init__(self):"),
    ("prose", "The Python interpreter"),
    ("prose", "A list comprehension is"),
]
GUESSES = 4  # draft tokens proposed per verify pass
ACCEPT_POSITIONS = 240  # positions sampled per held-out domain for the acceptance rate
ACCEPT_CONTEXT = 128  # tokens of context before each position


@torch.no_grad()
def bits_per_byte(model: GPT2, ids: np.ndarray, tok: Tokenizer, window: int) -> dict:
    """Held-out cross-entropy of ``model`` on ``ids`` (uint16), in non-overlapping windows of ``window`` tokens.

    Returns {"bpb": bits per UTF-8 byte of the predicted tokens, "nats_per_token", "tokens", "bytes"}.
    The first token of each window is context only; every other token is predicted once.
    """
    nbytes = np.array([len(tok.token_bytes(i)) for i in range(tok.vocab_size)], dtype=np.int64)
    n = (len(ids) - 1) // window
    total_nats, total_tok, total_bytes = 0.0, 0, 0
    x = torch.from_numpy(ids[:n * window].astype(np.int64)).view(n, window)
    for chunk in x.split(16):
        logits = model(chunk)[:, :-1]  # (b, window - 1, V)
        tgt = chunk[:, 1:]
        total_nats += F.cross_entropy(logits.flatten(0, 1).float(), tgt.flatten(), reduction="sum").item()
        total_tok += tgt.numel()
        total_bytes += int(nbytes[tgt.numpy()].sum())
    return {"bpb": total_nats / math.log(2) / total_bytes, "nats_per_token": total_nats / total_tok,
            "tokens": total_tok, "bytes": total_bytes}


@torch.no_grad()
def greedy(model: GPT2, ids: torch.Tensor, n: int) -> torch.Tensor:
    """Greedy continuation: ids int64 (B, T) → the next ``n`` tokens int64 (B, n), recomputing the full pass."""
    out = []
    for _ in range(n):
        nxt = model(ids)[:, -1].argmax(-1, keepdim=True)  # (B, 1)
        out.append(nxt)
        ids = torch.cat([ids, nxt], dim=1)[:, -model.config.n_positions:]
    return torch.cat(out, dim=1)


@torch.no_grad()
def acceptance(target: GPT2, draft: GPT2, ids: np.ndarray, positions: int = ACCEPT_POSITIONS,
               context: int = ACCEPT_CONTEXT, guesses: int = GUESSES) -> dict:
    """Greedy speculative-decoding acceptance of ``draft`` against ``target`` on held-out ``ids`` (uint16).

    At each of ``positions`` evenly spaced positions, with the ``context`` tokens before it, the draft proposes
    ``guesses`` greedy tokens and the target's greedy tokens are computed; the accepted count is the length of the
    matching prefix (what one verify pass keeps, before its bonus token). Returns the mean rate
    (accepted / guesses), the mean accepted count, the histogram of counts 0..guesses, and the mean tokens per
    target pass (accepted + 1).
    """
    context = min(context, target.config.n_positions - guesses, draft.config.n_positions - guesses)
    starts = np.linspace(0, len(ids) - context - guesses - 1, positions).astype(np.int64)
    ctx = torch.from_numpy(np.stack([ids[s:s + context].astype(np.int64) for s in starts]))
    accepted = []
    for chunk in ctx.split(60):
        t = greedy(target, chunk, guesses)
        d = greedy(draft, chunk, guesses)
        match = (t == d).int().cumprod(dim=1).sum(dim=1)  # length of the agreeing prefix, (b,)
        accepted.extend(match.tolist())
    acc = np.array(accepted)
    hist = [int((acc == k).sum()) for k in range(guesses + 1)]
    return {"rate": float(acc.mean() / guesses), "mean_accepted": float(acc.mean()), "histogram": hist,
            "tokens_per_target_pass": float(acc.mean() + 1), "positions": len(acc), "context": context,
            "guesses": guesses}


def _fence(text: str) -> str:
    return "~~~~text\n" + text.replace("~~~~", "~ ~ ~ ~") + "\n~~~~"


def _load_timed(path: Path, tries: int = 3) -> tuple[GPT2, Tokenizer, float]:
    """Load ``path``; the time is the best of ``tries`` loads in seconds (warm file cache, imports done)."""
    best = math.inf
    for _ in range(tries):
        t0 = time.perf_counter()
        model, tok = load_pretrained(path)
        best = min(best, time.perf_counter() - t0)
    return model, tok, best


def evaluate(corpus: Path, models: Path, skip_domains: tuple[str, ...] = (), engine: list[Path] = ()) -> dict:
    """All the numbers of the card, as a JSON-able dict. ``skip_domains``: held-out domains left out (a corpus
    rebuilt here without them); ``engine``: ``bench.draft_bench`` JSON files (acceptance at k = 1..8 on the
    engine, greedy and sampled, and tokens/s), shown as they are, the shipped draft's first."""
    res: dict = {"models": {}}
    loaded = {}
    for name in ("target", "draft"):
        d = models / name
        model, tok, secs = _load_timed(d)
        loaded[name] = (model, tok)
        training = json.loads((d / "training.json").read_text(encoding="utf-8"))
        cfg = model.config
        res["models"][name] = {
            "n_embd": cfg.n_embd, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_positions": cfg.n_positions,
            "vocab_size": cfg.vocab_size, "parameters": model.num_parameters(), "weight_bytes": model.weight_bytes(),
            "file_bytes": (d / "model.safetensors").stat().st_size, "load_seconds": round(secs, 3),
            "training": training, "heldout": {},
        }
    tok = loaded["target"][1]
    for domain in ("prose", "code", "zh"):
        path = corpus / "heldout" / f"{domain}.bin"
        if not path.exists() or domain in skip_domains:
            continue
        ids = np.fromfile(path, dtype=np.uint16)
        for name, (model, _) in loaded.items():
            res["models"][name]["heldout"][domain] = bits_per_byte(model, ids, tok, model.config.n_positions)
    res["acceptance"] = {}
    for domain in ("code", "prose"):
        ids = np.fromfile(corpus / "heldout" / f"{domain}.bin", dtype=np.uint16)
        res["acceptance"][domain] = acceptance(loaded["target"][0], loaded["draft"][0], ids)
    res["engine_acceptance"] = [json.loads(Path(f).read_text(encoding="utf-8")) for f in engine]
    res["samples"] = []
    for kind, prompt in PROMPTS:
        ids = torch.tensor([tok.encode(prompt)])
        row = {"kind": kind, "prompt": prompt}
        for name, (model, _) in loaded.items():
            row[name] = tok.decode(greedy(model, ids, 64)[0].tolist())
        res["samples"].append(row)
    zh = "常用字多为一字一块"
    res["tokenizer"] = {
        "vocab_size": tok.vocab_size, "eos_token_id": tok.eos_token_id, "fingerprint": tok.fingerprint(),
        "examples": {s: [tok.label(i) for i in tok.encode(s)] for s in ("def fibonacci(n):", zh,
                                                                       "The interpreter reads each line.")},
    }
    res["eval_hardware"] = {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
                            "torch": torch.__version__}
    return res


def _commands(training: dict) -> list[str]:
    """The training commands that made a model, in order; each resumed part with the steps it ran."""
    runs = training.get("runs") or [{"command": training.get("command"), "from_step": 0,
                                     "to_step": training["steps"]}]
    out = _commands(training["earlier"]) if training.get("earlier") else []
    for r in runs:
        cmd, note = r["command"], ""
        if len(runs) > 1:
            note = f"  # steps {r['from_step']}–{r['to_step']}"
            planned = re.search(r"--steps (\d+)", cmd)
            if r is not runs[-1] and "--stop-after" not in cmd and not (planned and int(planned[1]) == r["to_step"]):
                cmd += f" --stop-after {r['to_step']}"  # the original run was stopped here by hand
                note += " (the original run was stopped by hand after this checkpoint)"
            elif r is not runs[-1]:
                note += " (finished; the next command resumes it with a longer schedule)"
        out.append(f"{cmd}{note}")
    return out


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def _engine_section(runs: list[dict]) -> list[str]:
    """Acceptance at k = 1..8 on the engine, greedy and at the window's sampling, per draft measured
    (``bench.draft_bench`` results), and tokens/s with k = 4 against plain decoding."""
    if not runs:
        return []
    first = runs[0]
    L = ["## Speculative decoding on the engine: acceptance at k = 1…8, greedy and sampled", "",
         f"`python -m bench.draft_bench`: {first['prompts']} held-out code prompts of {first['prompt_tokens']} tokens "
         f"(each ends after a `def` line of a held-out standard-library file), {first['new_tokens']} tokens written "
         "per prompt on the real engine (paged KV cache, the verify rule of `model/speculative.py`). Acceptance = "
         "guesses kept ÷ guesses proposed over all prompts; sampled = temperature 0.8, top-p 0.95 (the window's "
         "default), where a guess is kept with probability min(1, p/q) (Leviathan et al. 2023). One torch thread, "
         "2 shared CPU cores.", "",
         "| draft | bytes (× target) | setting | " + " | ".join(f"k={r['k']}" for r in first["greedy"]) + " |",
         "|---|---|---|" + "---|" * len(first["greedy"])]
    for r in runs:
        name = Path(r["draft"]).name
        for setting in ("greedy", "sampling"):
            if setting in r:
                label = "greedy" if setting == "greedy" else "T 0.8, top-p 0.95"
                L.append(f"| {name} | {r['bytes']['draft']:,} ({r['bytes_ratio']:.2f}×) | {label} | "
                         + " | ".join(f"{x['acceptance']:.2f}" for x in r[setting]) + " |")
    L.append("")
    speeds = [r for r in runs if r.get("speed")]
    if speeds:
        L += ["Tokens per second with k = 4 at temperature 0.8 against plain decoding, rounds interleaved (ABBA), "
              "median and min–max of the rounds; per-pass cost: one decode pass at batch 1, median ms.", "",
              "| draft | plain tok/s | with draft tok/s | speed-up (medians) | rounds faster | target pass ms | "
              "draft pass ms |", "|---|---|---|---|---|---|---|"]
        for r in speeds:
            sp, pm = r["speed"], r.get("pass_ms") or {}
            pl, dr = sp["plain_tokens_per_s"], sp["draft_tokens_per_s"]
            L.append(f"| {Path(r['draft']).name} | {pl['median']:.0f} ({pl['min']:.0f}–{pl['max']:.0f}) | "
                     f"{dr['median']:.0f} ({dr['min']:.0f}–{dr['max']:.0f}) | **{sp['speedup']:.2f}×** | "
                     f"{sum(x > 1 for x in sp['round_speedups'])} of {len(sp['round_speedups'])} | "
                     f"{(pm.get('target') or {}).get('forward_ms', 0):.2f} | "
                     f"{(pm.get('draft') or {}).get('forward_ms', 0):.2f} |")
        L.append("")
    return L


def _intro_section() -> list[str]:
    """The title and what the two bundled models are."""
    L = ["# Bundled models: One Trip's tiny GPT-2 and its draft", "",
         "Generated by `python -m model.training.model_card` from the files in this folder and the held-out split "
         "of the corpus; do not edit by hand.", "",
         "Two GPT-2s trained from scratch for this app, on CPU, with the script in `model/training/train.py`: "
         "`target/` is the model the app runs, `draft/` is its \"apprentice\" (小徒弟) for speculative decoding. "
         "Both are in the Hugging Face GPT-2 layout (`config.json`, `model.safetensors`, `tokenizer.json`; "
         "the target's weights in "
         "fp32, the draft's as int8 rows with a float32 scale per row, `model/quantize.py`) and share one tokenizer. "
         "They are tiny and under-trained: they write Python-looking code and English-looking sentences, and "
         "they are wrong about almost everything. They exist so every number in the app is measured "
         "on a real model, not to answer questions.", "",
         "The Chinese pair, `poems/` and `poems-draft/`, has its own card: [poems/README.md](poems/README.md).", ""]
    return L


def _models_section(t: dict, d: dict, assets_bytes: int) -> list[str]:
    """Shapes, parameters, bytes and load times of the target (t) and the draft (d)."""
    L = ["## Models", "", "| | target | draft |", "|---|---|---|"]
    for key, label in (("n_layer", "layers"), ("n_embd", "width (n_embd)"), ("n_head", "heads"),
                       ("n_positions", "context (n_positions)"), ("vocab_size", "vocabulary")):
        L.append(f"| {label} | {t[key]} | {d[key]} |")
    L.append(f"| parameters (LM head tied to wte) | {t['parameters']:,} | {d['parameters']:,} "
             f"({d['parameters'] / t['parameters']:.3f} of target) |")
    L.append(f"| weight bytes (as stored and read per trip) | {t['weight_bytes']:,} | {d['weight_bytes']:,} "
             f"({d['weight_bytes'] / t['weight_bytes']:.3f} of target) |")
    L.append(f"| model.safetensors | {_mb(t['file_bytes'])} | {_mb(d['file_bytes'])} |")
    L.append(f"| load time here (`load_pretrained`, best of 3) | {t['load_seconds']:.3f} s | "
             f"{d['load_seconds']:.3f} s |")
    L += ["", f"All of `assets/` when this card was written: {_mb(assets_bytes)}.", ""]
    return L


def _heldout_section(t: dict, d: dict) -> list[str]:
    """Held-out loss per domain, in bits per byte and nats per token."""
    L = ["## Held-out loss", "",
          "Bits per UTF-8 byte (lower is better) on the held-out documents, which neither the tokenizer nor the "
          "models saw; windows of n_positions (512) tokens, every token after the first of a window predicted once. "
          "Bits per byte do not depend on the tokenizer, so they compare with other models' figures.", "",
          "| held-out | tokens | bytes | target bpb | draft bpb | target nats/token | draft nats/token |",
          "|---|---|---|---|---|---|---|"]
    for domain in t["heldout"]:
        a, b = t["heldout"][domain], d["heldout"][domain]
        L.append(f"| {domain} | {a['tokens']:,} | {a['bytes']:,} | **{a['bpb']:.3f}** | {b['bpb']:.3f} | "
                 f"{a['nats_per_token']:.3f} | {b['nats_per_token']:.3f} |")
    L.append("")
    return L


def _acceptance_section(res: dict, t: dict, d: dict) -> list[str]:
    """The draft's greedy acceptance per held-out split, and what the draft is."""
    L = ["## Speculative decoding: the draft's greedy acceptance", "",
          f"At {res['acceptance']['code']['positions']} evenly spaced positions of each held-out split, with the "
          f"{res['acceptance']['code']['context']} tokens before it as context, the draft guesses "
          f"{GUESSES} tokens greedily and the target's greedy tokens are computed; a guess is accepted while it "
          "matches (a verify pass keeps the matching prefix, plus one token of its own).", "",
          "| held-out | acceptance rate (accepted / 4) | mean accepted of 4 | tokens per target pass | "
          "accepted 0 / 1 / 2 / 3 / 4 |", "|---|---|---|---|---|"]
    for domain, a in res["acceptance"].items():
        L.append(f"| {domain} | **{a['rate']:.3f}** | {a['mean_accepted']:.2f} | {a['tokens_per_target_pass']:.2f} | "
                 f"{' / '.join(str(h) for h in a['histogram'])} |")
    recipe = (d.get("training") or {}).get("recipe") or {}
    kept = recipe.get("init_layers")
    if d["n_embd"] == t["n_embd"] and kept:
        skipped = [i for i in range(t["n_layer"]) if i not in kept]
        shape = (f"the draft is the target's own blocks {', '.join(map(str, kept))} (it skips block"
                 f"{'s' if len(skipped) > 1 else ''} {', '.join(map(str, skipped))}) with its embeddings and final "
                 f"norm (layer skipping: self-speculative decoding), stored as int8 rows, "
                 f"{d['weight_bytes'] / t['weight_bytes']:.2f} of the target's bytes")
    elif d["n_embd"] == t["n_embd"] and d["n_layer"] < t["n_layer"]:
        first = ("first layer" if d["n_layer"] == 1 else f"first {d['n_layer']} layers") + f" of {t['n_layer']}"
        shape = (f"the draft is the target's own {first} with its embeddings and final norm (an early exit: "
                 f"self-speculative decoding), {d['parameters'] / t['parameters']:.2f} of its parameters")
    else:
        shape = (f"the draft is a separate model with {d['parameters'] / t['parameters']:.2f} of the target's "
                 f"parameters, {d['file_bytes'] / t['file_bytes']:.2f} of its bytes, width {d['n_embd']} with its "
                 f"own dictionary and {d['n_layer']} layers")
    how = ("distilled on the corpus and on the target's own greedy text" if recipe.get("selfgen_frac") else
           "distilled on the target's next-token distributions over the corpus (KL at temperature 1)")
    L += ["", "The source text says a draft \"often guesses 3–4 of 5 on code\"; the project aims for ≥ 0.5 on code "
          f"(issue #14). The figures above are what these two models reach: {shape}, {how}.", ""]
    return L


def _samples_section(res: dict) -> list[str]:
    """The greedy continuations of both models, prompt first."""
    L = ["## Greedy continuations", "",
          "64 tokens, greedy (argmax), exactly as generated; the prompt is shown first, then the continuation.", ""]
    for s in res["samples"]:
        L += [f"### {s['kind']}: `{s['prompt'].splitlines()[0]}`", "", "target:", "",
              _fence(s["prompt"] + s["target"]), "", "draft:", "", _fence(s["prompt"] + s["draft"]), ""]
    return L


def _training_section(tt: dict, dt: dict) -> list[str]:
    """The training runs' figures and recipes (tt, dt: each model's training.json)."""
    L = ["## Training", "", "| | target | draft |", "|---|---|---|"]
    rows = [("steps", "steps"), ("tokens seen", "tokens_seen"), ("wall time", "wall_seconds"),
            ("threads", "threads"), ("device", "device"), ("hardware", "hardware"), ("torch", "torch"),
            ("seed", "seed")]
    for label, key in rows:
        a, b = tt.get(key), dt.get(key)
        if key == "wall_seconds":
            a, b = f"{a / 60:.1f} min", f"{b / 60:.1f} min"
        elif isinstance(a, int) and key != "seed":
            a, b = f"{a:,}", f"{b:,}"
        L.append(f"| {label} | {a} | {b} |")
    for label, key in (("batch × block", None), ("peak lr", "lr"), ("warm-up steps", "warmup"),
                       ("final fraction at block 512", "long_frac"), ("distillation α (KL weight)", "distill_alpha")):
        if key is None:
            a = f"{tt['recipe']['batch']} × {tt['recipe']['block']}"
            b = f"{dt['recipe']['batch']} × {dt['recipe']['block']}"
        else:
            a, b = tt["recipe"][key], dt["recipe"][key]
            if key == "distill_alpha":
                a = "— (plain LM)" if not tt.get("teacher") else a
                b = f"{b} (teacher: {dt['teacher']})" if dt.get("teacher") else "— (plain LM)"
        L.append(f"| {label} | {a} | {b} |")
    L += ["", "Recipe (both): AdamW (β 0.9/0.95, weight decay 0.1 on matrices), linear warm-up then cosine decay "
          "to 10 % of the peak, gradient clipping 1.0, fp32, random windows of the training tokens (the windows "
          "of step *s* come from a generator seeded with (seed, s), so a resumed run sees the same data). Most "
          "steps use 256-token windows (fast on CPU); the final fraction uses 512-token windows with half the batch "
          "so that every position embedding up to 511 is trained. The draft is distilled from the target: its "
          "loss is (1 − α)·cross-entropy + α·KL(target ‖ draft)."
          + (" Its training starts from the target's weights (the blocks it keeps) and ends in fp32; "
             "`python -m model.training.quantize` then stores it as int8 rows." if dt.get("quantized") else ""), "",
          "![target loss](target/loss.png)", "", "![draft loss](draft/loss.png)", ""]
    return L


def _reproduce_section(tt: dict, dt: dict) -> list[str]:
    """The commands that rebuild the corpus, the models and this card."""
    L = ["## Reproduce", "", "On a Debian machine with Python 3.11 and this repository installed "
          "(`pip install -e .[train]` for matplotlib):", "", "```sh",
          "apt-get install python3.11-doc manpages-zh",
          "python -m model.training.corpus --out corpus",
          *_commands(tt), *_commands(dt),
          *([dt["quantized"]["command"]] if dt.get("quantized") else []),
          "python -m model.training.model_card --corpus corpus --models assets/models", "```", "",
          "A resumed part keeps the weights, optimizer state and step of the checkpoint; with a new `--steps` "
          "the cosine schedule is recomputed for the new length from the step it resumes at. "
          "`--resume` continues an interrupted run from `runs/<config>/ckpt.pt`; `--device cuda` trains on a GPU. "
          "Results are bit-for-bit only on the same torch build and CPU.", ""]
    return L


def _corpus_section(manifest: dict) -> list[str]:
    """Where the training text comes from, per domain (corpus.json)."""
    L = ["## Corpus", "", "Built by `python -m model.training.corpus` from files on disk (nothing downloaded); "
          "each file is one document, ended by `<|endoftext|>`; a document is held out when the SHA-1 of "
          f"`<domain>/<path>` divides by {manifest['heldout_every']}. "
          "The full list of held-out files is in `corpus.json`.", "",
          "| domain | source | license | train files | train bytes | train tokens | held-out files | held-out bytes |",
          "|---|---|---|---|---|---|---|---|"]
    for domain, m in manifest["domains"].items():
        L.append(f"| {domain} | `{m['source']}` | {m['license']} | {m['train_files']} | {m['train_bytes']:,} | "
                 f"{m['train_tokens']:,} | {m['heldout_files']} | {m['heldout_bytes']:,} |")
    L += ["", f"Training tokens in all: {manifest['train_tokens']:,} ({manifest['train_bytes']:,} bytes).", "",
          "- prose: the reStructuredText sources of the Python 3.11 documentation, markup included.",
          "- code: `*.py` files of the CPython 3.11 standard library, without `test`/`tests`/`idle_test` folders and "
          "site-packages.",
          "- zh: Simplified Chinese manual pages with roff markup stripped, pages with under 10 % CJK characters "
          "skipped, capped at about 2 MB; there so the tokenizer keeps common Chinese characters whole "
          "(常用字多为一字一块).", ""]
    return L


def _tokenizer_section(res: dict, manifest: dict) -> list[str]:
    """The tokenizer and how it cuts the example texts."""
    tk = res["tokenizer"]
    cjk = manifest.get("cjk_common_whole")
    L = ["## Tokenizer", "",
          f"Byte-level BPE (GPT-2 style: ByteLevel pre-tokenizer without prefix space, ByteLevel decoder) trained "
          f"with the `tokenizers` library on the training documents only; {tk['vocab_size']:,} tokens, "
          f"`<|endoftext|>` = id {tk['eos_token_id']} (used as both bos and eos). Fingerprint "
          f"`{tk['fingerprint'][:16]}…`.", ""]
    if cjk:
        L += [f"Of the {cjk['top']} most frequent CJK characters in the Chinese text, {cjk['whole']} are a single "
              "token each; rarer characters fall back to 2–3 byte tokens.", ""]
    for text, labels in tk["examples"].items():
        L.append(f"- `{text}` → {len(labels)} tokens: " + " ".join(f"`{x}`" for x in labels))
    return L


def _limits_section() -> list[str]:
    """What the models cannot do, and the licenses."""
    return ["", "## Limits", "",
          "- Tiny and under-trained (a few million tokens): the text is fluent-looking but the facts and the code "
          "are not to be trusted.",
          "- English and Python only in practice; the Chinese text is a small share of training.",
          "- The held-out code includes three generated codec tables (`encodings/cp037.py`, `cp500.py`, "
          "`cp1258.py`, about a tenth of its bytes); such tables are easy to predict and lift the code figures a "
          "little. The training code has many more of them.",
          "- Licenses: the Python documentation and standard library are under the PSF License; the Chinese manual "
          "pages are under the GFDL-1.2+ (a few pages other free licenses). The weights are a statistical summary "
          "of that text; the shipped continuations above show how little of it they can reproduce.", ""]


def render(res: dict, manifest: dict, assets_bytes: int) -> str:
    """The model card (README.md of assets/models) from eval.json (res) and corpus.json (manifest), in Markdown."""
    t, d = res["models"]["target"], res["models"]["draft"]
    tt, dt = t["training"], d["training"]
    L = _intro_section() + _models_section(t, d, assets_bytes) + _heldout_section(t, d)
    L += _acceptance_section(res, t, d)
    L += _engine_section(res.get("engine_acceptance") or [])
    L += _samples_section(res) + _training_section(tt, dt) + _reproduce_section(tt, dt)
    L += _corpus_section(manifest) + _tokenizer_section(res, manifest) + _limits_section()
    return "\n".join(L)

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model.training.model_card", description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=Path("corpus"))
    p.add_argument("--models", type=Path, default=Path("assets/models"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--render-only", action="store_true",
                   help="re-render README.md from the eval.json and corpus.json already in --models (no corpus)")
    p.add_argument("--engine-acceptance", type=Path, nargs="*", default=[],
                   help="bench.draft_bench JSON files to show (acceptance at k = 1..8, greedy and sampled)")
    p.add_argument("--keep-corpus-json", action="store_true",
                   help="keep assets/models/corpus.json (the target's corpus) instead of the --corpus manifest")
    p.add_argument("--skip-domains", default="", help="held-out domains to leave out, comma-separated (e.g. zh)")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    if a.render_only:
        res = json.loads((a.models / "eval.json").read_text(encoding="utf-8"))
        if a.engine_acceptance:  # the engine's figures measured since: kept in eval.json too
            res["engine_acceptance"] = [json.loads(f.read_text(encoding="utf-8")) for f in a.engine_acceptance]
            (a.models / "eval.json").write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    else:
        if not a.keep_corpus_json:
            shutil.copyfile(a.corpus / "manifest.json", a.models / "corpus.json")
        res = evaluate(a.corpus, a.models, tuple(x for x in a.skip_domains.split(",") if x), a.engine_acceptance)
        (a.models / "eval.json").write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    manifest = json.loads((a.models / "corpus.json").read_text(encoding="utf-8"))
    assets = a.models.parent
    assets_bytes = sum(f.stat().st_size for f in assets.rglob("*") if f.is_file())
    (a.models / "README.md").write_text(render(res, manifest, assets_bytes), encoding="utf-8")
    print(f"wrote {a.models / 'README.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
