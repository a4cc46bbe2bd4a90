"""The weight multiply: every product of activations by a layer's weights goes through here.

As llama.cpp's ``ggml_mul_mat``: the model says "multiply these rows by this layer's weights"
(``WeightMatrix.mm``), and this module picks the kernel for the weights' precision, the device and the row count.
The model code never names a kernel.

precision  CPU kernel                                                   CUDA
fp32       1 row: MKL's GEMV on an [in, out] view (``torch.addmm``);     ``torch.addmm``
           2+ rows: oneDNN's GEMM on a packed copy (GELU fused into fc)
fp16       FBGEMM's fp16-weight GEMM, fp32 activations and accumulation  half ``addmm``, result in float32
           (``torch.fbgemm_pack_gemm_matrix_fp16`` +
           ``torch.fbgemm_linear_fp16_weight_fp32_activation``)
int8       FBGEMM's int8 GEMM, each row of activations quantized with    (dequantized to float32 at load)
           its own scale (``fbgemm_int8_mm``); where FBGEMM is missing,
           ``torch._weight_int8pack_mm`` (bfloat16 activations)

FBGEMM's own dynamic int8 (``quantize_dynamic``'s kernel) quantizes the activations of the whole call with one
scale, so a row's result would depend on the other rows of its batch ("batched = alone" broken). Here each row is
divided by its own largest magnitude before the kernel sees it and multiplied back after: the kernel's integer
sums are exact, so a row gives the same bits alone or in any batch, and FBGEMM's speed is kept.
bench/desk_bench.py and bench/weights_bench.py time the kernels; docs/benchmarks.md has the figures.

Kernels, not compilers: nothing here compiles at run time. FBGEMM's fp16 entry points and quantized tensors (int8's
packing) warn that they are deprecated in torch 2.13; the warnings are filtered here so they never reach the user's
terminal.
``kernel_available(precision)`` says whether a precision's kernel runs in this torch; where it does not,
``resolve_precision`` falls back to fp32 with one logged line.
"""

from __future__ import annotations

import logging
import warnings

import torch
import torch.nn.functional as F

PRECISIONS = ("fp32", "fp16", "int8")
BYTES_PER_VALUE = {"fp32": 4, "fp16": 2, "int8": 1}  # int8 adds a float32 scale per row
LOG = logging.getLogger("one_trip.weight_mm")

# oneDNN packed weights pay from this many rows per GEMM (measured, docs/benchmarks-engine.md: at 1 row MKL's
# GEMV is faster, from 2 rows oneDNN's blocked GEMM is up to 2x faster than MKL on this CPU)
PACKED_MIN_ROWS = 2
INT8_ACT_DTYPE = torch.bfloat16  # _weight_int8pack_mm's fast path on CPU


_QUIETED: set[str] = set()  # FBGEMM entry points already called once (torch warns once per process, at the first)


def _quietly(op):
    """``op`` (a torch function), called with its deprecation warning kept from the terminal: torch warns once per
    process, at the first call, so only that call runs inside ``warnings.catch_warnings`` (it costs microseconds)."""
    name = op.__name__

    def call(*args):
        if name in _QUIETED:
            return op(*args)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=rf"{name} is deprecated")
            out = op(*args)
        _QUIETED.add(name)
        return out
    return call


def fbgemm_fp16_pack(w: torch.Tensor) -> torch.Tensor:
    """FBGEMM's packed fp16 copy of a float weight w (out, in): an opaque tensor for ``fbgemm_fp16_mm``.
    Raises RuntimeError (or AttributeError) where this torch has no FBGEMM fp16 kernel."""
    return _quietly(torch.fbgemm_pack_gemm_matrix_fp16)(w.detach().float().contiguous())


def fbgemm_fp16_mm(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x float32 (N, in) times the packed fp16 weight's transpose plus bias float32 (out,): (N, out) float32."""
    if "fbgemm_linear_fp16_weight_fp32_activation" in _QUIETED:
        return torch.fbgemm_linear_fp16_weight_fp32_activation(x, packed, bias)
    return _quietly(torch.fbgemm_linear_fp16_weight_fp32_activation)(x, packed, bias)


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 of a float matrix w (R, K): returns (q int8 (R, K), scale float32 (R,)), w ≈ q·s."""
    w = w.detach().float()
    scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)  # an all-zero row keeps scale > 0 (q = 0)
    q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q.contiguous(), scale.contiguous()


# Row activations for FBGEMM's int8 GEMM: each row divided by its largest magnitude, then rounded by the kernel to
# 63 levels a side of its zero point 64 (uint8 1..127), so that a pair of products u8 · s8 summed by the kernel's
# AVX2 instruction (vpmaddubsw) stays inside int16: 2 · 127 · 127 < 32767; FBGEMM's own dynamic quantization
# narrows its range for the same reason (``reduce_range``).
INT8_ROW_LEVELS = 63
INT8_ROW_ZERO = 64


def fbgemm_int8_pack(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """FBGEMM's packed copy of int8 rows q (out, in) with float32 row scales (out,): an opaque object for
    ``fbgemm_int8_mm``, the same values q · s (``torch.ops.quantized.linear_prepack`` of a per-channel qint8
    tensor). Raises RuntimeError (or AttributeError) where this torch has no FBGEMM."""
    with warnings.catch_warnings():  # "quantized tensor creation functions ... are deprecated" (torch 2.13)
        warnings.filterwarnings("ignore", message=r".*quantized tensor creation")
        zero = torch.zeros(q.size(0), dtype=torch.long)
        qw = torch._make_per_channel_quantized_tensor(q.contiguous(), scale.double(), zero, 0)
        return torch.ops.quantized.linear_prepack(qw, None)


def fbgemm_int8_mm(x: torch.Tensor, packed, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x float32 (N, in) times int8 rows (``fbgemm_int8_pack``): (N, out) float32, plus bias (out,) if given.

    Each row of x is quantized on its own, so a row's result never depends on the other rows of its batch
    (batched = alone, bitwise): with m_r = max|x_r|, the kernel is handed x_r / m_r and input scale 1/63 (zero
    point 64), rounds it to 63 levels a side, multiplies in int8 with int32 sums (exact) and returns
    (1/63) · s_w · Σ; the row is then scaled back by m_r: y_r = m_r · that + b
    (``torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32``). Five ops a product."""
    m = torch.linalg.vector_norm(x, float("inf"), dim=1, keepdim=True).clamp_(min=1e-30)  # (N, 1)
    y = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32(x / m, 1.0 / INT8_ROW_LEVELS,
                                                                          INT8_ROW_ZERO, packed)
    return torch.addcmul(bias, y, m) if bias is not None else y.mul_(m)


def int8_matmul(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, ones: torch.Tensor,
                bias: torch.Tensor | None = None) -> torch.Tensor:
    """x (N, K) float32 times (q · scale)ᵀ: (N, R) float32, plus bias (R,) if given (``torch._weight_int8pack_mm``).

    q int8 (R, K), scale float32 (R,), ones: a bfloat16 vector of at least R ones (the kernel's own scale
    argument; the float32 scale is applied after, so it is not rounded to bfloat16). Activations are cast to
    bfloat16, the kernel's vectorised path (float32 activations take a slow scalar path)."""
    y = torch._weight_int8pack_mm(x.to(INT8_ACT_DTYPE), q, ones[:q.size(0)])  # (N, R) bfloat16, unscaled
    return torch.addcmul(bias, y, scale) if bias is not None else y.float().mul_(scale)


def weight_key(w: torch.Tensor) -> tuple[int, int]:
    """What changes when a weight is replaced or changed in place: (data pointer, version counter; -1 for an
    inference tensor, which has none and cannot be changed in place outside inference mode)."""
    return w.data_ptr(), -1 if w.is_inference() else w._version


def kernel_available(precision: str, device: str | torch.device = "cpu") -> bool:
    """True when ``precision``'s kernel runs here and gives the right numbers (a 8 × 16 product checked against
    float32). fp32 always; fp16 on CUDA always; fp16 and int8 on the CPU need FBGEMM / ATen's int8 kernel.
    Raises ValueError for an unknown precision."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "fp32" or torch.device(device).type == "cuda" and precision == "fp16":
        return True
    g = torch.Generator().manual_seed(0)
    w, x = torch.randn(8, 16, generator=g), torch.randn(2, 16, generator=g)
    try:
        m = WeightMatrix(w, torch.zeros(8), precision)
        return torch.allclose(m.mm(x)[0], x @ m.dense().t(), atol=0.05, rtol=0.02)
    except (RuntimeError, AttributeError, NotImplementedError):
        return False


INT8_KERNELS = ("fbgemm", "int8pack")
_INT8_KERNEL: list[str] = []  # this process's answer, found once


def int8_kernel() -> str:
    """The kernel int8 weights run on the CPU here: "fbgemm" (FBGEMM's int8 GEMM, each row of activations
    quantized on its own: ``fbgemm_int8_mm``) where it runs and gives the right numbers, else "int8pack"
    (``torch._weight_int8pack_mm`` with bfloat16 activations: ``int8_matmul``), with one logged line."""
    if not _INT8_KERNEL:
        g = torch.Generator().manual_seed(0)
        w, x = torch.randn(8, 16, generator=g), torch.randn(2, 16, generator=g)
        try:
            q, s = quantize_rows(w)
            y = fbgemm_int8_mm(x, fbgemm_int8_pack(q, s))
            ok = torch.allclose(y, x @ (q.float() * s[:, None]).t(), atol=0.05, rtol=0.02)
        except (RuntimeError, AttributeError, NotImplementedError):
            ok = False
        if not ok:
            LOG.warning("FBGEMM's int8 GEMM is missing in torch %s: int8 weights run torch._weight_int8pack_mm",
                        torch.__version__)
        _INT8_KERNEL.append("fbgemm" if ok else "int8pack")
    return _INT8_KERNEL[0]


def resolve_precision(precision: str, device: str | torch.device = "cpu") -> str:
    """``precision`` if its kernel runs here, else "fp32" with one logged warning. Raises ValueError for an
    unknown precision."""
    if kernel_available(precision, device):
        return precision
    LOG.warning("the %s weight kernel is missing in torch %s on %s: running fp32 weights", precision,
                torch.__version__, torch.device(device).type)
    return "fp32"


class WeightMatrix:
    """One layer's weight matrix in one precision, ready for its kernel: ``mm(x)`` is x Wᵀ + b.

    w: float (out, in) (an ``nn.Linear``'s weight, or an embedding used as the LM head); bias: float (out,) or
    None; precision: "fp32" | "fp16" | "int8". fp32 keeps ``w`` itself (its changes in place are seen);
    fp16 and int8 hold converted copies. ``nbytes``: bytes one pass reads (values, plus int8 row scales).
    Raises ValueError for an unknown precision; RuntimeError where the precision's kernel is missing."""

    def __init__(self, w: torch.Tensor, bias: torch.Tensor | None, precision: str):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        self.precision = precision
        self.out_features, self.in_features = w.shape
        self.bias = bias
        self.cuda = w.device.type == "cuda"
        self.nbytes = w.numel() * BYTES_PER_VALUE[precision] + (4 * w.size(0) if precision == "int8" else 0)
        self._packed = None  # fp32: oneDNN's copy for 2+ rows, and the weight version it copies
        self._packed_for = None
        if precision == "fp32":
            self.w = w  # (out, in); .t() is the [in, out] view MKL's GEMV reads
        elif precision == "fp16":
            self.w = w.detach().half()
            self._fp16 = self.w.t() if self.cuda else fbgemm_fp16_pack(w)
            self._zero = None if bias is not None else torch.zeros(self.out_features, device=w.device)
        else:
            self.q, self.scale = quantize_rows(w) if w.dtype != torch.int8 else (w, None)
            self._ones = torch.ones(self.out_features, dtype=torch.bfloat16)
            self._int8_packed = None  # FBGEMM's copy (``int8_kernel``), made at the first product
            self.int8_kernel = int8_kernel() if not self.cuda else "int8pack"

    @classmethod
    def from_int8(cls, q: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None) -> WeightMatrix:
        """A WeightMatrix over int8 rows q (out, in) already quantized, with float32 row scales (out,)."""
        m = cls(q, bias, "int8")
        m.scale = scale
        return m

    def _int8_mm(self, x: torch.Tensor) -> torch.Tensor:
        if self.int8_kernel == "fbgemm":
            if self._int8_packed is None:
                self._int8_packed = fbgemm_int8_pack(self.q, self.scale)
            return fbgemm_int8_mm(x, self._int8_packed, self.bias)
        return int8_matmul(x, self.q, self.scale, self._ones, self.bias)

    def dense(self) -> torch.Tensor:
        """The weight as float32 (out, in): the values the kernel multiplies by (int8: q · s)."""
        if self.precision == "int8":
            return self.q.float() * self.scale[:, None]
        return self.w.float()

    def mm(self, x: torch.Tensor, gelu: str | None = None) -> tuple[torch.Tensor, bool]:
        """x float32 (N, in) -> (x Wᵀ + b float32 (N, out), fused). gelu: oneDNN's GELU algorithm ("tanh" |
        "none") to fuse after the product where the kernel can; fused says whether it was applied."""
        if self.precision == "fp16":
            if self.cuda:
                y = (x.half() @ self._fp16).float()
                return (y if self.bias is None else y.add_(self.bias)), False
            return fbgemm_fp16_mm(x, self._fp16, self.bias if self.bias is not None else self._zero), False
        if self.precision == "int8":
            return self._int8_mm(x), False
        packed = self.packed() if x.size(0) >= PACKED_MIN_ROWS else None
        if packed is None:
            return (torch.addmm(self.bias, x, self.w.t()) if self.bias is not None else x @ self.w.t()), False
        fuse = gelu is not None
        y = torch.ops.mkldnn._linear_pointwise(x, packed, self.bias, "gelu" if fuse else "none", [None],
                                               gelu if fuse else "")
        return y, fuse

    def packed(self) -> torch.Tensor | None:
        """fp32 on the CPU: oneDNN's packed copy (``torch.ops.mkldnn._reorder_linear_weight``, the layout Inductor
        uses for CPU linears, packed for 16 rows), rebuilt when the weight changes (data pointer, version).
        None where oneDNN or the op is missing (MKL's GEMM is used instead), on CUDA, or for another dtype."""
        w = self.w
        if self.cuda or w.dtype != torch.float32 or not torch.backends.mkldnn.is_available():
            return None
        key = weight_key(w)
        if self._packed_for != key:
            try:
                self._packed = torch.ops.mkldnn._reorder_linear_weight(w.detach(), 16)
            except (RuntimeError, AttributeError):  # a build without the op: MKL's GEMM it is
                self._packed = None
            self._packed_for = key
        return self._packed


def linear(x: torch.Tensor, m: WeightMatrix) -> torch.Tensor:
    """``F.linear`` through the weight multiply: x (..., in) -> (..., out) float32."""
    y, _ = m.mm(x.reshape(-1, m.in_features))
    return y.view(*x.shape[:-1], m.out_features)


def embedding_rows(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Rows of an embedding table (V, C) of any float dtype, as float32 (..., C)."""
    return F.embedding(ids, table).float()


# fp16 becomes the default where its product by a layer's weights takes at most this share of fp32's (measured)
FP16_DEFAULT_BELOW = 0.9
CHOICE_REPEATS = 9


def time_products(n_embd: int, matrices: int, precisions=("fp32", "fp16"), repeats: int = CHOICE_REPEATS,
                  rows: int = 1) -> dict:
    """Median µs of multiplying ``rows`` rows by a stack of ``matrices`` (4n, n) weights (an MLP's fc, n =
    ``n_embd``) in each precision, the precisions interleaved in every repeat (so a load that comes and goes
    falls on all of them). Returns {precision: median µs over the whole stack}. Missing kernels are left out."""
    import statistics
    import time
    g = torch.Generator().manual_seed(0)
    ws = [torch.randn(4 * n_embd, n_embd, generator=g) * 0.02 for _ in range(max(1, matrices))]
    x = torch.randn(rows, n_embd, generator=g)
    stacks = {p: [WeightMatrix(w, torch.zeros(4 * n_embd), p) for w in ws]
              for p in precisions if kernel_available(p)}
    times: dict = {p: [] for p in stacks}
    for _ in range(repeats + 1):  # the first round warms up and is dropped
        for p, stack in stacks.items():
            t0 = time.perf_counter_ns()
            for m in stack:
                m.mm(x)
            times[p].append((time.perf_counter_ns() - t0) / 1e3)
    return {p: statistics.median(t[1:]) for p, t in times.items()}


def default_precision(n_embd: int, weight_bytes: int, remeasure: bool = False) -> dict:
    """The default weights of a model of width ``n_embd`` and ``weight_bytes`` (fp32) on this machine: "fp16" where
    its product measures at most ``FP16_DEFAULT_BELOW`` of fp32's, else "fp32". Measured once per machine on a
    stack of fc-shaped matrices as large as the model (at most 32) with torch's current threads, and kept in the
    floor's cache (``model.hardware.cached_measurement``; ``remeasure`` measures again). Takes 0.15 s for the
    bundled target, about 2.5 s for a GPT-2 small (32 matrices, 300 MB; a loaded 2-core machine). int8 is never
    the default: it changes the numbers more (bits per byte, docs/benchmarks.md), so it is the user's choice;
    the default keeps the source's precision where it pays. Returns {"precision", "us":
    {precision: median µs}, "source": "measured" | "cached", ...}."""
    from model.hardware import cached_measurement
    matrices = max(1, min(32, -(-weight_bytes // (16 * n_embd * n_embd))))
    threads = torch.get_num_threads()

    def measure() -> dict:
        us = time_products(n_embd, matrices)
        fp16 = "fp16" in us and us["fp16"] <= FP16_DEFAULT_BELOW * us["fp32"]
        return {"precision": "fp16" if fp16 else "fp32", "us": us, "matrices": matrices, "threads": threads}

    return cached_measurement(f"weights:{n_embd}:{matrices}:{threads}", measure, remeasure)


def choose_precision(asked: str | None, n_embd: int, weight_bytes: int, device: str | torch.device = "cpu",
                     remeasure: bool = False) -> dict:
    """The precision a model's weights run in: ``asked`` (the user's ``--weights``) when given, else this machine's
    default (``default_precision``: fp16 where it measures faster; on CUDA fp16, the GPU's native half), and fp32
    in place of a precision whose kernel is missing here (one logged line). Returns {"precision", "asked",
    "source": "asked" | "measured" | "cached" | "device", "fell_back": bool, "us": {precision: µs} when measured}.
    Raises ValueError for an unknown precision."""
    if asked is not None and asked not in PRECISIONS:
        raise ValueError(f"weights must be one of {PRECISIONS}, got {asked!r}")
    out: dict = {"asked": asked}
    if asked is not None:
        out.update(precision=asked, source="asked")
    elif torch.device(device).type == "cuda":
        out.update(precision="fp16", source="device")
    else:
        d = default_precision(n_embd, weight_bytes, remeasure)
        out.update(precision=d["precision"], source=d["source"], us=d.get("us"))
    chosen = resolve_precision(out["precision"], device)
    out["fell_back"] = chosen != out["precision"]
    out["precision"] = chosen
    return out
