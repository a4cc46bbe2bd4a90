"""The tour's pages in the source's order: 15 sections, the game, the metaphor table, the three questions.

Each page has a scene class (``animations/scenes/``), a short chip label for the progress strip and a caption.
Captions follow the source text's notes for "the ones who want details" (seed, 给较真的人), one per section;
the English is the source string, the Chinese in ``assets/i18n/one_trip_zh_CN.ts`` keeps the source's own words.
Strings are marked with ``QT_TRANSLATE_NOOP``-style tuples and translated when shown (context ``"Tour"``).
"""

from __future__ import annotations

from dataclasses import dataclass

from animations.scenes import batching, closing, memory, opening, sampling, serving, trips
from animations.scenes.look import T
from animations.scenes.look import page_title as _page_title


@dataclass(frozen=True)
class Page:
    """One page of the tour: ``key`` (stable id), ``chip`` and ``caption`` (English sources) and its scene."""

    key: str
    chip: str
    caption: str
    scene: type


def _(text: str) -> str:
    """Marks ``text`` for translation without translating it now (Qt's QT_TRANSLATE_NOOP)."""
    return text


PAGES: list[Page] = [
    Page("request", "1", _(
        "Your question leaves as an HTTPS POST: the model llama-3-8b-instruct, “stream” on (write and send as you "
        "go), a system prompt “You are a concise assistant.”, and your question. The requests ChatGPT, Claude and "
        "Cursor send are much the same."), opening.RequestScene),
    Page("tokenize", "2", _(
        "A BPE (byte-pair encoding) tokenizer, trained with the model and fixed once it ships, cuts the text into "
        "numbered pieces. Chinese is cut too, as its tokenizer learnt: one trained on Chinese keeps common "
        "characters whole and may merge common words; one trained on English splits them into pieces of their "
        "bytes."), opening.TokenizeScene),
    Page("embedding", "3", _(
        "The “dictionary” is the embedding matrix, part of the model's weights: one row of numbers per token id. "
        "Looking up every token gives a table of tokens × d_model numbers. Llama 3's has 128,256 rows × 4,096 "
        "columns (d_model = 4,096)."), opening.EmbeddingScene),
    Page("book", "4", _(
        "The weights are a book and each Transformer layer a chapter: Llama 3 8B in FP16 is about 16 GB in 32 "
        "chapters. “One trip” is one forward pass: the weights are read from GPU memory into the compute cores. "
        "Strictly, the book never leaves the warehouse; what is read is a copy."), opening.BookScene),
    Page("prefill", "5", _(
        "Reading the question (prefill): one forward pass over every known token, big matrix multiplications. It "
        "is compute-bound, and even 1,000 tokens take only milliseconds. Each layer does attention "
        "softmax(QKᵀ/√d)·V, then the feed-forward network; each token looks only at the tokens before it."),
        trips.PrefillScene),
    Page("sampling", "6", _(
        "Drawing lots (sampling): the last position's vector goes through the language-model head to one score "
        "per token; softmax turns the scores into probabilities and one token is drawn. Temperature, top-p and "
        "top-k reshape the distribution before the draw; common defaults are temperature 1 and top-p off."),
        sampling.SamplingScene),
    Page("decode", "7", _(
        "Writing (decode): one forward pass per new token, and only the last position's result is used; the "
        "bottleneck is reading memory (memory-bound). The source: an 8B model on an A100 takes about 5–10 ms a "
        "step. This page's check: at about 2 TB/s, reading 16 GB once takes about 8 ms."), trips.DecodeScene),
    Page("kv_cache", "8", _(
        "The cheat sheet (KV cache) keeps each token's key (K) and value (V) in every layer. Without it, every new "
        "token recomputes the K and V of everything before it: a 500-token answer is O(500²) attention work "
        "instead of 500 steps."), trips.KVCacheScene),
    Page("kv_size", "9", _(
        "KV cache = 2 × layers × KV heads × head dim × length × batch × bytes. Llama 3 8B, 2,000 tokens, FP16: "
        "262 MB (the source rounds to about 250 MB); 100,000 tokens 13.1 GB (the source: about 12.5 GB); without "
        "grouping, 2,000 tokens take about 1 GB. DeepSeek's MLA compresses each token in each layer to 576 "
        "numbers: about 70 kB per token."), memory.KVSizeScene),
    Page("streaming", "10", _(
        "Sending it back (streaming): over SSE or WebSocket frames, each token is pushed as soon as it is written; "
        "20–80 tokens per second is common, depending on model size and hardware. A 10,000-token system prompt "
        "that is not cached makes a long pause before the first token."), memory.StreamingScene),
    Page("reasoning", "11", _(
        "A reasoning model may read the question in milliseconds and then keep decoding thinking tokens you never "
        "see, so the time to the first visible word no longer stands for prefill. The source: a 200-token answer "
        "may be billed for thousands of decode steps."), memory.ReasoningScene),
    Page("batching", "12", _(
        "Sharing the table (batching): the weights are read once per trip whether the batch is 1 or 32, so more "
        "requests share that read. A static batch waits for its longest request; continuous batching lets a "
        "finished request leave at once and slots new prefills in. PagedAttention keeps the cache in fixed-size "
        "pages, like virtual memory."), batching.BatchingScene),
    Page("speculative", "13", _(
        "Running ahead (speculative decoding): a draft model guesses N tokens, the big model checks them in one "
        "forward pass, keeps the prefix it agrees with and resamples at the first disagreement, so the output "
        "distribution is exactly the same. Code and factual text often keep 3–4 of 5."),
        serving.SpeculativeScene),
    Page("parallel", "14", _(
        "Tearing the book (parallelism): 8B in FP16 is about 16 GB, 70B about 141 GB; the cards are sold as "
        "H100 80GB, H200 141GB and B200 180GB (the page draws the memory each reports, in the same GB). By "
        "chapters = pipeline parallel; every page torn apart = tensor parallel; experts living apart = expert "
        "parallel (MoE only)."), serving.ParallelScene),
    Page("prefix", "15", _(
        "The same opening (prefix caching): the same prefix gives exactly the same K and V, so they can be reused. "
        "vLLM's automatic prefix caching and SGLang's RadixAttention keep a lookup table of computed KV blocks. "
        "Whether it hits depends on routing the request to the server that holds them."), serving.PrefixScene),
    Page("game", _("Game"), _(
        "Be the GPU: each press carries the book one trip. First write a sentence as usual, then try it with the "
        "apprentice, then with several people sharing the table, and see how many tokens each trip writes."),
        closing.GameScene),
    Page("metaphors", _("Terms"), _(
        "Every section above left out details to stay easy. Here are the formal terms behind each metaphor and "
        "the section that explains it."), closing.MetaphorScene),
    Page("questions", _("Three questions"), _(
        "Three questions, and now they can be answered."), closing.QuestionsScene),
]


def chip_text(page: Page) -> str:
    """The chip's label: the section number, or a short word for the pages after the sections."""
    return page.chip if page.chip.isdigit() else T(page.chip)


def page_title(page: Page) -> str:
    """The page's full title as the scene shows it ("01 · The request"), translated: the chip's tooltip."""
    return _page_title(page.scene.title, page.scene.number)


def caption_text(page: Page) -> str:
    return T(page.caption)
