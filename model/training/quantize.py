"""``python -m model.training.quantize SRC OUT [--fp16]``: an fp32 model folder written again as int8 rows and
float32 row scales (``model/quantize.py``, ``model.checkpoint.save_pretrained``): how the bundled code draft is made;
with ``--fp16``, as float16 weights (the source's precision on disk: how the big books are shipped).

OUT gets the model files, the tokenizer, SRC's loss curve without the rows of the model SRC started from (steps
written "-N": that model's own folder keeps them) and its plot, and SRC's ``training.json`` with this command
under ``"quantized"``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import torch

from model.checkpoint import load_pretrained, save_pretrained
from model.quantize import quantize_int8


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m model.training.quantize", description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path, help="a model folder (config.json, model.safetensors, tokenizer.json)")
    p.add_argument("out", type=Path, help="the folder to write (created; its model files are replaced)")
    p.add_argument("--fp16", action="store_true", help="write float16 weights instead of int8 rows")
    a = p.parse_args(argv)
    model, _ = load_pretrained(a.src)
    weights = "fp16" if a.fp16 else "int8"
    if a.fp16:
        save_pretrained(model, a.out, a.src / "tokenizer.json", dtype=torch.float16)
    else:
        save_pretrained(quantize_int8(model), a.out, a.src / "tokenizer.json")
    if (a.src / "loss.csv").is_file():
        with (a.src / "loss.csv").open(newline="") as f:
            rows = list(csv.reader(f))
        with (a.out / "loss.csv").open("w", newline="") as f:
            csv.writer(f).writerows(rows[:1] + [r for r in rows[1:] if not r[0].startswith("-")])
        from model.training.train import plot_losses  # matplotlib, when installed (the [train] extra)
        plot_losses(a.out / "loss.csv", a.out / "loss.png", f"{a.out.name}: {model.num_parameters() / 1e6:.2f}M "
                    f"parameters, {weights} on disk")
    if (a.src / "training.json").is_file():
        summary = json.loads((a.src / "training.json").read_text(encoding="utf-8"))
        summary["quantized"] = {"command": "python -m model.training.quantize " + " ".join(argv),
                                "weights": weights, "file_bytes": (a.out / "model.safetensors").stat().st_size}
        if not a.fp16:
            summary["quantized"]["weight_bytes"] = model.weight_bytes()  # the int8 model's, as held in memory
        (a.out / "training.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"{a.out}: {weights}, {(a.out / 'model.safetensors').stat().st_size:,} bytes on disk")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
