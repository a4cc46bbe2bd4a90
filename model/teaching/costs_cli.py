"""``main.py kv-size`` and ``main.py roofline``: the cost formulas of ``model.teaching.costs`` on the command
line (a preset or a shape given by hand; text or ``--json``). Bad input: one line on stderr and status 2."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict

from model.argtypes import command_name
from model.teaching.costs import DTYPE_BYTES, GB, GIB, GPUS, KV_DTYPES, PRESETS, ModelPreset, preset_kv_bytes, roofline

__all__ = ["kv_size_main", "roofline_main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors raise instead of exiting, so the caller prints one line and returns 2."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


def _count(text: str) -> int:
    """An integer typed on the command line; ``2,000`` and ``2_000`` are accepted."""
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text[:24]!r}") from None
    if abs(n) > 10**15:
        raise argparse.ArgumentTypeError(f"too large: {text[:24]}{'…' if len(text) > 24 else ''} (at most 10**15)")
    return n


def _fmt(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,}"


def _num(v: float) -> str:
    """A quantity for text output: one decimal from 10 up, three significant digits below."""
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"


def _run(prog: str, build, argv: Sequence[str] | None) -> int:
    parser = build(prog)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        return args.func(args)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except (_UsageError, ValueError, OverflowError) as exc:
        print(f"{prog}: error: {' '.join(str(exc).split())} (see --help)", file=sys.stderr)
        return 2


def _preset_names(extra: Mapping[str, ModelPreset] | None) -> dict[str, ModelPreset]:
    presets = dict(PRESETS)
    presets.update(extra or {})
    return presets


def kv_size_main(argv: Sequence[str] | None = None, extra_presets: Mapping[str, ModelPreset] | None = None) -> int:
    """``main.py kv-size``: print the KV-cache size of a preset or of a shape given on the command line.

    ``kv-size (--preset NAME | --layers L --kv-heads H --head-dim D | --mla-dim M --layers L) --tokens N
    [--batch B] [--dtype fp32|fp16|bf16|fp8] [--json]``

    Prints bytes, GB (10**9) and GiB (2**30); with ``--json`` one JSON object on stdout. ``extra_presets``
    adds presets such as the bundled model's (see :func:`preset_from_model_dir`). Returns the exit code:
    0, or 2 with a one-line message on stderr for bad input.
    """
    presets = _preset_names(extra_presets)

    def build(prog: str) -> argparse.ArgumentParser:
        p = _Parser(prog=prog, description="KV-cache size: 2 × layers × kv_heads × head_dim × tokens × batch × "
                    "bytes (MLA: layers × mla_dim × tokens × batch × bytes).")
        p.add_argument("--preset", type=str.lower, choices=sorted(presets), help="a model preset")
        p.add_argument("--layers", type=_count, help="transformer layers")
        p.add_argument("--kv-heads", type=_count, help="key/value heads per layer")
        p.add_argument("--head-dim", type=_count, help="values per head")
        p.add_argument("--mla-dim", type=_count, help="values cached per layer per token with MLA (DeepSeek: 576)")
        p.add_argument("--tokens", type=_count, required=True, help="tokens per sequence")
        p.add_argument("--batch", type=_count, default=1, help="sequences (default 1)")
        p.add_argument("--dtype", type=str.lower, choices=KV_DTYPES, default="fp16", help="default fp16")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.set_defaults(func=lambda a: _kv_size(a, presets))
        return p

    return _run(command_name("kv-size"), build, argv)


def _kv_size(a: argparse.Namespace, presets: Mapping[str, ModelPreset]) -> int:
    shape = {"--layers": a.layers, "--kv-heads": a.kv_heads, "--head-dim": a.head_dim, "--mla-dim": a.mla_dim}
    given = [k for k, v in shape.items() if v is not None]
    if a.preset is not None:
        if given:
            raise _UsageError(f"--preset cannot be combined with {', '.join(given)}")
        preset = presets[a.preset]
    elif a.mla_dim is not None:
        if a.layers is None or a.kv_heads is not None or a.head_dim is not None:
            raise _UsageError("--mla-dim needs --layers and no --kv-heads/--head-dim")
        preset = ModelPreset(name="custom", layers=a.layers, params=0, mla_dim=a.mla_dim)
    elif given:
        missing = [k for k in ("--layers", "--kv-heads", "--head-dim") if shape[k] is None]
        if missing:
            raise _UsageError(f"missing {', '.join(missing)} (give --layers, --kv-heads and --head-dim together)")
        preset = ModelPreset(name="custom", layers=a.layers, params=0, kv_heads=a.kv_heads, head_dim=a.head_dim)
    else:
        raise _UsageError("give --preset NAME, or --layers L --kv-heads H --head-dim D, or --mla-dim M --layers L")

    total = preset_kv_bytes(preset, a.tokens, a.batch, a.dtype)  # validates the counts
    per_token = preset_kv_bytes(preset, 1, 1, a.dtype)
    bpv = DTYPE_BYTES[a.dtype]
    if preset.is_mla:
        formula = (f"{preset.layers} layers × {preset.mla_dim} MLA dims × {a.tokens:,} tokens × {a.batch:,} × "
                   f"{_fmt(bpv)} bytes")
        source = "DeepSeek-V2 (arXiv:2405.04434) §2.1, DeepSeek-V3 (arXiv:2412.19437); seed §09"
    else:
        formula = (f"2 × {preset.layers} layers × {preset.kv_heads} KV heads × {preset.head_dim} head dim × "
                   f"{a.tokens:,} tokens × {a.batch:,} × {_fmt(bpv)} bytes")
        source = "seed §09; Kwon et al. 2023 (PagedAttention) §2"
    out = {
        "preset": a.preset,
        "attention": "mla" if preset.is_mla else "mha/gqa",
        "layers": preset.layers,
        "kv_heads": preset.kv_heads,
        "head_dim": preset.head_dim,
        "mla_dim": preset.mla_dim,
        "tokens": a.tokens,
        "batch": a.batch,
        "dtype": a.dtype,
        "bytes_per_value": bpv,
        "bytes_per_token": per_token,
        "bytes": total,
        "gb": total / GB,
        "gib": total / GIB,
        "formula": formula,
        "source": source,
    }
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        who = a.preset or "custom shape"
        print(f"KV cache, {who}: {formula}")
        print(f"  = {total:,} bytes = {total / GB:,.3f} GB = {total / GIB:,.3f} GiB")
        print(f"  ({per_token:,} bytes per token per sequence; source: {source})")
    return 0


def roofline_main(argv: Sequence[str] | None = None, extra_presets: Mapping[str, ModelPreset] | None = None) -> int:
    """``main.py roofline``: weight bytes, the memory-bound decode floor in ms, and whether the weights fit.

    ``roofline --preset NAME --gpu a100|h100|h200|b200 [--dtype fp32|fp16|bf16|fp8|int4] [--json]``

    Returns the exit code: 0, or 2 with a one-line message on stderr for bad input.
    """
    presets = _preset_names(extra_presets)

    def build(prog: str) -> argparse.ArgumentParser:
        p = _Parser(prog=prog, description="Decode floor = weight bytes read per token ÷ memory bandwidth; "
                    "fits = weight bytes <= GPU memory.")
        p.add_argument("--preset", type=str.lower, choices=sorted(presets), required=True, help="a model preset")
        p.add_argument("--gpu", type=str.lower, choices=sorted(GPUS), required=True, help="an accelerator")
        p.add_argument("--dtype", type=str.lower, choices=tuple(DTYPE_BYTES), default="fp16", help="default fp16")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.set_defaults(func=lambda a: _roofline(a, presets))
        return p

    return _run(command_name("roofline"), build, argv)


def _roofline(a: argparse.Namespace, presets: Mapping[str, ModelPreset]) -> int:
    gpu = GPUS[a.gpu]
    r = roofline(presets[a.preset], gpu, a.dtype)
    out = asdict(r)
    out.update(
        weight_gb=r.weight_bytes / GB,
        gpu_memory_gb=r.gpu_memory_bytes / GB,  # both in decimal GB: compare these two
        gpu_memory_mib=gpu.memory_mib,
        gpu_memory_nominal_gb=gpu.memory_nominal_gb,  # the product's name ("141GB"), not a size
        gpu_source=gpu.source,
        formula="decode floor = bytes read per token ÷ bandwidth (batch 1, weights only; a lower bound)",
    )
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        moe = f" ({r.active_params:,} active per token)" if r.active_params != r.params else ""
        print(f"{r.preset} at {r.dtype}: {r.params:,} parameters{moe} × {_fmt(r.bytes_per_param)} bytes "
              f"= {r.weight_bytes:,} bytes ({_num(r.weight_bytes / GB)} GB)")
        print(f"  decode floor on {gpu.name.upper()}: {_num(r.bytes_read_per_token / GB)} GB ÷ "
              f"{gpu.bandwidth / 1e12:g} TB/s = {_num(r.decode_floor_ms)} ms per token")
        fit = "fits" if r.fits else f"does not fit (needs {r.gpus_needed} GPUs for the weights alone)"
        print(f"  memory: {_num(r.gpu_memory_bytes / GB)} GB per GPU ({gpu.memory_mib:,} MiB as nvidia-smi reports "
              f"it; sold as \"{gpu.memory_nominal_gb:g}GB\"); weights {_num(r.weight_bytes / GB)} GB: {fit}")
        print(f"  (source: {gpu.source})")
    return 0
