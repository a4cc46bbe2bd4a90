"""Train the bundled GPT-2s on the corpus built by ``model.training.corpus``: seeded, resumable, CPU-friendly.

    python -m model.training.train --config target --corpus corpus --out assets/models/target --threads 1
    python -m model.training.train --config draft --corpus corpus --out assets/models/draft --threads 1 \
        --teacher assets/models/target

Recipe: AdamW (β = 0.9, 0.95; weight decay 0.1 on matrices only), linear warm-up then cosine decay to 10 % of
the peak learning rate, gradient clipping at 1.0, fp32. Each step reads ``batch`` random windows of
``block + 1`` tokens from ``train.bin``; the windows of step ``s`` come from a generator seeded with
``(seed, s)``, so a resumed run reads exactly what an uninterrupted one would. The last ``long_frac`` of the
steps use windows of ``n_positions`` tokens (half the batch, same tokens per step) so that every position
embedding is trained. With ``--teacher`` the loss is ``(1 - α)·CE + α·KL(teacher ‖ student)`` (distillation; the
teacher must share the tokenizer), which raises the draft's agreement with the target; a recipe with
``selfgen_frac`` also trains on windows that end in the teacher's own greedy text (sequence-level distillation).

A run directory (``--run-dir``, default ``runs/<config>``) holds ``ckpt.pt`` (model, optimizer, step, elapsed
time), ``loss.csv`` and ``loss.png``; every ``--ckpt-every`` steps the checkpoint is written and the model is
exported to ``--out`` in the Hugging Face layout with ``training.json`` (the run's summary) beside it.
``--resume`` continues from ``ckpt.pt``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from model.gpt2 import GPT2, GPT2Config
from model.hardware import cpu_name
from model.training.starts import early_exit_state, grown_state, thin_embeddings  # noqa: F401 (tests use them)


@dataclass(frozen=True)
class TrainConfig:
    """One named recipe. Sizes are chosen for what two CPU cores can train in well under an hour."""

    n_embd: int
    n_layer: int
    n_head: int
    n_positions: int = 512  # the app's context window; the engine needs ≥ 512
    batch: int = 8  # sequences per step at the short block
    block: int = 256  # tokens per sequence for most of the run (attention cost grows with T)
    long_frac: float = 0.12  # final fraction of steps at block = n_positions, batch halved
    steps: int = 3000
    lr: float = 2e-3  # a high peak suits a small, under-trained model
    min_lr_frac: float = 0.1
    warmup: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    distill_alpha: float = 0.7  # weight of the KL term when a teacher is given
    eval_every: int = 200
    ckpt_every: int = 200
    eval_windows: int = 8  # held-out windows of `block` tokens per domain for the logged loss
    selfgen_frac: float = 0.0  # with a teacher: share of each batch that is the teacher's own greedy text
    selfgen_tokens: int = 32  # tokens the teacher writes at the end of each such window
    selfgen_windows: int = 1536  # such windows made once, before the first step
    bf16: bool = False  # forward and backward matmuls in bfloat16 (torch.autocast), weights and optimizer in fp32
    init_layers: tuple[int, ...] | None = None  # with --init-from: which of its blocks start this model's (in order)


CONFIGS: dict[str, TrainConfig] = {
    # ~4.3M parameters with a 4096 vocabulary; ~2.5k tokens/s for training on one core of a Xeon.
    "target": TrainConfig(n_embd=256, n_layer=4, n_head=4),
    # ~0.67M parameters (< 1/5 of the target), two layers so that it can learn to copy (induction heads).
    "draft": TrainConfig(n_embd=96, n_layer=2, n_head=3, batch=16, steps=1400, lr=3e-3),
    # A further stage for "target" (--init-from assets/models/target): larger batches, a lower peak, fresh cosine.
    "target-more": TrainConfig(n_embd=256, n_layer=4, n_head=4, batch=16, steps=1000, lr=1e-3, warmup=50,
                               long_frac=0.1, eval_every=100, ckpt_every=100),
    # The third stage for "target" (--init-from assets/models/target): 4,000 steps of 4,096 tokens (16.4M, about
    # two more passes over the corpus) with bfloat16 matmuls, which train ~1.6x faster on a CPU with AVX512-BF16.
    "target-long": TrainConfig(n_embd=256, n_layer=4, n_head=4, batch=16, steps=4000, lr=8e-4, warmup=100,
                               long_frac=0.1, eval_every=250, ckpt_every=250, bf16=True),
    # A fourth, short stage at a low rate (--init-from the third): 900 steps, 3.7M tokens, 30.3M seen in all.
    "target-final": TrainConfig(n_embd=256, n_layer=4, n_head=4, batch=16, steps=900, lr=1.5e-4, min_lr_frac=0.5,
                                warmup=20, long_frac=0.1, eval_every=300, ckpt_every=300, bf16=True),
    # The Chinese poetry model (corpus from ``python -m model.training.poems``): poems are short, so a short block;
    # a 6,144-token vocabulary (one token per common character) makes the LM head about 40 % of the parameters.
    "poems": TrainConfig(n_embd=256, n_layer=4, n_head=4, batch=32, block=128, long_frac=0.04, steps=1800,
                         eval_every=100, ckpt_every=100),
    # The code draft, distilled again on the target's own greedy text (sequence-level distillation) as well as on
    # the corpus (--init-from assets/models/draft --teacher assets/models/target): what the draft must guess in
    # speculative decoding is the target's next tokens, and after the first guess those follow the target's text.
    "draft-seq": TrainConfig(n_embd=96, n_layer=2, n_head=3, batch=16, steps=1200, lr=2e-3, warmup=50,
                             long_frac=0.05, distill_alpha=0.9, selfgen_frac=0.5, eval_every=100, ckpt_every=100,
                             bf16=True),
    # An early-exit code draft (--init-from assets/models/target: its embeddings, first block and final norm, see
    # early_exit_state), distilled like draft-seq: the target's own first chapter learns to say what the other
    # three would have. ~1.97M parameters (0.45 of the target), one block instead of the draft's two.
    "draft-ee": TrainConfig(n_embd=256, n_layer=1, n_head=4, batch=16, steps=1200, lr=1e-3, warmup=50,
                            long_frac=0.05, distill_alpha=0.9, selfgen_frac=0.5, eval_every=100, ckpt_every=100,
                            bf16=True),
    # Its second stage (--init-from the first, --seed 2: other windows, other teacher text): 2,000 more steps.
    "draft-ee-more": TrainConfig(n_embd=256, n_layer=1, n_head=4, batch=16, steps=2000, lr=6e-4, warmup=30,
                                 long_frac=0.05, distill_alpha=0.9, selfgen_frac=0.5, eval_every=200,
                                 ckpt_every=200, bf16=True),
    # The thin code draft (issue 35): width 128 with its own tied 4,096 x 128 dictionary, two blocks, ~0.98M
    # parameters = 3.9 MB in fp32, 0.23 of the target's bytes. Distilled on the target's next-token distributions
    # (KL at temperature 1 on the corpus, DistillSpec: Zhou et al. 2024), a little CE on the text; its embeddings
    # start as the target's projected on their top 128 principal directions (--init-embed-from, thin_embeddings).
    # The shipped one ran 850 steps (3.5M tokens, ~55 min on one shared core): the load of the machine cut the
    # planned 1,500 twice by --resume --steps N (its training.json lists each command and the steps it ran).
    "draft-thin": TrainConfig(n_embd=128, n_layer=2, n_head=4, batch=16, steps=1500, lr=3e-3, warmup=60,
                              long_frac=0.05, distill_alpha=0.95, eval_every=100, ckpt_every=100, bf16=True),
    # The layer-skip code draft (issue 35), --init-from assets/models/target --teacher assets/models/target: the
    # target's blocks 0, 2 and 3 (dropping block 1 costs the least acceptance, measured: docs/benchmarks.md),
    # distilled on the target's distributions, then stored as int8 rows (model/quantize.py): 0.21x its bytes.
    "draft-skip": TrainConfig(n_embd=256, n_layer=3, n_head=4, batch=16, steps=1200, lr=5e-4, warmup=30,
                              long_frac=0.05, distill_alpha=0.95, eval_every=100, ckpt_every=50, bf16=True,
                              init_layers=(0, 2, 3)),
    # The poems model's layer-skip draft, made as draft-skip (--init-from / --teacher assets/models/poems): its
    # blocks 0, 1 and 3 (dropping block 2 cost the least acceptance of the four on the poem presets, measured).
    "poems-draft-skip": TrainConfig(n_embd=256, n_layer=3, n_head=4, batch=32, block=128, long_frac=0.04, steps=900,
                                    lr=5e-4, warmup=30, distill_alpha=0.95, eval_every=100, ckpt_every=50,
                                    bf16=True, init_layers=(0, 1, 3)),
    # Its apprentice: ~0.8M parameters (the embedding is most of it), distilled from "poems".
    "poems-draft": TrainConfig(n_embd=96, n_layer=2, n_head=3, batch=32, block=128, long_frac=0.04, steps=400,
                               lr=3e-3, eval_every=100, ckpt_every=100),
    # The big books (issue 43): 512 wide, 8 blocks, 8 heads of 64: ~27.6M parameters (code) and ~28.6M (poems), 110
    # and 115 MB in fp32, larger than a desktop CPU's last-level cache, so a trip goes to the memory. Grown from the
    # family's small model with its function kept (--init-from assets/models/target: grown_state), then trained on
    # at a low peak: the start is already as good as the small model, and at 2e-4 (the small model's final rate)
    # 50 steps made held-out code 0.09 nats/token worse (3.019 against 2.934), measured. One thread, 2,048 tokens
    # a step, a held-out look every 50 steps: what one core of a 2-core machine trains in a session.
    "target-big": TrainConfig(n_embd=512, n_layer=8, n_head=8, batch=8, steps=400, lr=4e-5, min_lr_frac=0.25,
                              warmup=10, long_frac=0.05, eval_every=50, ckpt_every=50, eval_windows=32),
    # The poems pocket book saw 7.4M tokens (less than half its corpus): its big book trains on at a higher peak.
    "poems-big": TrainConfig(n_embd=512, n_layer=8, n_head=8, batch=16, block=128, long_frac=0.04, steps=300,
                             lr=6e-5, min_lr_frac=0.25, warmup=10, eval_every=50, ckpt_every=50, eval_windows=32),
    # The code book's second stage (--init-from the first's output): whole windows of 512 tokens, the context. The
    # first stage read windows of 256 but for its last 5 %, and its held-out bits per byte at windows of 512 came out
    # worse than the pocket book's (1.2292 against 1.2066 on code) while its windows of 256 had come out better.
    "target-big-long": TrainConfig(n_embd=512, n_layer=8, n_head=8, batch=4, block=512, long_frac=0.0, steps=100,
                                   lr=2e-5, min_lr_frac=0.5, warmup=5, eval_every=50, ckpt_every=50, eval_windows=16),
    # The poems book's second stage (--init-from the first's output): windows of 256 tokens. Trained at 128, both
    # the pocket book and the big one read worse past position 128 (held-out bits per byte at windows of 256: 2.4714
    # and 2.4796, at windows of 128: 2.265 and 2.246, measured); the card's split reads windows of 256.
    "poems-big-long": TrainConfig(n_embd=512, n_layer=8, n_head=8, batch=8, block=256, long_frac=0.1, steps=120,
                                  lr=2e-5, min_lr_frac=0.5, warmup=5, eval_every=40, ckpt_every=40, eval_windows=32),
    # For the tests: trains in seconds.
    "tiny-test": TrainConfig(n_embd=32, n_layer=1, n_head=2, n_positions=64, batch=4, block=32, long_frac=0.2,
                             steps=30, lr=1e-2, warmup=3, eval_every=10, ckpt_every=10, eval_windows=2),
}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate for 0-based ``step``: linear warm-up, then cosine from ``lr`` down to ``lr·min_lr_frac``."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    low = cfg.lr * cfg.min_lr_frac
    return low + 0.5 * (cfg.lr - low) * (1 + math.cos(math.pi * progress))


def block_at(step: int, cfg: TrainConfig) -> tuple[int, int]:
    """(batch, block) for ``step``: the short block most of the run, then n_positions for the last ``long_frac``."""
    if step >= cfg.steps - int(cfg.steps * cfg.long_frac):
        return max(1, cfg.batch * cfg.block // cfg.n_positions), cfg.n_positions
    return cfg.batch, cfg.block


def get_batch(data: np.ndarray, step: int, seed: int, batch: int, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows for ``step``: inputs and next-token targets, both int64 (batch, block)."""
    gen = torch.Generator().manual_seed(seed * 1_000_003 + step)
    starts = torch.randint(0, len(data) - block - 1, (batch,), generator=gen).tolist()
    win = torch.from_numpy(np.stack([data[s:s + block + 1].astype(np.int64) for s in starts]))
    return win[:, :-1], win[:, 1:]


@torch.no_grad()
def teacher_windows(teacher: GPT2, tokenizer_json: Path, data: np.ndarray, cfg: TrainConfig, seed: int,
                    device: str) -> np.ndarray:
    """The teacher's own text for sequence-level distillation: uint16 (cfg.selfgen_windows, cfg.block + 1).

    Each window is ``block + 1 - selfgen_tokens`` tokens of the corpus (random, seeded) followed by the teacher's
    greedy continuation of ``selfgen_tokens`` tokens, written by the engine (KV cache, batches of 32). Windows
    whose continuation stopped early (end of text) are replaced by others.
    """
    from model.engine import Engine
    from model.tokenizer import Tokenizer

    gen_len, ctx_len = cfg.selfgen_tokens, cfg.block + 1 - cfg.selfgen_tokens
    engine = Engine(teacher, Tokenizer.from_dir(tokenizer_json.parent), max_batch=32, prefix_cache=False)
    rng = np.random.default_rng(seed + 7)
    out: list[np.ndarray] = []
    while len(out) < cfg.selfgen_windows:
        starts = rng.integers(0, len(data) - ctx_len - 1, size=64)
        ids = {engine.add_request([int(t) for t in data[s:s + ctx_len]], max_new_tokens=gen_len): s for s in starts}
        for _ in engine.run():
            pass
        for rid, s in ids.items():
            res = engine.finished.pop(rid)
            if len(res.token_ids) == gen_len:
                out.append(np.concatenate([data[s:s + ctx_len], np.asarray(res.token_ids, dtype=np.uint16)]))
    return np.stack(out[:cfg.selfgen_windows])


def make_optimizer(model: GPT2, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)


@torch.no_grad()
def heldout_loss(model: GPT2, data: np.ndarray, windows: int, block: int, device: str) -> float:
    """Mean next-token cross-entropy in nats over the first ``windows`` windows of ``data`` (uint16)."""
    n = min(windows, (len(data) - 1) // block)
    if n <= 0:
        return float("nan")
    x = torch.from_numpy(data[:n * block + 1].astype(np.int64))
    inp = x[:-1].view(n, block).to(device)
    tgt = x[1:].view(n, block).to(device)
    was_training = model.training
    model.eval()
    loss = F.cross_entropy(model(inp).flatten(0, 1).float(), tgt.flatten()).item()
    model.train(was_training)
    return loss


def plot_losses(csv_path: Path, png_path: Path, title: str) -> bool:
    """Draw loss.csv to a PNG with matplotlib (the optional ``train`` extra). Returns False if it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = list(csv.DictReader(csv_path.open()))
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    tok = [int(r["tokens"]) / 1e6 for r in rows]
    ax.plot(tok, [float(r["loss"]) for r in rows], lw=0.8, alpha=0.7, label="train (one batch)")
    for key in [k for k in rows[0] if k.startswith("heldout_")]:
        pts = [(t, float(r[key])) for t, r in zip(tok, rows) if r.get(key) not in (None, "", "nan")]
        if pts:
            ax.plot(*zip(*pts), marker="o", ms=3, label=key.replace("_", " "))
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("cross-entropy (nats / token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return True


def export(model: GPT2, out: Path, tokenizer_json: Path, summary: dict, run_dir: Path) -> None:
    """Write the HF-layout directory plus training.json, loss.csv and loss.png (small) beside it."""
    from model.checkpoint import save_pretrained

    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    save_pretrained(model, tmp, tokenizer_json)
    (tmp / "training.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    for name in ("loss.csv", "loss.png"):
        if (run_dir / name).exists():
            shutil.copyfile(run_dir / name, tmp / name)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def _corpus_vocab(tokenizer_json: Path) -> tuple[int, int]:
    """The corpus tokenizer's vocabulary size (its added tokens included) and the id of ``<|endoftext|>``."""
    vocab = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab_size = len(vocab["model"]["vocab"]) + sum(1 for t in vocab["added_tokens"]
                                                   if t["content"] not in vocab["model"]["vocab"])
    eot = next(t["id"] for t in vocab["added_tokens"] if t["content"] == "<|endoftext|>")
    return vocab_size, eot


def _load_teacher(teacher_dir: Path | None, device: str, vocab_size: int) -> GPT2 | None:
    """The distillation teacher (None without one); ValueError when its vocabulary is not the corpus's."""
    if teacher_dir is None:
        return None
    from model.checkpoint import load_pretrained
    teacher, _ = load_pretrained(teacher_dir, device=device)
    if teacher.config.vocab_size != vocab_size:
        raise ValueError("the teacher's vocabulary differs from the corpus tokenizer")
    return teacher


def _teacher_text(teacher: GPT2 | None, tokenizer_json: Path, data: np.ndarray, cfg: TrainConfig, seed: int,
                  device: str, quiet: bool) -> np.ndarray | None:
    """The teacher's own windows for sequence-level distillation (``teacher_windows``), or None when the recipe
    has no ``selfgen_frac`` or there is no teacher."""
    if teacher is None or cfg.selfgen_frac <= 0:
        return None
    selfgen = teacher_windows(teacher, tokenizer_json, data, cfg, seed, device)
    if not quiet:
        print(f"the teacher wrote {len(selfgen)} windows of its own text", file=sys.stderr, flush=True)
    return selfgen


def _start_embeddings(model: GPT2, init_embed_from: Path, cfg: TrainConfig, config_name: str, device: str,
                      vocab_size: int) -> None:
    """Load a wider model's embeddings, thinned to this recipe's width, into ``model`` (``thin_embeddings``)."""
    from model.checkpoint import load_pretrained
    wide, _ = load_pretrained(init_embed_from, device=device)
    if wide.config.vocab_size != vocab_size or wide.config.n_positions != cfg.n_positions:
        raise ValueError(f"{init_embed_from} has another vocabulary or context than the {config_name!r} recipe")
    model.load_state_dict(thin_embeddings(wide, cfg.n_embd), strict=False)
    del wide


def _start_from(model: GPT2, init_from: Path, gcfg: GPT2Config, cfg: TrainConfig, config_name: str, seed: int,
                device: str) -> dict:
    """Load the weights of an earlier model into ``model`` (grown or cut to its layers); returns that model's
    ``training.json`` ({} without one), its ``last`` losses dropped."""
    from model.checkpoint import load_pretrained
    start, _ = load_pretrained(init_from, device=device)
    if start.config.vocab_size != gcfg.vocab_size:
        raise ValueError(f"{init_from} has another vocabulary than the {config_name!r} recipe")
    if start.config.n_embd < cfg.n_embd:  # a bigger book grown from a smaller one, its function kept
        try:
            model.load_state_dict(grown_state(start.cpu(), GPT2(gcfg), seed))
        except ValueError as e:
            raise ValueError(f"{init_from} does not have the shape of the {config_name!r} recipe: {e}") from None
    elif start.config.n_embd != cfg.n_embd or start.config.n_head != cfg.n_head \
            or start.config.n_positions != cfg.n_positions or start.config.n_layer < cfg.n_layer:
        raise ValueError(f"{init_from} does not have the shape of the {config_name!r} recipe")
    else:
        model.load_state_dict(early_exit_state(start, cfg.n_layer, cfg.init_layers))
    old = init_from / "training.json"
    earlier = json.loads(old.read_text(encoding="utf-8")) if old.exists() else {}
    earlier.pop("last", None)
    return earlier


def _trim_loss_csv(csv_path: Path, step: int) -> None:
    """Drop the rows an interrupted run logged after its checkpoint at ``step``; earlier stages' rows stay."""
    with csv_path.open(newline="") as f:
        rows = list(csv.reader(f))
    # earlier stages' rows have steps written "-N" (or "--N" two stages back): they all stay
    keep = [rows[0]] + [r for r in rows[1:] if r[0].startswith("-") or int(r[0]) <= step]
    with csv_path.open("w", newline="") as f:
        csv.writer(f).writerows(keep)


def _new_loss_csv(csv_path: Path, heldout: dict, init_from: Path | None) -> None:
    """Start loss.csv with its header and, for a further stage, the earlier stage's rows (steps written "-N")."""
    header = ["step", "tokens", "lr", "loss", *(f"heldout_{d}" for d in heldout), "elapsed_s"]
    with csv_path.open("w", newline="") as f:
        csv.writer(f).writerow(header)
        old_csv = init_from / "loss.csv" if init_from is not None else None
        if old_csv is not None and old_csv.exists():  # the earlier stage's curve, so the plot shows it all
            with old_csv.open(newline="") as g:
                for r in csv.DictReader(g):
                    csv.writer(f).writerow([r.get(k, "") if k != "step" else f"-{r['step']}" for k in header])


@dataclass
class _Run:
    """One training run in progress: what it trains and where, and its counters (saved in the checkpoint)."""

    config_name: str
    cfg: TrainConfig
    seed: int
    device: str
    model: GPT2
    opt: torch.optim.AdamW
    out: Path
    run_dir: Path
    tokenizer_json: Path
    teacher_dir: Path | None
    this_run: dict
    step: int = 0
    elapsed: float = 0.0  # seconds of training, checkpoints left out
    tokens_seen: int = 0
    history: list = field(default_factory=list)  # earlier runs this checkpoint came from: command, from/to_step
    earlier: dict | None = None

    @property
    def ckpt_path(self) -> Path:
        return self.run_dir / "ckpt.pt"

    @property
    def csv_path(self) -> Path:
        return self.run_dir / "loss.csv"

    def resume(self, quiet: bool) -> None:
        """Continue from ckpt.pt: weights, optimizer, counters, history; loss.csv cut back to its step."""
        ck = torch.load(self.ckpt_path, map_location=self.device, weights_only=False)
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["optimizer"])
        self.step, self.elapsed, self.tokens_seen = ck["step"], ck["elapsed"], ck["tokens_seen"]
        self.history = ck.get("history")
        if self.csv_path.exists():  # drop rows logged after the checkpoint by the interrupted run
            _trim_loss_csv(self.csv_path, self.step)
        if self.history is None:  # a checkpoint from before the history was kept: take the command it exported
            old = self.out / "training.json"
            cmd = json.loads(old.read_text(encoding="utf-8")).get("command") if old.exists() else None
            self.history = [{"command": cmd, "from_step": 0, "to_step": self.step}]
        self.earlier = ck.get("earlier", self.earlier)
        if not quiet:
            print(f"resumed at step {self.step}", file=sys.stderr)

    def runs_so_far(self) -> list[dict]:
        return self.history + [dict(self.this_run, to_step=self.step)]

    def summary(self, last: dict) -> dict:
        """What ``training.json`` holds; ``last``: the latest logged losses (nats/token)."""
        return {
            "config": self.config_name, "recipe": asdict(self.cfg), "seed": self.seed, "steps": self.step,
            "tokens_seen": self.tokens_seen, "wall_seconds": round(self.elapsed, 1),
            "threads": torch.get_num_threads(), "device": self.device,
            "hardware": cpu_name() if self.device == "cpu" else torch.cuda.get_device_name(),
            "torch": torch.__version__, "python": platform.python_version(),
            "parameters": self.model.num_parameters(), "teacher": str(self.teacher_dir) if self.teacher_dir else None,
            "command": self.this_run["command"],
            "runs": self.runs_so_far(),  # every command that made these weights, with the steps it ran
            "earlier": self.earlier,  # the training of the model this stage started from (--init-from), or None
            "last": last,
        }

    def checkpoint(self, last: dict) -> None:
        """Write ckpt.pt and loss.png, and export the model with its summary to ``out``."""
        torch.save({"model": self.model.state_dict(), "optimizer": self.opt.state_dict(), "step": self.step,
                    "elapsed": self.elapsed, "tokens_seen": self.tokens_seen, "config": asdict(self.cfg),
                    "history": self.runs_so_far(), "earlier": self.earlier}, self.run_dir / "ckpt.tmp")
        os.replace(self.run_dir / "ckpt.tmp", self.ckpt_path)
        plot_losses(self.csv_path, self.run_dir / "loss.png",
                    f"{self.config_name}: {self.model.num_parameters() / 1e6:.2f}M parameters")
        export(self.model, self.out, self.tokenizer_json, self.summary(last), self.run_dir)


def _batch_at(data: np.ndarray, step: int, cfg: TrainConfig, seed: int,
              selfgen: np.ndarray | None) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Step ``step``'s inputs and targets (B, T) on the CPU, part of them the teacher's own text when
    ``selfgen`` is given; with the batch size B and window T."""
    batch, block = block_at(step, cfg)
    x, y = get_batch(data, step, seed, batch, block)
    if selfgen is not None and block == cfg.block:  # part of the batch is the teacher's own text
        n = int(round(batch * cfg.selfgen_frac))
        pick = torch.randint(0, len(selfgen), (n,), generator=torch.Generator().manual_seed(seed + step))
        win = torch.from_numpy(selfgen[pick.numpy()].astype(np.int64))
        x, y = torch.cat([win[:, :-1], x[n:]]), torch.cat([win[:, 1:], y[n:]])
    return x, y, batch, block


def _losses(model: GPT2, teacher: GPT2 | None, x: torch.Tensor, y: torch.Tensor, cfg: TrainConfig,
            device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The cross-entropy on ``y`` (nats/token) and the loss to minimise (mixed with the KL to the teacher)."""
    with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=cfg.bf16):
        logits = model(x)  # (B, T, V)
    logits = logits.float()
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    if teacher is None:
        return loss, loss
    with torch.no_grad(), torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=cfg.bf16):
        t_logp = F.log_softmax(teacher(x).float(), dim=-1)  # (B, T, V)
    kl = F.kl_div(F.log_softmax(logits, dim=-1), t_logp, log_target=True, reduction="none").sum(-1).mean()
    return loss, (1 - cfg.distill_alpha) * loss + cfg.distill_alpha * kl


def _log_row(run: _Run, loss: torch.Tensor, heldout: dict, quiet: bool) -> tuple[dict, dict | None]:
    """The loss.csv row after a step, the held-out losses measured on evaluation steps; with the new ``last``
    (the train and held-out losses) on those steps, else None."""
    cfg, step = run.cfg, run.step
    row = {"step": step, "tokens": run.tokens_seen, "lr": f"{lr_at(step - 1, cfg):.3g}", "loss": f"{loss.item():.4f}",
           **{f"heldout_{d}": "" for d in heldout}, "elapsed_s": f"{run.elapsed:.1f}"}
    if not (step % cfg.eval_every == 0 or step == cfg.steps):
        return row, None
    for d, arr in heldout.items():
        row[f"heldout_{d}"] = f"{heldout_loss(run.model, arr, cfg.eval_windows, cfg.block, run.device):.4f}"
    last = {k: row[k] for k in row if k == "loss" or k.startswith("heldout_")}
    if not quiet:
        held = " ".join(f"{d} {row[f'heldout_{d}']}" for d in heldout)
        print(f"step {step}/{cfg.steps} loss {row['loss']} held-out {held} lr {row['lr']} {run.elapsed:.0f} s",
              file=sys.stderr, flush=True)
    return row, last


def _train_loop(run: _Run, data: np.ndarray, heldout: dict, teacher: GPT2 | None, selfgen: np.ndarray | None,
                quiet: bool, stop_after: int | None) -> dict:
    """Step until the recipe's steps (or ``stop_after``) are done, logging and checkpointing; returns ``last``."""
    cfg, model, opt, device = run.cfg, run.model, run.opt, run.device
    last: dict = {}
    t_mark = time.time()
    while run.step < cfg.steps:
        for g in opt.param_groups:
            g["lr"] = lr_at(run.step, cfg)
        x, y, batch, block = _batch_at(data, run.step, cfg, run.seed, selfgen)
        x, y = x.to(device), y.to(device)
        loss, total = _losses(model, teacher, x, y, cfg, device)
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        run.step += 1
        run.tokens_seen += batch * block
        now = time.time()
        run.elapsed += now - t_mark
        t_mark = now
        row, new_last = _log_row(run, loss, heldout, quiet)
        last = new_last if new_last is not None else last
        with run.csv_path.open("a", newline="") as f:
            csv.writer(f).writerow(list(row.values()))
        if run.step % cfg.ckpt_every == 0 or run.step == cfg.steps:
            run.checkpoint(last)
            t_mark = time.time()  # checkpoint time is not training time
        elif stop_after is not None and run.step >= stop_after:
            run.checkpoint(last)
        if stop_after is not None and run.step >= stop_after:
            break
    return last


def train(config_name: str, corpus: Path, out: Path, run_dir: Path, steps: int | None = None,
          device: str = "cpu", threads: int | None = 1, resume: bool = False, seed: int = 1337,
          teacher_dir: Path | None = None, quiet: bool = False, argv: list[str] | None = None,
          stop_after: int | None = None, init_from: Path | None = None,
          init_embed_from: Path | None = None) -> dict:
    """Train one model; returns the summary written to ``out/training.json``.

    corpus: a folder from ``model.training.corpus`` (tokenizer.json, train.bin, heldout/*.bin).
    The summary holds the config, steps, tokens seen, wall seconds, hardware and final losses (nats/token).
    stop_after: stop (with a checkpoint) once this many steps are done, as an interrupted run would; the
    schedule still spans the recipe's steps, so ``resume`` continues it exactly.
    init_from: start from the weights of this HF-layout model (same shape and tokenizer, or as many layers or
    more: its first ones are taken, ``early_exit_state``) with a fresh optimizer and schedule: a further stage
    of training. Its ``training.json`` is kept under ``"earlier"`` and its tokens
    and time are counted in ``tokens_seen`` and ``wall_seconds``. Ignored when resuming from a checkpoint.
    Raises ValueError when the width, heads, context or vocabulary differ, or it has fewer layers.
    init_embed_from: a wider HF-layout model (same tokenizer) whose embeddings start this one's
    (``thin_embeddings``); ignored when resuming.
    """
    if threads:
        torch.set_num_threads(threads)
    cfg = CONFIGS[config_name]
    if steps is not None:
        cfg = replace(cfg, steps=steps)
    run_dir.mkdir(parents=True, exist_ok=True)
    tokenizer_json = corpus / "tokenizer.json"
    vocab_size, eot = _corpus_vocab(tokenizer_json)
    data = np.memmap(corpus / "train.bin", dtype=np.uint16, mode="r")
    # Every held-out domain the corpus has (prose, code, zh; poems), the Chinese man pages aside (too few).
    heldout = {p.stem: np.fromfile(p, dtype=np.uint16)
               for p in sorted((corpus / "heldout").glob("*.bin")) if p.stem != "zh"}

    gcfg = GPT2Config(vocab_size=vocab_size, n_positions=cfg.n_positions, n_embd=cfg.n_embd, n_layer=cfg.n_layer,
                      n_head=cfg.n_head, bos_token_id=eot, eos_token_id=eot, name=f"one-trip-{config_name}")
    torch.manual_seed(seed)
    model = GPT2(gcfg).init_weights(seed).to(device)
    model.train()
    opt = make_optimizer(model, cfg)
    teacher = _load_teacher(teacher_dir, device, vocab_size)

    selfgen = _teacher_text(teacher, tokenizer_json, data, cfg, seed, device, quiet)
    if init_embed_from is not None:
        _start_embeddings(model, init_embed_from, cfg, config_name, device, vocab_size)

    earlier = _start_from(model, init_from, gcfg, cfg, config_name, seed, device) if init_from is not None else None
    this_run = {"command": "python -m model.training.train " + " ".join(argv) if argv is not None else None}
    run = _Run(config_name, cfg, seed, device, model, opt, out, run_dir, tokenizer_json, teacher_dir, this_run,
               earlier=earlier)
    if resume and run.ckpt_path.exists():
        run.resume(quiet)
    else:
        _new_loss_csv(run.csv_path, heldout, init_from)

    this_run["from_step"] = run.step
    if run.earlier and run.step == 0:  # a new stage on top of an earlier model: count what it had seen
        run.tokens_seen = int(run.earlier.get("tokens_seen", 0))
        run.elapsed = float(run.earlier.get("wall_seconds", 0.0))

    last = _train_loop(run, data, heldout, teacher, selfgen, quiet, stop_after)
    return run.summary(last)

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m model.training.train", description=__doc__.splitlines()[0])
    p.add_argument("--config", choices=sorted(CONFIGS), required=True)
    p.add_argument("--corpus", type=Path, default=Path("corpus"),
                   help="folder written by python -m model.training.corpus")
    p.add_argument("--out", type=Path, required=True, help="HF-layout output folder, e.g. assets/models/target")
    p.add_argument("--run-dir", type=Path, default=None, help="checkpoint and logs (default runs/<config>)")
    p.add_argument("--steps", type=int, default=None, help="override the recipe's step count")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch's default)")
    p.add_argument("--resume", action="store_true", help="continue from <run-dir>/ckpt.pt")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--stop-after", type=int, default=None, help="stop after this many steps (resume later)")
    p.add_argument("--teacher", type=Path, default=None, help="distil from this HF-layout model (same tokenizer)")
    p.add_argument("--init-from", type=Path, default=None,
                   help="start from this HF-layout model's weights (a further training stage, fresh schedule)")
    p.add_argument("--init-embed-from", type=Path, default=None,
                   help="start the embeddings from this wider model's, projected (a thinner draft of it)")
    a = p.parse_args(argv)
    s = train(a.config, a.corpus, a.out, a.run_dir or Path("runs") / a.config, a.steps, a.device, a.threads or None,
              a.resume, a.seed, a.teacher, argv=argv,
              stop_after=a.stop_after, init_from=a.init_from, init_embed_from=a.init_embed_from)
    print(json.dumps(s["last"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
