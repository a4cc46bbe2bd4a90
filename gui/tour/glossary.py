"""Every technical term the tour shows, explained in one line (English here, Chinese in the .ts, context
``"Glossary"``).

The tour underlines the terms it finds in a caption (hover: a tooltip; click or tap: the line under the
caption), gives every scene text that holds a term a tooltip, and lists them all on the terms page (17).

A ``Term`` is found in a text by its literal surface forms (``forms``: the same in both languages, e.g.
"compute-bound", "MLA"; ``forms_en`` / ``forms_zh``: one language's words), or by ``pattern`` (a regular
expression for labels such as the batching page's cells "A9", "C32").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

CONTEXT = "Glossary"


def _(text: str) -> str:
    """Marks ``text`` for translation (context "Glossary") without translating it now."""
    return text


@dataclass(frozen=True)
class Term:
    """One term: ``key`` (stable id), ``term`` and ``explain`` (English sources of the translation), how it is
    found (``forms``, ``forms_en``, ``forms_zh``, ``pattern``) and the tour ``section`` (1-based) that explains
    it in full."""

    key: str
    term: str
    explain: str
    section: int
    forms: tuple[str, ...] = ()
    forms_en: tuple[str, ...] = ()
    forms_zh: tuple[str, ...] = ()
    pattern: str | None = None

    def surface(self, lang: str) -> tuple[str, ...]:
        """The literal forms that mark this term in a text of language ``lang`` ("en" or "zh")."""
        return self.forms + (self.forms_zh if lang == "zh" else self.forms_en)


TERMS: tuple[Term, ...] = (
    Term("https_post", "HTTPS POST", _("The encrypted web request that carries your question to the server."), 1,
         forms=("HTTPS POST",)),
    Term("bpe", "BPE", _("Byte-pair encoding: the tokenizer starts from single bytes and merges the most frequent "
                         "pairs into longer pieces."), 2, forms=("BPE",)),
    Term("space_mark", "␣", _("On a token chip: a space that is part of the token (“␣the” is “ the”)."), 2,
         forms=("␣",)),
    Term("newline_mark", "↵", _("On a token chip: a line break that is part of the token."), 2, forms=("↵",)),
    Term("embedding", "embedding matrix", _("The model's dictionary: one row of numbers per token id, learned "
                                            "in training."), 3,
         forms_en=("embedding matrix",), forms_zh=("嵌入矩阵",)),
    Term("d_model", "d_model", _("The model's width: how many numbers stand for one token inside it (4,096 in "
                                 "Llama 3 8B)."), 3, forms=("d_model",)),
    Term("fp16", "FP16", _("16-bit floating point: each number takes 2 bytes."), 4, forms=("FP16",)),
    Term("forward_pass", "forward pass", _("One run of the whole model over its input: every layer once, in "
                                           "order."), 4, forms_en=("forward pass",), forms_zh=("前向计算",)),
    Term("compute_bound", "compute-bound", _("Limited by how fast the chip multiplies, not by how fast it reads "
                                             "memory: prefill does many multiplications per weight it reads."), 5,
         forms_en=("compute-bound",), forms_zh=("算力受限",)),
    Term("attention", "softmax(QKᵀ/√d)·V", _("Attention: each token's query Q is compared with the keys K of the "
                                             "tokens before it; the scores, divided by √d (d: the size of a head) "
                                             "and made into weights by softmax, mix their values V."), 5,
         forms=("QKᵀ/√d",)),
    Term("softmax", "softmax", _("Turns a list of scores into probabilities that add up to 1; a higher score gets "
                                 "exponentially more."), 6, forms=("softmax",)),
    Term("temperature", "temperature", _("Divides the scores before softmax: below 1 the likely tokens win more "
                                         "often, above 1 the choice gets more random."), 6,
         forms_en=("Temperature", "temperature"), forms_zh=("温度",)),
    Term("top_p", "top-p", _("Only the fewest most likely tokens whose probabilities add up to p can be drawn."), 6,
         forms=("top-p",)),
    Term("top_k", "top-k", _("Only the k most likely tokens can be drawn."), 6, forms=("top-k",)),
    Term("greedy", "greedy", _("Always taking the most likely token: no drawing of lots."), 6,
         forms_en=("greedy",), forms_zh=("贪心",)),
    Term("memory_bound", "memory-bound", _("Limited by how fast the weights are read from memory: decode reads "
                                           "every weight to write a single token."), 7,
         forms_en=("memory-bound",), forms_zh=("带宽受限",)),
    Term("kv_cache", "KV cache", _("The keys and values of every token already seen, kept for each layer so "
                                   "that no later step computes them again."), 8,
         forms=("KV cache",), forms_zh=("KV 缓存",)),
    Term("big_o", "O(500²)", _("“Of the order of 500 squared”: the work grows with the square of the length; "
                               "500 tokens cost about 125,000 attention rows instead of 500."), 8,
         forms=("O(500²)",)),
    Term("kv_heads", "KV heads", _("The key/value heads a layer keeps in the KV cache; with grouping (GQA) several "
                                   "query heads share one, so the cache is smaller."), 9,
         forms=("KV heads",), forms_zh=("KV 头",)),
    Term("without_grouping", "without grouping", _("Every query head keeps its own keys and values (classic "
                                                   "multi-head attention): 4× the cache of Llama 3's 8 groups."), 9,
         forms_en=("without grouping",), forms_zh=("不分组",)),
    Term("gqa", "GQA", _("Grouped-query attention: several query heads share one key/value head."), 9,
         forms=("GQA",)),
    Term("mla", "MLA", _("Multi-head latent attention (DeepSeek): keeps one small compressed vector per token and "
                         "layer instead of full keys and values."), 9, forms=("MLA",)),
    Term("sliding_window", "sliding-window attention", _("A layer in which each token looks only at a nearby "
                                                         "stretch of recent tokens, so its cache stops growing."), 9,
         forms_en=("sliding-window attention", "sliding window"), forms_zh=("滑动窗口注意力",)),
    Term("sse", "SSE", _("Server-sent events: one HTTP response that stays open and carries each new token as a "
                         "small text frame."), 10, forms=("SSE",)),
    Term("websocket", "WebSocket", _("A two-way connection kept open between browser and server."), 10,
         forms=("WebSocket",)),
    Term("ttft", "first token", _("Time to the first token: waiting for the question to be read (prefill) and the "
                                  "first token to be written."), 10,
         forms_en=("first token", "first visible token"), forms_zh=("首字",)),
    Term("batch_cell", "A9, C32", _("A cell such as “C32”: on this trip request C reads 32 tokens of its question "
                                    "(prefill); a cell with a letter alone: that request writes one token."), 12,
         pattern=r"^[A-H]\d{1,3}$"),
    Term("continuous_batching", "continuous batching", _("A finished request leaves the batch at once and a new "
                                                         "one takes its seat on the next trip."), 12,
         forms_en=("continuous batching", "Continuous batch"), forms_zh=("连续批",)),
    Term("static_batch", "static batch", _("A batch that starts together and ends when its longest request ends."),
         12, forms_en=("static batch", "Static batch"), forms_zh=("静态批",)),
    Term("paged_attention", "PagedAttention", _("vLLM's KV cache in fixed-size blocks, like virtual-memory pages, "
                                                "so memory is taken only for tokens already written."), 12,
         forms=("PagedAttention",)),
    Term("disaggregation", "prefill/decode disaggregation", _("Prefill runs on some GPUs and decode on others; "
                                                              "the KV cache is sent from one to the other."), 12,
         forms_en=("disaggregation",), forms_zh=("预填充/解码分离",)),
    Term("nvlink", "NVLink", _("NVIDIA's fast link between the GPUs of one server, several times faster than a "
                               "network card."), 12, forms=("NVLink",)),
    Term("rdma", "RDMA", _("Remote direct memory access: a machine reads another's memory over the network "
                           "without that machine's processor copying it."), 12, forms=("RDMA",)),
    Term("draft_model", "draft model", _("A much smaller model that guesses the next few tokens cheaply; the big "
                                         "model checks all the guesses in one trip."), 13,
         forms_en=("draft model",), forms_zh=("草稿模型", "小徒弟")),
    Term("eagle", "EAGLE-3", _("A light guessing head trained on the big model's own hidden states, used as the "
                               "draft in speculative decoding."), 13, forms=("EAGLE-3",)),
    Term("mtp", "MTP", _("Multi-token prediction: extra heads built into the model guess the tokens after the "
                         "next one."), 13, forms=("MTP",)),
    Term("pipeline_parallel", "pipeline parallel", _("Each GPU holds some of the layers; a token's work passes "
                                                     "from one GPU to the next."), 14,
         forms_en=("pipeline parallel",), forms_zh=("流水线并行",)),
    Term("tensor_parallel", "tensor parallel", _("Every layer's matrices are split across the GPUs, which swap "
                                                 "partial results in every layer."), 14,
         forms_en=("tensor parallel",), forms_zh=("张量并行",)),
    Term("expert_parallel", "expert parallel", _("The experts of an MoE layer live on different GPUs; each token "
                                                 "travels to the GPUs of its experts."), 14,
         forms_en=("expert parallel",), forms_zh=("专家并行",)),
    Term("moe", "MoE", _("Mixture of experts: a layer holds many feed-forward “experts” and a router sends each "
                         "token to only a few of them."), 14, forms=("MoE",), forms_en=("mixture-of-experts",)),
    Term("prefix_caching", "prefix caching", _("Keys and values computed for an opening that was seen before are "
                                               "reused, so that part of the prefill is skipped."), 15,
         forms_en=("prefix caching", "prefix cache"), forms_zh=("前缀缓存",)),
    Term("radix_attention", "RadixAttention", _("SGLang's prefix cache: a tree of computed KV blocks, looked up by "
                                                "the request's first tokens."), 15, forms=("RadixAttention",)),
    Term("routing", "routing", _("Choosing the server a request goes to; a prefix cache helps only on the server "
                                 "that holds it."), 15, forms_en=("Routing", "routing"), forms_zh=("路由",)),
)

BY_KEY = {t.key: t for t in TERMS}


def translate(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def term_name(term: Term) -> str:
    """The term as written in the current language."""
    return translate(term.term)


def explanation(term: Term) -> str:
    """The one-line explanation in the current language."""
    return translate(term.explain)


def find_terms(text: str, lang: str) -> list[Term]:
    """The terms that ``text`` (in language ``lang``) shows, in the order of ``TERMS``. A ``pattern`` term is
    matched against the whole stripped text (a label), the forms anywhere in it."""
    found = []
    stripped = text.strip()
    for term in TERMS:
        if any(f and f in text for f in term.surface(lang)):
            found.append(term)
        elif term.pattern and re.match(term.pattern, stripped):
            found.append(term)
    return found


def spans(text: str, lang: str) -> list[tuple[int, int, Term]]:
    """Non-overlapping ``(start, end, term)`` spans of the literal forms in ``text``, left to right (the longest
    form wins where two overlap). Pattern terms are not spanned (they label scene items, not captions)."""
    hits = []
    for term in TERMS:
        for form in term.surface(lang):
            if not form:
                continue
            start = text.find(form)
            while start >= 0:
                hits.append((start, start + len(form), term))
                start = text.find(form, start + len(form))
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
    out, end = [], -1
    for h in hits:
        if h[0] >= end:
            out.append(h)
            end = h[1]
    return out


@dataclass(frozen=True)
class Word:
    """How one term is said on every screen, in both languages (issue 38: the Chinese word for a token changed
    from screen to screen). ``en``: a regular expression that finds the term in an English source string;
    ``zh``: the one Chinese word its translation uses; ``zh_not``: regular expressions of the words it must
    not use instead (anywhere in any Chinese text). ``exact``: the English source is the whole string (a tab's
    name), and its translation is exactly ``zh``."""

    key: str
    en: str
    zh: str
    zh_not: tuple[str, ...] = ()
    exact: bool = False


# The house words. "字" is the tour's own word for a token (一趟一个字: one trip, one token), on the stage, in the
# captions and in the readouts alike; "token" stays only inside names (multi-token prediction, MTP) and in the
# glossary's line that says what a 字 is. Tokens read are 字 too (not 块, "pieces"): 块 is a KV block, a GPU.
VOCABULARY: tuple[Word, ...] = (
    Word("token", r"(?<![{\w-])tokens?\b(?!\})", "字",  # not "{tokens}" (a placeholder), not "multi-token"
         zh_not=(r"(?<![{\w])token(?![\w}]|\s*预测)", r"词元", r"字块", r"(?:\d|\}|万|千)\s*块", r"下一块(?!\s*GPU)",
                 r"每块(?!\s*GPU)", r"块数")),
    Word("compute_bound", r"compute-bound", "算力受限", zh_not=(r"compute-bound", r"吃算力")),
    Word("memory_bound", r"memory-bound", "带宽受限", zh_not=(r"memory-bound", r"吃显存带宽")),
    Word("terms_page", r"Terms", "术语", exact=True),
    Word("questions_page", r"Three questions", "三个问题", exact=True),
)


def vocabulary_problems(source: str, translation: str) -> list[str]:
    """What a (English source, Chinese translation) pair says against ``VOCABULARY``, one line each; [] if
    nothing. Used by the tests over every translated string (every screen's text comes from these)."""
    out = []
    for word in VOCABULARY:
        for bad in word.zh_not:
            if (m := re.search(bad, translation)) is not None:
                out.append(f"{word.key}: {m.group(0)!r} in {translation!r} (say {word.zh!r})")
        if word.exact:
            if source == word.en and translation != word.zh:
                out.append(f"{word.key}: {source!r} is {translation!r}, not {word.zh!r}")
        elif re.search(word.en, source) and word.zh not in translation:
            out.append(f"{word.key}: {translation!r} translates {source!r} without {word.zh!r}")
    return out


__all__ = ["Term", "TERMS", "BY_KEY", "CONTEXT", "find_terms", "spans", "term_name", "explanation", "Word",
           "VOCABULARY", "vocabulary_problems"]
