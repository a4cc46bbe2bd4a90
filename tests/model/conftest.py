"""Fixtures for the engine tests: a small random GPT-2 with a real byte-level BPE tokenizer, saved to disk.

The model is random but not flat: the projections get a larger-than-GPT-2 init and the embedding rows equal
norms, so greedy decoding changes token from step to step and depends on both the context and the position.
A bug that misplaces a position, a key or a cache slot then changes the ids, which is what the tests compare.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

from model.checkpoint import load_pretrained, save_pretrained
from model.gpt2 import GPT2, GPT2Config
from model.tokenizer import EOS_TEXT

# One thread: the machine is shared, and a 32-wide model gains nothing from more.
torch.set_num_threads(1)

CORPUS = [
    "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n",
    "The quick brown fox jumps over the lazy dog. One trip of the weights, one token.\n",
    "for i in range(10):\n\tprint(i, end=' ')  # (B, T, C)\r\n",
    "一趟一个字，小抄就是 KV 缓存。每按一下，就是把书搬一趟。\n",
    "Emoji: 😀 🚀 👩‍💻 ❤️ and more 😀😀\n",
] * 12

N_POSITIONS = 128


def train_tokenizer(path: Path, vocab_size: int = 400) -> Path:
    """Train a GPT-2 style byte-level BPE on CORPUS and save it as ``path`` (tokenizer.json)."""
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS_TEXT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return path


def lively_gpt2(config: GPT2Config, seed: int = 0) -> GPT2:
    """A random GPT-2 whose greedy output varies: projections N(0, 2/fan_in), unit-norm×3 token rows."""
    model = GPT2(config).init_weights(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2 and name.startswith("h."):
                p.copy_(torch.randn(p.shape, generator=gen) * 2.0 / math.sqrt(p.shape[1]))
        wte = torch.randn(model.wte.weight.shape, generator=gen)
        model.wte.weight.copy_(wte / wte.norm(dim=1, keepdim=True) * 3.0)
        model.wpe.weight.copy_(torch.randn(model.wpe.weight.shape, generator=gen))
    return model.eval().requires_grad_(False)


@pytest.fixture(scope="session")
def tokenizer_json(tmp_path_factory) -> Path:
    return train_tokenizer(tmp_path_factory.mktemp("tok") / "tokenizer.json")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tokenizer_json) -> Path:
    """A saved 2-layer, 2-head, 32-wide GPT-2 with a 128-token window and the trained tokenizer."""
    vocab = HFTokenizer.from_file(str(tokenizer_json)).get_vocab_size()
    eos = HFTokenizer.from_file(str(tokenizer_json)).token_to_id(EOS_TEXT)
    config = GPT2Config(vocab_size=vocab, n_positions=N_POSITIONS, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=eos, eos_token_id=eos, name="tiny")
    out = tmp_path_factory.mktemp("tiny") / "tiny"
    save_pretrained(lively_gpt2(config, seed=0), out, tokenizer_json)
    return out


@pytest.fixture(scope="session")
def tiny(tiny_model_dir):
    """(model, tokenizer) loaded once; engines only read the model, so tests share it."""
    return load_pretrained(tiny_model_dir)


@pytest.fixture(scope="session")
def tiny_in(tiny):
    """Factory: ``tiny_in(precision)`` -> (model, tokenizer): the shared tiny model for "fp32", a copy with its
    weights converted (model/quantize.py: set_precision) for "fp16" and "int8", each made once."""
    import copy

    from model.quantize import set_precision
    made = {"fp32": tiny}

    def get(precision: str):
        if precision not in made:
            made[precision] = (set_precision(copy.deepcopy(tiny[0]), precision), tiny[1])
        return made[precision]

    return get


@pytest.fixture(params=[True, False], ids=["ragged", "padded"])
def make_engine(tiny_in, request):
    """Factory: ``make_engine(**engine_kwargs)`` -> a fresh Engine on the shared tiny model (``weights="fp16"`` or
    "int8": on its copy in that precision, ``tiny_in``). Every test that uses it runs twice: on ragged (flat)
    passes and on padded ones (``Engine(ragged=...)``), while both exist."""
    from model.engine import Engine

    def make(weights: str = "fp32", **kwargs):
        model, tokenizer = tiny_in(weights)
        kwargs.setdefault("ragged", request.param)
        return Engine(model, tokenizer, **kwargs)

    return make


def prompt_ids(n: int, seed: int, vocab: int, avoid: int | None = 0) -> list[int]:
    """``n`` random token ids (never ``avoid``, the end-of-text id), reproducible from ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (n,), generator=gen).tolist()
    return [1 if i == avoid else i for i in ids]


def run_to_end(engine, max_steps: int = 2000) -> list:
    """Every StepReport until the engine has no work; fails if it does not finish in ``max_steps`` passes."""
    reports = list(engine.run(max_steps=max_steps))
    assert not engine.has_work(), f"engine still busy after {max_steps} steps"
    return reports
