<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>StageScene</name>
    <message>
        <source>Ch. {i}</source>
        <translation>第 {i} 章</translation>
    </message>
    <message>
        <source>Warehouse · GPU memory</source>
        <translation>仓库 · 显存</translation>
    </message>
    <message>
        <source>Desk · compute</source>
        <translation>桌子 · 计算核心</translation>
    </message>
    <message>
        <source>Cheat sheet · KV cache</source>
        <translation>小抄 · KV 缓存</translation>
    </message>
    <message>
        <source>The book: {n} chapters · {size}</source>
        <translation>书：{n} 章，共 {size}</translation>
    </message>
    <message>
        <source> + dictionary {size}</source>
        <translation>，字典 {size}</translation>
    </message>
    <message>
        <source>Ch. {i} · {size}</source>
        <translation>第 {i} 章 · {size}</translation>
    </message>
    <message>
        <source>Reading chapter {i} of {n}</source>
        <translation>正在读第 {i} 章（共 {n} 章）</translation>
    </message>
    <message>
        <source>{used} of {total} pages used</source>
        <translation>已用 {used} / {total} 页</translation>
    </message>
    <message>
        <source>… and {n} more pages</source>
        <translation>……还有 {n} 页</translation>
    </message>
    <message>
        <source>one page = {size}</source>
        <translation>每页 {size}</translation>
    </message>
    <message>
        <source>The question · {n} tokens</source>
        <translation>题目 · {n} 个字</translation>
    </message>
    <message>
        <source>The book rests in the warehouse. Every token costs one trip.</source>
        <translation>书放在仓库里。每写一个字，都要把整本书搬一趟。</translation>
    </message>
    <message>
        <source>Reading the question: {n} tokens in one trip</source>
        <translation>读题：搬一趟，读完 {n} 个字</translation>
    </message>
    <message>
        <source>Writing: one trip, one token</source>
        <translation>写字：搬一趟，写一个字</translation>
    </message>
    <message>
        <source>Sharing a table: {n} requests, one trip, a token each</source>
        <translation>拼桌：{n} 个请求合搬一趟，每人写一个字</translation>
    </message>
    <message>
        <source>Reading and writing in one trip: {n} tokens in</source>
        <translation>边读题边写字：这一趟读进 {n} 个字</translation>
    </message>
    <message>
        <source>Checking the apprentice's guesses: {n} tokens in one trip</source>
        <translation>核对小徒弟猜的字：搬一趟，验 {n} 个字</translation>
    </message>
    <message>
        <source>A copy travels; the book stays home</source>
        <translation>搬的是拷贝：书本身一直在仓库里</translation>
    </message>
    <message>
        <source>Desk {i}</source>
        <translation>桌子 {i}</translation>
    </message>
    <message>
        <source>every page cut in {n} strips</source>
        <translation>每页撕成 {n} 条</translation>
    </message>
    <message>
        <source>chapters split {n} ways</source>
        <translation>按章分成 {n} 份</translation>
    </message>
    <message>
        <source>{n} desks · compute · {how}</source>
        <translation>{n} 张桌子 · 计算 · {how}</translation>
    </message>
    <message>
        <source>Apprentice</source>
        <translation>小徒弟</translation>
    </message>
    <message>
        <source>draft model</source>
        <translation>草稿模型</translation>
    </message>
    <message>
        <source>guessed in {ms} ms</source>
        <translation>猜了 {ms} 毫秒</translation>
    </message>
    <message>
        <source>Torn book: every page split over {n} desks, which sync after each half-chapter</source>
        <translation>拆书：每一页撕开分给 {n} 张桌子，每读完半章大家对一次答案</translation>
    </message>
    <message>
        <source>Torn book: chapters split over {n} desks; a desk waits while another works</source>
        <translation>拆书：各章分给 {n} 张桌子；一张在干活时，其余的在等</translation>
    </message>
    <message>
        <source>free</source>
        <translation>白送</translation>
    </message>
    <message>
        <source>loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>Torn book: {n} desks each read their own chapters; the others wait</source>
        <translation>拆书：{n} 张桌子各读自己的几章，其余的等着</translation>
    </message>
    <message>
        <source>Torn book: {n} desks each read a strip of every chapter, then pass notes</source>
        <translation>拆书：{n} 张桌子各读每一章的一条，再互传纸条</translation>
    </message>
    <message>
        <source>Apprentice (draft model)</source>
        <translation>小徒弟（草稿模型）</translation>
    </message>
    <message>
        <source>Apprentice (n-gram)</source>
        <translation>小徒弟（照抄前文）</translation>
    </message>
    <message>
        <source>all right: the master adds one more</source>
        <translation>全对：师傅再多写一个</translation>
    </message>
    <message>
        <source>a wrong guess throws away the rest</source>
        <translation>猜错一个，后面的全作废</translation>
    </message>
    <message>
        <source>{k} guesses in {ms} ms · {a} kept</source>
        <translation>猜了 {k} 个，用时 {ms} 毫秒 · 留下 {a} 个</translation>
    </message>
    <message>
        <source>one page = {size} · {t} tokens</source>
        <translation>一页 = {size} · {t} 个字</translation>
    </message>
    <message>
        <source>{n} pages in use = {size} · room for {total}</source>
        <translation>已用 {n} 页 = {size} · 共 {total} 页</translation>
    </message>
    <message>
        <source>{n} page in use = {size} · room for {total}</source>
        <translation>已用 {n} 页 = {size} · 共 {total} 页</translation>
    </message>
    <message>
        <source>{n} pages in use</source>
        <translation>已用 {n} 页</translation>
    </message>
    <message>
        <source>{n} page in use</source>
        <translation>已用 {n} 页</translation>
    </message>
    <message>
        <source>The desk · compute</source>
        <translation>书桌 · 计算</translation>
    </message>
    <message>
        <source>passing notes</source>
        <translation>正在互传纸条</translation>
    </message>
    <message>
        <source>{n} desks · {how}</source>
        <translation>{n} 张桌子 · {how}</translation>
    </message>
    <message>
        <source>every chapter</source>
        <translation>每一章</translation>
    </message>
    <message>
        <source>This trip, per desk on average: notes {m} ms, work {c} ms: on this CPU tearing a tiny book costs more than it saves</source>
        <translation>这一趟，平均每张桌子：传纸条 {m} 毫秒，干活 {c} 毫秒：在这台 CPU 上拆一本小书，省下的不如花掉的多</translation>
    </message>
    <message>
        <source>This trip, per desk on average: waits {b} ms: with one trip at a time the desks take turns, not work together</source>
        <translation>这一趟，平均每张桌子等待 {b} 毫秒：一次只跑一趟，桌子只能轮流干，不能同时干</translation>
    </message>
    <message>
        <source>tensor parallel: every chapter cut in {n} strips</source>
        <translation>张量并行：每章切成 {n} 条</translation>
    </message>
    <message>
        <source>pipeline parallel: chapters split {n} ways</source>
        <translation>流水线并行：各章分成 {n} 份</translation>
    </message>
    <message>
        <source>copy · {size}</source>
        <translation>副本 · {size}</translation>
    </message>
    <message>
        <source>waiting for another desk</source>
        <translation>在等别的桌子</translation>
    </message>
    <message>
        <source>chapters {a}–{b}</source>
        <translation>第 {a}–{b} 章</translation>
    </message>
    <message>
        <source>Desk {i} · {span}</source>
        <translation>第 {i} 张桌子 · {span}</translation>
    </message>
    <message>
        <source>1/{n} of every chapter</source>
        <translation>每章的 1/{n}</translation>
    </message>
    <message>
        <source>forward pass {c} of {w} ms</source>
        <translation>前向计算 {c}，整步 {w} 毫秒</translation>
    </message>
    <message>
        <source>forward pass {c} ms</source>
        <translation>前向计算 {c} 毫秒</translation>
    </message>
    <message>
        <source>every chapter · this trip</source>
        <translation>每一章 · 这一趟</translation>
    </message>
    <message>
        <source>reading chapter {i}</source>
        <translation>正在读第 {i} 章</translation>
    </message>
    <message>
        <source>this trip: work {c} · wait {b} ms</source>
        <translation>本趟：干活 {c}，等待 {b} 毫秒</translation>
    </message>
    <message>
        <source>this trip: work {c} · notes {m} ms</source>
        <translation>本趟：干活 {c}，传纸条 {m} 毫秒</translation>
    </message>
    <message>
        <source>work {c} · notes {m} ms</source>
        <translation>干活 {c}，传纸条 {m} 毫秒</translation>
    </message>
    <message>
        <source>work {c} · wait {b} ms</source>
        <translation>干活 {c}，等待 {b} 毫秒</translation>
    </message>
    <message>
        <source>{n} desks · tensor parallel</source>
        <translation>{n} 张桌子 · 张量并行</translation>
    </message>
    <message>
        <source>{n} desks · pipeline parallel</source>
        <translation>{n} 张桌子 · 流水线并行</translation>
    </message>
    <message>
        <source>{where}: {count}, not {best}: a wrong guess throws away the rest</source>
        <translation>{where}：{count}，不是 {best} 个：猜错一个，后面的全作废</translation>
    </message>
    <message>
        <source>chapters and dictionary, to scale by bytes</source>
        <translation>各章和字典，按字节数画比例</translation>
    </message>
    <message>
        <source>lit: the chapter being read now</source>
        <translation>亮起：正在读的那一章</translation>
    </message>
    <message>
        <source>a cheat-sheet page in use</source>
        <translation>小抄上已用的一页</translation>
    </message>
    <message>
        <source>gold edge: a page two seats share</source>
        <translation>金边：两个座位共用的一页</translation>
    </message>
    <message>
        <source>a note passed between desks (all-reduce)</source>
        <translation>桌子之间传的纸条（全归约）</translation>
    </message>
    <message>
        <source>a dimmed desk is waiting (pipeline bubble)</source>
        <translation>变暗的桌子在等（流水线气泡）</translation>
    </message>
    <message>
        <source>The table · empty</source>
        <translation>饭桌 · 空着</translation>
    </message>
    <message>
        <source>reading the question</source>
        <translation>正在读题</translation>
    </message>
    <message>
        <source>writing</source>
        <translation>正在写</translation>
    </message>
    <message>
        <source>done</source>
        <translation>写完了</translation>
    </message>
    <message>
        <source>waiting for a seat</source>
        <translation>在等座位</translation>
    </message>
    <message>
        <source>free seat</source>
        <translation>空座位</translation>
    </message>
    <message>
        <source>reading</source>
        <translation>读题</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等座</translation>
    </message>
    <message>
        <source>The table · seats taken: {n}</source>
        <translation>饭桌 · 已坐 {n} 人</translation>
    </message>
    <message>
        <source>Whole book: {size}</source>
        <translation>整本书：{size}</translation>
    </message>
    <message>
        <source>The book: {n} chapters</source>
        <translation>这本书：{n} 章</translation>
    </message>
    <message>
        <source>The book stays home; a copy travels</source>
        <translation>书留在仓库，搬走的是副本</translation>
    </message>
    <message>
        <source>Dictionary · {size}</source>
        <translation>字典 · {size}</translation>
    </message>
    <message>
        <source>{where}: {count}, not {best}: a wrong guess throws away the ones after it, and how often the apprentice is right depends on the text</source>
        <translation>{where}：{count}，不是 {best} 个：猜错一个，后面的全作废；小徒弟猜中多少要看文字本身</translation>
    </message>
    <message>
        <source>This trip</source>
        <translation>这一趟</translation>
    </message>
    <message>
        <source>1 token</source>
        <translation>1 个字</translation>
    </message>
    <message>
        <source>{x} tokens</source>
        <translation>{x} 个字</translation>
    </message>
    <message>
        <source>This trip, at the guessing seat</source>
        <translation>这一趟，小徒弟帮着猜的那个座位</translation>
    </message>
    <message>
        <source>1 token in</source>
        <translation>读进 1 个字</translation>
    </message>
    <message>
        <source>Checking the apprentice's guesses</source>
        <translation>核对小徒弟猜的字</translation>
    </message>
    <message>
        <source>Reading and writing together</source>
        <translation>边读题边写字</translation>
    </message>
    <message>
        <source>Reading the question</source>
        <translation>读题</translation>
    </message>
    <message>
        <source>Sharing a table: {n} requests</source>
        <translation>拼桌：{n} 个请求</translation>
    </message>
    <message>
        <source>Torn book: {n} desks, a strip of each chapter</source>
        <translation>拆书：{n} 张桌子各读每一章的一条</translation>
    </message>
    <message>
        <source>Torn book: {n} desks, their own chapters</source>
        <translation>拆书：{n} 张桌子各读自己的几章</translation>
    </message>
    <message>
        <source>Writing</source>
        <translation>写字</translation>
    </message>
    <message>
        <source>{n} tokens in</source>
        <translation>读进 {n} 个字</translation>
    </message>
    <message>
        <source>{tokens_in}, {n} out</source>
        <translation>{tokens_in}，写出 {n} 个字</translation>
    </message>
    <message>
        <source>{what} · one trip: {tokens}</source>
        <translation>{what} · 搬一趟：{tokens}</translation>
    </message>
    <message>
        <source>Dictionary</source>
        <translation>字典</translation>
    </message>
    <message>
        <source>Warehouse · RAM (on the CPU)</source>
        <translation>仓库 · 内存（CPU 上）</translation>
    </message>
</context>
<context>
    <name>CodeView</name>
    <message>
        <source>Tokenize: text to token ids</source>
        <translation>切分：文字变成字的编号</translation>
    </message>
    <message>
        <source>Prefix cache: find blocks already computed</source>
        <translation>前缀缓存：找出已经算过的块</translation>
    </message>
    <message>
        <source>Schedule: pick this step's work</source>
        <translation>调度：挑出这一步要做的活</translation>
    </message>
    <message>
        <source>Pack the batch: positions, mask, block table</source>
        <translation>拼批次：位置、掩码、块表</translation>
    </message>
    <message>
        <source>Draft model: guess k tokens</source>
        <translation>草稿模型：猜 k 个字</translation>
    </message>
    <message>
        <source>Prompt lookup: guess from the text so far</source>
        <translation>提示查找：照已有的文字猜</translation>
    </message>
    <message>
        <source>Sharded forward: send the batch to every worker</source>
        <translation>分片前向：把批次发给每个工作进程</translation>
    </message>
    <message>
        <source>Embedding: token and position rows</source>
        <translation>嵌入：查字的行和位置行</translation>
    </message>
    <message>
        <source>Attention: softmax(QKᵀ/√d)·V</source>
        <translation>注意力：softmax(QKᵀ/√d)·V</translation>
    </message>
    <message>
        <source>Write the KV cache</source>
        <translation>写 KV 缓存</translation>
    </message>
    <message>
        <source>MLP (feed-forward)</source>
        <translation>MLP（前馈网络）</translation>
    </message>
    <message>
        <source>Embedding (fused pass)</source>
        <translation>嵌入（融合前向）</translation>
    </message>
    <message>
        <source>Attention (fused pass)</source>
        <translation>注意力（融合前向）</translation>
    </message>
    <message>
        <source>MLP (fused pass)</source>
        <translation>MLP（融合前向）</translation>
    </message>
    <message>
        <source>LM head (fused pass)</source>
        <translation>LM 头（融合前向）</translation>
    </message>
    <message>
        <source>All-reduce: add every worker's share</source>
        <translation>全归约：把每个工作进程的那份加起来</translation>
    </message>
    <message>
        <source>LM head: one score per token</source>
        <translation>LM 头：每个字一个分数</translation>
    </message>
    <message>
        <source>Sample the next token</source>
        <translation>抽下一个字</translation>
    </message>
    <message>
        <source>Verify the draft's guesses (greedy)</source>
        <translation>校验草稿的猜测（贪心）</translation>
    </message>
    <message>
        <source>Verify the draft's guesses (sampled)</source>
        <translation>校验草稿的猜测（采样）</translation>
    </message>
    <message>
        <source>Layer {n} · {stage}</source>
        <translation>第 {n} 层 · {stage}</translation>
    </message>
    <message>
        <source>{path}, lines {first}–{last} · {function}</source>
        <translation>{path}，第 {first}–{last} 行 · {function}</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
</context>
<context>
    <name>Tour</name>
    <message>
        <source>{n} tokens in {t} trips with the apprentice, {p} trips without; the same text either way</source>
        <translation>带小徒弟 {t} 趟写了 {n} 个字，不带要 {p} 趟；写出来的字一模一样</translation>
    </message>
    <message>
        <source>the live draft and target models</source>
        <translation>现场运行的草稿模型和目标模型</translation>
    </message>
    <message>
        <source>Faster than the memory floor: this small book fits in the processor's cache, so a trip does not go all the way to main memory.</source>
        <translation>比内存下限还快：这本小书装得进处理器的缓存，一趟不必跑回主内存。</translation>
    </message>
    <message>
        <source>tensor parallel</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>pipeline parallel</source>
        <translation>流水线并行</translation>
    </message>
    <message>
        <source>{how} over {n} worker processes, median of the last {k} trips: compute {c} · communication {m} · idle {b}</source>
        <translation>{how}，{n} 个工作进程，最近 {k} 趟的中位数：计算 {c} · 通信 {m} · 空等 {b}</translation>
    </message>
    <message>
        <source>({x:.1f} × the book)</source>
        <translation>（书的 {x:.1f} 倍）</translation>
    </message>
    <message>
        <source>The request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Sending it back (streaming)</source>
        <translation>送回（流式）</translation>
    </message>
    <message>
        <source>Reasoning models</source>
        <translation>推理模型</translation>
    </message>
    <message>
        <source>Sharing the table (batching)</source>
        <translation>拼桌（批处理）</translation>
    </message>
    <message>
        <source>Running ahead (speculative decoding)</source>
        <translation>抢跑（投机解码）</translation>
    </message>
    <message>
        <source>The same opening (prefix caching)</source>
        <translation>同样的开头（前缀缓存）</translation>
    </message>
    <message>
        <source>Cut into tokens</source>
        <translation>切成字（分词）</translation>
    </message>
    <message>
        <source>20–80 tokens/s</source>
        <translation>20–80 字/秒</translation>
    </message>
    <message>
        <source>Look up the dictionary</source>
        <translation>查字典（嵌入）</translation>
    </message>
    <message>
        <source>The book and its chapters</source>
        <translation>书和章</translation>
    </message>
    <message>
        <source>Reading the question (prefill)</source>
        <translation>读题（预填充）</translation>
    </message>
    <message>
        <source>Drawing lots (sampling)</source>
        <translation>抽签（采样）</translation>
    </message>
    <message>
        <source>Writing (decode)</source>
        <translation>写字（解码）</translation>
    </message>
    <message>
        <source>The cheat sheet (KV cache)</source>
        <translation>小抄（KV 缓存）</translation>
    </message>
    <message>
        <source>8-token question, 6 steps after the first token: without, step i recomputes 8 + i rows, Σ(8+i) for i = 1…6 = 69; with, one new row per step = 6.</source>
        <translation>8 个字的题目，第一个字之后再写 6 步：没有小抄，第 i 步要重算 8 + i 行，i = 1…6 合计 Σ(8+i) = 69；有小抄，每步只算新的一行，共 6 行。</translation>
    </message>
    <message>
        <source>8.03 billion parameters × 2 bytes</source>
        <translation>80.3 亿个参数 × 2 字节</translation>
    </message>
    <message>
        <source>How big is the cheat sheet</source>
        <translation>小抄有多大</translation>
    </message>
    <message>
        <source>A 10,000-token system prompt that is not cached makes a long pause.</source>
        <translation>1 万字的系统提示如果没被缓存，停顿会很长。</translation>
    </message>
    <message>
        <source>A 500-token answer: 1 + 2 + … + 500 = 125,250 rows without it, 500 with it: O(500²) against 500.</source>
        <translation>500 个字的回答：没小抄算 1 + 2 + … + 500 = 125,250 行，有小抄算 500 行：O(500²) 对 500。</translation>
    </message>
    <message>
        <source>A BPE (byte-pair encoding) tokenizer, trained with the model and fixed once it ships, cuts the text into numbered pieces. Chinese is cut too, as its tokenizer learnt: one trained on Chinese keeps common characters whole and may merge common words; one trained on English splits them into pieces of their bytes.</source>
        <translation>BPE（字节对编码）分词器和模型一起训练，上线后固定，把文字切成一块块、编上号。中文也会被切块，怎么切看分词器学过什么：学过中文的，常用字一字一块，常用词可能合成一块；只学过英文的，会把一个字拆成几块字节。</translation>
    </message>
    <message>
        <source>A big model on a big GPU</source>
        <translation>大模型，大显卡</translation>
    </message>
    <message>
        <source>A reasoning model may read the question in milliseconds and then keep decoding thinking tokens you never see, so the time to the first visible word no longer stands for prefill. The source: a 200-token answer may be billed for thousands of decode steps.</source>
        <translation>推理模型可能几毫秒就读完题，却还在解码你看不见的思考的字，所以“第一个可见字出现的时间”不再能代表预填充。原文：200 个字的回答，可能计费几千个解码步。</translation>
    </message>
    <message>
        <source>After “{tail}”, the next token could be:</source>
        <translation>“{tail}”之后，下一个字可能是：</translation>
    </message>
    <message>
        <source>All this, just to write one sentence explaining the KV cache. And what let that sentence be written was the KV cache itself.</source>
        <translation>折腾一大圈，只为写出一句解释 KV 缓存的话。而让这句话写得出来的，正是 KV 缓存本身。</translation>
    </message>
    <message>
        <source>Alone</source>
        <translation>一个人写</translation>
    </message>
    <message>
        <source>Alone: one token per press</source>
        <translation>一个人写：每按一下写一个字</translation>
    </message>
    <message>
        <source>Be the GPU</source>
        <translation>你来当一回 GPU</translation>
    </message>
    <message>
        <source>Be the GPU: each press carries the book one trip. First write a sentence as usual, then try it with the apprentice, then with several people sharing the table, and see how many tokens each trip writes.</source>
        <translation>每按一下，就是把书搬一趟。先照常写完一句，再试试带上小徒弟、拉几个人拼桌，看看每趟能写出几个字。</translation>
    </message>
    <message>
        <source>Behind a {n}-token system prompt that is not cached, the first token takes {ms} instead of {short}.</source>
        <translation>前面加上 {n} 个字没被缓存的系统提示，第一个字要等 {ms}，而不是 {short}。</translation>
    </message>
    <message>
        <source>Block table (PagedAttention): each request's pages of the cheat sheet</source>
        <translation>页表（PagedAttention）：每个请求的小抄占了哪几页</translation>
    </message>
    <message>
        <source>By chapters: pipeline parallel</source>
        <translation>按章拆：流水线并行</translation>
    </message>
    <message>
        <source>Continuous batch: a free seat is taken at once</source>
        <translation>连续批：有人写完，空位马上有人坐</translation>
    </message>
    <message>
        <source>DeepSeek-V3 (MLA)</source>
        <translation>DeepSeek-V3（MLA）</translation>
    </message>
    <message>
        <source>DeepSeek-V3: {p:.0f} billion parameters, about {a:.0f} billion active per token</source>
        <translation>DeepSeek-V3：共 {p:.0f}0 亿参数，每个字只激活约 {a:.0f}0 亿</translation>
    </message>
    <message>
        <source>Desk · compute cores</source>
        <translation>桌子 · 计算核心</translation>
    </message>
    <message>
        <source>Draw</source>
        <translation>抽一签</translation>
    </message>
    <message>
        <source>Drawing lots (sampling): the last position's vector goes through the language-model head to one score per token; softmax turns the scores into probabilities and one token is drawn. Temperature, top-p and top-k reshape the distribution before the draw; common defaults are temperature 1 and top-p off.</source>
        <translation>抽签（采样）：最后一个位置的向量经过语言模型头，得到每个字的分数，softmax 成概率再抽。温度、top-p、top-k 会在抽之前重塑分布；常见默认是温度 1、top-p 不设限。</translation>
    </message>
    <message>
        <source>Drawn: {tok}</source>
        <translation>抽中：{tok}</translation>
    </message>
    <message>
        <source>Each column is one trip; {n} seats. Pale cells read a question (prefill): C's long question is read in chunks of {k} tokens beside other people's writing (chunked prefill).</source>
        <translation>每一列是一趟，桌上 {n} 个座位。浅色格是在读题（预填充）：C 的长题目每趟只读 {k} 个字，夹在别人写字的同一趟里（切块预填充）。</translation>
    </message>
    <message>
        <source>Every page torn apart: tensor parallel</source>
        <translation>每页撕开：张量并行</translation>
    </message>
    <message>
        <source>Every section above left out details to stay easy. Here are the formal terms behind each metaphor and the section that explains it.</source>
        <translation>前面每一段都为了好懂省掉了细节。这张表补上每个比喻背后的正式说法，以及讲它的那一段。</translation>
    </message>
    <message>
        <source>Every token needs the whole book carried once: weight bytes ÷ memory bandwidth. §4, §7</source>
        <translation>每写一个字都要把整本书搬一趟：权重字节数 ÷ 显存带宽。§4、§7</translation>
    </message>
    <message>
        <source>Experts living apart: expert parallel</source>
        <translation>专家分住：专家并行</translation>
    </message>
    <message>
        <source>FP8, and 4-bit on Blackwell, let 70B fit one GPU with room left for the cheat sheet.</source>
        <translation>用 FP8，以及在 Blackwell 上用 4-bit，70B 就能装进一张卡，并给小抄留出地方。</translation>
    </message>
    <message>
        <source>GPT-2 small</source>
        <translation>GPT-2 small</translation>
    </message>
    <message>
        <source>GPU memory → compute cores, one forward pass</source>
        <translation>显存 → 计算核心，一次前向计算</translation>
    </message>
    <message>
        <source>One column = one trip, {n} seats. Pale: reading a question; C's long one in chunks of {k} tokens (chunked prefill).</source>
        <translation>一列是一趟，桌上 {n} 个座位。浅色：在读题；C 的长题目每趟读 {k} 个字（切块预填充）。</translation>
    </message>
    <message>
        <source>compute-bound</source>
        <translation>算力受限</translation>
    </message>
    <message>
        <source>memory-bound</source>
        <translation>带宽受限</translation>
    </message>
    <message>
        <source>Decimal GB (a billion bytes). Dashed: each card's reported memory. Green: fits one {gpu}; orange: a bigger card or several.</source>
        <translation>十进制 GB（每 GB 十亿字节）。虚线：每张卡报告的显存。绿色：一张 {gpu} 放得下；橙色：要更大的卡或几张卡。</translation>
    </message>
    <message>
        <source>parameters × bytes each; GPU sizes from datasheets</source>
        <translation>参数个数 × 每个的字节数；显存取自产品手册</translation>
    </message>
    <message>
        <source>GPUs that read</source>
        <translation>读题的卡</translation>
    </message>
    <message>
        <source>GPUs that write</source>
        <translation>写字的卡</translation>
    </message>
    <message>
        <source>GQA, MLA, cache bytes</source>
        <translation>GQA、MLA、缓存字节数</translation>
    </message>
    <message>
        <source>Game</source>
        <translation>游戏</translation>
    </message>
    <message>
        <source>HTTPS POST, JSON body, stream</source>
        <translation>HTTPS POST、JSON 请求体、stream</translation>
    </message>
    <message>
        <source>Head {i} of {n}</source>
        <translation>第 {i} 头（共 {n}）</translation>
    </message>
    <message>
        <source>How can one GPU answer many people quickly?</source>
        <translation>一张卡怎样同时又快地回答很多人？</translation>
    </message>
    <message>
        <source>In production: EAGLE-3, a light guessing head trained on the big model's hidden states; DeepSeek-V3 and GLM-style MoE models build in multi-token prediction (MTP). Open-ended writing gains less than code.</source>
        <translation>生产上常用 EAGLE-3（在大模型隐藏状态上训练的轻量“猜测头”），DeepSeek-V3、GLM 这类 MoE 模型则内置多 token 预测（MTP）。开放式写作收益比代码小。</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>KV cache = 2 × layers × KV heads × head dim × length × batch × bytes</source>
        <translation>KV 缓存 = 2 × 层数 × KV 头数 × 每头维度 × 长度 × 批大小 × 字节数</translation>
    </message>
    <message>
        <source>KV cache over NVLink / RDMA</source>
        <translation>用 NVLink 或 RDMA 传 KV 缓存</translation>
    </message>
    <message>
        <source>KV heads (what the cheat sheet stores)</source>
        <translation>KV 头（小抄存的就是它们）</translation>
    </message>
    <message>
        <source>Layer {i} of {n}</source>
        <translation>第 {i} 层（共 {n}）</translation>
    </message>
    <message>
        <source>Llama 3 70B · 4-bit</source>
        <translation>Llama 3 70B · 4-bit</translation>
    </message>
    <message>
        <source>Llama 3 70B · FP16</source>
        <translation>Llama 3 70B · FP16</translation>
    </message>
    <message>
        <source>Llama 3 70B · FP8</source>
        <translation>Llama 3 70B · FP8</translation>
    </message>
    <message>
        <source>Llama 3 8B</source>
        <translation>Llama 3 8B</translation>
    </message>
    <message>
        <source>Llama 3 8B in FP16, read once per token by an A100 (about 2 TB/s)</source>
        <translation>Llama 3 8B 用 FP16 存，每写一个字，A100（约 2 TB/s）读一遍</translation>
    </message>
    <message>
        <source>Llama 3 8B in FP16: 32 chapters, about {size}</source>
        <translation>Llama 3 8B，FP16：32 章，约 {size}</translation>
    </message>
    <message>
        <source>Llama 3 8B without grouping</source>
        <translation>Llama 3 8B 不分组</translation>
    </message>
    <message>
        <source>Llama 3 8B · FP16</source>
        <translation>Llama 3 8B · FP16</translation>
    </message>
    <message>
        <source>Llama 3 8B: 128,256 rows × 4,096</source>
        <translation>Llama 3 8B：128,256 行 × 4,096 列</translation>
    </message>
    <message>
        <source>Llama 3 8B: 32 query heads share 8 KV heads → the cheat sheet is 4× smaller</source>
        <translation>Llama 3 8B：32 个查询头共用 8 组键值头，小抄因此小 4 倍</translation>
    </message>
    <message>
        <source>Metaphors and their formal names</source>
        <translation>比喻对照表</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>下一段 ▶</translation>
    </message>
    <message>
        <source>One trip reads the whole question</source>
        <translation>一趟读完整道题</translation>
    </message>
    <message>
        <source>Prefill/decode disaggregation</source>
        <translation>预填充/解码分离</translation>
    </message>
    <message>
        <source>Press to carry the book: the first trip reads the question.</source>
        <translation>按一下，搬一趟书：第一趟先读题。</translation>
    </message>
    <message>
        <source>Press: one trip</source>
        <translation>按一下：搬一趟</translation>
    </message>
    <message>
        <source>Reading the question (prefill): one forward pass over every known token, big matrix multiplications. It is compute-bound, and even 1,000 tokens take only milliseconds. Each layer does attention softmax(QKᵀ/√d)·V, then the feed-forward network; each token looks only at the tokens before it.</source>
        <translation>读题（预填充，prefill）：一次前向计算处理全部已知的字，是大矩阵乘法；算力受限，1,000 个字也只要毫秒级。每层先做注意力 softmax(QKᵀ/√d)·V，再过前馈网络；每个字只看它前面的字（因果注意力）。</translation>
    </message>
    <message>
        <source>Routing: the cache helps only on the server that holds it</source>
        <translation>路由：缓存只在存着它的那台服务器上管用</translation>
    </message>
    <message>
        <source>Running ahead (speculative decoding): a draft model guesses N tokens, the big model checks them in one forward pass, keeps the prefix it agrees with and resamples at the first disagreement, so the output distribution is exactly the same. Code and factual text often keep 3–4 of 5.</source>
        <translation>抢跑（投机解码）：草稿模型猜 N 个字，大模型一次前向校验，接受与自己一致的前缀，从第一个不一致处重新采样；输出分布和逐个生成完全一样。代码、事实类文本常能保留 5 个里的 3–4 个。</translation>
    </message>
    <message>
        <source>Sending it back (streaming): over SSE or WebSocket frames, each token is pushed as soon as it is written; 20–80 tokens per second is common, depending on model size and hardware. A 10,000-token system prompt that is not cached makes a long pause before the first token.</source>
        <translation>送回（流式）：用 SSE 或 WebSocket 帧，出一个推一个；常见 20–80 字/秒，取决于模型大小和硬件。1 万字的系统提示如果没被缓存，停顿会很长。</translation>
    </message>
    <message>
        <source>Server · GPU</source>
        <translation>服务器 · GPU</translation>
    </message>
    <message>
        <source>Sharing the table</source>
        <translation>拼桌</translation>
    </message>
    <message>
        <source>Sharing the table (batching): the weights are read once per trip whether the batch is 1 or 32, so more requests share that read. A static batch waits for its longest request; continuous batching lets a finished request leave at once and slots new prefills in. PagedAttention keeps the cache in fixed-size pages, like virtual memory.</source>
        <translation>拼桌（批处理）：权重不管批大小是 1 还是 32 都要读一遍，多带请求就是摊薄这次读取。静态批要等最长的请求；连续批让写完的请求立刻让座，新请求的预填充随时插进来。PagedAttention 把 KV 缓存按固定大小的页存放，像虚拟内存。</translation>
    </message>
    <message>
        <source>Sharing the table: everyone seated writes on the same trip</source>
        <translation>拼桌：坐着的人在同一趟里各写一个字</translation>
    </message>
    <message>
        <source>Some models let some layers look only at a nearby stretch (sliding-window attention).</source>
        <translation>有些模型部分层只看附近一段（滑动窗口注意力）。</translation>
    </message>
    <message>
        <source>Start over</source>
        <translation>重来</translation>
    </message>
    <message>
        <source>Start the engine to measure a trip here.</source>
        <translation>启动模型后，这里会实测一趟的时间。</translation>
    </message>
    <message>
        <source>Start the engine to time both ways here.</source>
        <translation>启动模型后，这里会实测两种写法的时间。</translation>
    </message>
    <message>
        <source>Static batch: everyone waits for the longest</source>
        <translation>静态批：大家都等最长的那个</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Terms</source>
        <translation>术语</translation>
    </message>
    <message>
        <source>The apprentice guesses, the book checks every guess in one trip:</source>
        <translation>小徒弟先猜，大模型一趟把猜的全部校验：</translation>
    </message>
    <message>
        <source>The cheat sheet (KV cache) keeps each token's key (K) and value (V) in every layer. Without it, every new token recomputes the K and V of everything before it: a 500-token answer is O(500²) attention work instead of 500 steps.</source>
        <translation>小抄（KV 缓存）保存每个字在每一层的键（K）和值（V）。没有它，生成第 N 个字要重算前面所有的 K、V；500 个字的回答，是 O(500²) 的注意力工作量，而不是 500 步。</translation>
    </message>
    <message>
        <source>The cheat sheet, sharing the table, the apprentice and the same opening: each saves trips. §8, §12, §13, §15</source>
        <translation>小抄、拼桌、小徒弟、同样的开头：每一招都在省趟数。§8、§12、§13、§15</translation>
    </message>
    <message>
        <source>The dictionary (embedding matrix), to scale by area</source>
        <translation>字典（嵌入矩阵），面积按比例画</translation>
    </message>
    <message>
        <source>The end</source>
        <translation>三个问题</translation>
    </message>
    <message>
        <source>The first trip reads the whole question (prefill); every later trip writes one token (decode). §5, §7</source>
        <translation>第一趟要读完整道题（预填充），之后每趟只写一个字（解码）。§5、§7</translation>
    </message>
    <message>
        <source>The model writes {n} tokens nobody sees (its “thinking”), then the answer:</source>
        <translation>模型先写 {n} 个谁也看不见的字（它的“思考”），再写答案：</translation>
    </message>
    <message>
        <source>The same opening (prefix caching): the same prefix gives exactly the same K and V, so they can be reused. vLLM's automatic prefix caching and SGLang's RadixAttention keep a lookup table of computed KV blocks. Whether it hits depends on routing the request to the server that holds them.</source>
        <translation>同样的开头（前缀缓存）：同样的前缀算出完全相同的 K、V，可以直接复用。vLLM 的自动前缀缓存（APC）、SGLang 的 RadixAttention 都维护一张“算过的 KV 页”查找表。能不能命中，取决于请求有没有被路由到同一台服务器。</translation>
    </message>
    <message>
        <source>The same sentence gets other numbers in another model:</source>
        <translation>同一句话换个模型，编号就不同：</translation>
    </message>
    <message>
        <source>The source: 5–10 ms per step</source>
        <translation>原文：一步约 5–10 毫秒</translation>
    </message>
    <message>
        <source>The weights are a book and each Transformer layer a chapter: Llama 3 8B in FP16 is about 16 GB in 32 chapters. “One trip” is one forward pass: the weights are read from GPU memory into the compute cores. Strictly, the book never leaves the warehouse; what is read is a copy.</source>
        <translation>权重是一本书，每个 Transformer 层是一章：Llama 3 8B 的权重用 FP16 存约 16 GB，共 32 章。“搬一趟”指一次前向计算：权重要从显存读进计算核心。严格说，书没有离开仓库，读的是它的一份拷贝。</translation>
    </message>
    <message>
        <source>The “dictionary” is the embedding matrix, part of the model's weights: one row of numbers per token id. Looking up every token gives a table of tokens × d_model numbers. Llama 3's has 128,256 rows × 4,096 columns (d_model = 4,096).</source>
        <translation>“字典”叫嵌入矩阵，是模型权重的一部分：每个编号对应一行数。每个字查一行，得到一张“字数 × d_model”的表。Llama 3 的字典是 128,256 行 × 4,096 列（d_model = 4,096）。</translation>
    </message>
    <message>
        <source>This computer, this model</source>
        <translation>这台电脑，这个模型</translation>
    </message>
    <message>
        <source>This model: formula {f} per token</source>
        <translation>这个模型：按公式每个字 {f}</translation>
    </message>
    <message>
        <source>end of text</source>
        <translation>文末</translation>
    </message>
    <message>
        <source>This model: formula {f} per token; its engine allocates {m} per token</source>
        <translation>这个模型：按公式每个字 {f}；引擎实际分配每个字 {m}</translation>
    </message>
    <message>
        <source>This model: {n} chapters (layers), {size} in all</source>
        <translation>这个模型：{n} 章（层），共 {size}</translation>
    </message>
    <message>
        <source>Three questions</source>
        <translation>三个问题</translation>
    </message>
    <message>
        <source>Three questions, and now they can be answered.</source>
        <translation>三个问题，现在可以回答了。</translation>
    </message>
    <message>
        <source>Time is accounted at about {ms:.0f} ms per trip. How many the apprentice guesses right is a random illustration in the spirit of “code often keeps 3–4”. A newcomer's first trip reads the question.</source>
        <translation>耗时按每趟约 {ms:.0f} 毫秒推算。小徒弟每次猜中几个是按“代码类常能猜中 3–4 个”随机模拟的示意。新人坐下的第一趟要先读题。</translation>
    </message>
    <message>
        <source>Two requests, the same {n}-token system prompt ({b} blocks of {s} tokens)</source>
        <translation>两个请求，同样的 {n} 个字的系统提示（占 {b} 页，每页 {s} 个字）</translation>
    </message>
    <message>
        <source>Vocabulary size, to scale</source>
        <translation>词表大小，按比例画</translation>
    </message>
    <message>
        <source>Warehouse · GPU memory</source>
        <translation>仓库 · 显存</translation>
    </message>
    <message>
        <source>What travels back, frame by frame</source>
        <translation>一帧一帧送回来的内容</translation>
    </message>
    <message>
        <source>Why does the first word take a moment, and then the rest come at a steady pace?</source>
        <translation>为什么第一个字要等一下，后面的字却一个接一个匀速冒出来？</translation>
    </message>
    <message>
        <source>Why does the speed depend on memory more than on arithmetic?</source>
        <translation>为什么快慢主要看显存，而不是算力？</translation>
    </message>
    <message>
        <source>Why not always take the most likely token? Always taking the top one (greedy) makes text dull and repetitive: it can loop for ever. Drawing keeps some variety. Temperature below 1 sharpens the odds, above 1 flattens them; top-k keeps the k best; top-p keeps the fewest tokens whose odds add up to p. Reasoning models often use a lower temperature.</source>
        <translation>为什么不总挑最可能的那个？每次都挑第一名（贪心），文字会又呆又重复，甚至原地打转。抽签能留一点变化。温度低于 1 让分布更尖，高于 1 更平；top-k 只留前 k 名；top-p 只留概率加起来够 p 的最少几个。推理模型常用更低温度。</translation>
    </message>
    <message>
        <source>With the apprentice</source>
        <translation>带上小徒弟</translation>
    </message>
    <message>
        <source>With the apprentice: it guesses 5, the book checks them in the same trip</source>
        <translation>带上小徒弟：它先猜 5 个，大模型在同一趟里校验</translation>
    </message>
    <message>
        <source>With the cheat sheet</source>
        <translation>有小抄</translation>
    </message>
    <message>
        <source>Without the cheat sheet</source>
        <translation>没有小抄</translation>
    </message>
    <message>
        <source>Writing (decode): one forward pass per new token, and only the last position's result is used; the bottleneck is reading memory (memory-bound). The source: an 8B model on an A100 takes about 5–10 ms a step. This page's check: at about 2 TB/s, reading 16 GB once takes about 8 ms.</source>
        <translation>写字（解码）：每个新字一次前向计算，只有最后一个位置的结果有用，瓶颈在读显存：带宽受限。原文：8B 模型在 A100 上一步约 5–10 毫秒。对一下账：A100 显存带宽约 2 TB/s，读一遍 16 GB 约 8 毫秒，正好落在原文的范围里。</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Your question leaves as an HTTPS POST: the model llama-3-8b-instruct, “stream” on (write and send as you go), a system prompt “You are a concise assistant.”, and your question. The requests ChatGPT, Claude and Cursor send are much the same.</source>
        <translation>你的问题以一个 HTTPS POST 发出：模型 llama-3-8b-instruct，打开 stream（边写边发），一条系统提示（“你是一个简洁的助手。”），加上你的问题。ChatGPT、Claude、Cursor 发出的请求大同小异。</translation>
    </message>
    <message>
        <source>Your question, cut by this model's tokenizer:</source>
        <translation>你的问题，被这个模型的分词器切成：</translation>
    </message>
    <message>
        <source>Your question, {n} new tokens</source>
        <translation>你的问题，写 {n} 个新字</translation>
    </message>
    <message>
        <source>Your question:</source>
        <translation>你的问题：</translation>
    </message>
    <message>
        <source>accounted time</source>
        <translation>推算耗时</translation>
    </message>
    <message>
        <source>another model</source>
        <translation>另一个模型</translation>
    </message>
    <message>
        <source>batching: static, continuous, PagedAttention, chunked prefill, disaggregation</source>
        <translation>批处理：静态批、连续批、PagedAttention、切块预填充、预填充/解码分离</translation>
    </message>
    <message>
        <source>between tokens (mean)</source>
        <translation>字与字的间隔（平均）</translation>
    </message>
    <message>
        <source>bytes of the real weight file</source>
        <translation>真实权重文件的字节数</translation>
    </message>
    <message>
        <source>computed</source>
        <translation>要重新算</translation>
    </message>
    <message>
        <source>cut</source>
        <translation>被砍掉</translation>
    </message>
    <message>
        <source>cut by this model's tokenizer</source>
        <translation>由这个模型的分词器切块</translation>
    </message>
    <message>
        <source>cutting into pieces, numbering</source>
        <translation>切块、编号</translation>
    </message>
    <message>
        <source>decode (memory-bound)</source>
        <translation>解码（带宽受限）</translation>
    </message>
    <message>
        <source>dict.</source>
        <translation>字典</translation>
    </message>
    <message>
        <source>done</source>
        <translation>写完了</translation>
    </message>
    <message>
        <source>drawing lots</source>
        <translation>抽签</translation>
    </message>
    <message>
        <source>each bar: one trip (ms)</source>
        <translation>每根柱子：一趟（毫秒）</translation>
    </message>
    <message>
        <source>each bar: one trip, one new token · median {ms}</source>
        <translation>每根柱子：一趟，写一个新字 · 中位数 {ms}</translation>
    </message>
    <message>
        <source>each chapter {size}; the dictionary (embeddings) {dict}</source>
        <translation>每章 {size}；字典（嵌入）{dict}</translation>
    </message>
    <message>
        <source>embedding matrix (vocabulary × d_model)</source>
        <translation>嵌入矩阵（词表 × 模型宽度）</translation>
    </message>
    <message>
        <source>even attention, not the model's</source>
        <translation>平均分配的注意力，不是模型算的</translation>
    </message>
    <message>
        <source>every layer syncs; worth it only with fast links such as NVLink</source>
        <translation>每层都要同步，只有 NVLink 这类高速互联才划算</translation>
    </message>
    <message>
        <source>first</source>
        <translation>第一个</translation>
    </message>
    <message>
        <source>first token (hidden): {ms}</source>
        <translation>第一个字（看不见）：{ms}</translation>
    </message>
    <message>
        <source>first visible token: {ms}</source>
        <translation>第一个可见字：{ms}</translation>
    </message>
    <message>
        <source>formal term</source>
        <translation>正式说法</translation>
    </message>
    <message>
        <source>formula</source>
        <translation>公式推算</translation>
    </message>
    <message>
        <source>formula of the source, §09</source>
        <translation>原文的公式，§09</translation>
    </message>
    <message>
        <source>found in the cache: no work</source>
        <translation>缓存里现成的：不用算</translation>
    </message>
    <message>
        <source>from the allocated cache tensors</source>
        <translation>取自实际分配的缓存张量</translation>
    </message>
    <message>
        <source>from the source</source>
        <translation>取自原文</translation>
    </message>
    <message>
        <source>green square, top left</source>
        <translation>左上角的绿色小方块</translation>
    </message>
    <message>
        <source>hit</source>
        <translation>命中</translation>
    </message>
    <message>
        <source>illustrative</source>
        <translation>示意</translation>
    </message>
    <message>
        <source>in production, typically</source>
        <translation>生产环境常见</translation>
    </message>
    <message>
        <source>kept {a} of {k} guesses (+{n})</source>
        <translation>猜的 {k} 个留下 {a} 个（+{n}）</translation>
    </message>
    <message>
        <source>machines and assignments</source>
        <translation>机器数和分配结果</translation>
    </message>
    <message>
        <source>measured here</source>
        <translation>本机实测</translation>
    </message>
    <message>
        <source>metaphor</source>
        <translation>比喻</translation>
    </message>
    <message>
        <source>miss: computed again</source>
        <translation>没命中：重新算</translation>
    </message>
    <message>
        <source>mixture-of-experts models only</source>
        <translation>MoE（混合专家）模型专用</translation>
    </message>
    <message>
        <source>model not loaded</source>
        <translation>模型未加载</translation>
    </message>
    <message>
        <source>no draft model loaded; in the spirit of the source's picture</source>
        <translation>没有加载草稿模型；按原文插图的意思画</translation>
    </message>
    <message>
        <source>no syncing inside a layer; needs many requests to keep every GPU busy</source>
        <translation>不用层内同步，但请求要够多才不空转</translation>
    </message>
    <message>
        <source>off</source>
        <translation>不设限</translation>
    </message>
    <message>
        <source>one model</source>
        <translation>一个模型</translation>
    </message>
    <message>
        <source>one trip = one forward pass: a copy of every chapter is read</source>
        <translation>搬一趟 = 一次前向计算：每一章的拷贝都读一遍</translation>
    </message>
    <message>
        <source>one trip → one token:</source>
        <translation>一趟 → 一个字：</translation>
    </message>
    <message>
        <source>parameters × bytes per parameter; GPU sizes from the datasheets</source>
        <translation>参数个数 × 每个参数的字节数；显存取自产品手册</translation>
    </message>
    <message>
        <source>pipeline, tensor and expert parallelism</source>
        <translation>流水线并行、张量并行、专家并行</translation>
    </message>
    <message>
        <source>prefill (compute-bound), causal attention</source>
        <translation>预填充（算力受限）、因果注意力</translation>
    </message>
    <message>
        <source>prefill on this computer, median of 3</source>
        <translation>本机预填充，3 次取中位数</translation>
    </message>
    <message>
        <source>prefix caching (APC, RadixAttention), routing</source>
        <translation>前缀缓存（APC、RadixAttention）、路由</translation>
    </message>
    <message>
        <source>query heads</source>
        <translation>查询头</translation>
    </message>
    <message>
        <source>read the question (+1)</source>
        <translation>读题（+1）</translation>
    </message>
    <message>
        <source>reading the question</source>
        <translation>读题</translation>
    </message>
    <message>
        <source>real rows of this model's embedding matrix</source>
        <translation>这个模型嵌入矩阵的真实行</translation>
    </message>
    <message>
        <source>reasoning tokens</source>
        <translation>推理时思考的字</translation>
    </message>
    <message>
        <source>red line, the floor: {bytes} ÷ {bw}/s = {ms}</source>
        <translation>红线是下限：{bytes} ÷ {bw}/s = {ms}</translation>
    </message>
    <message>
        <source>request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>router</source>
        <translation>路由器</translation>
    </message>
    <message>
        <source>row: a token reading · column: the token it looks at · dark above the diagonal: the future is hidden (causal)</source>
        <translation>行：正在读的字 · 列：它看的字 · 对角线以上是暗的：后面的字看不见（因果注意力）</translation>
    </message>
    <message>
        <source>□ is a character lost from the old texts; the poems corpus marks it so, and the model learnt it</source>
        <translation>□ 是古籍里缺失的字：诗词语料就这样标记，模型也跟着学会了</translation>
    </message>
    <message>
        <source>its first {n} of {total} tokens</source>
        <translation>只画了 {total} 个字中的前 {n} 个</translation>
    </message>
    <message>
        <source>same answer both ways</source>
        <translation>两种写法答案相同</translation>
    </message>
    <message>
        <source>sampling: temperature, top-k, top-p</source>
        <translation>采样：温度、top-k、top-p</translation>
    </message>
    <message>
        <source>second</source>
        <translation>第二个</translation>
    </message>
    <message>
        <source>second request, after the first</source>
        <translation>第二个请求，在第一个之后</translation>
    </message>
    <message>
        <source>second request, cold</source>
        <translation>第二个请求，缓存是空的</translation>
    </message>
    <message>
        <source>section</source>
        <translation>段落</translation>
    </message>
    <message>
        <source>sending back</source>
        <translation>送回</translation>
    </message>
    <message>
        <source>server {i}</source>
        <translation>服务器 {i}</translation>
    </message>
    <message>
        <source>sharing the table</source>
        <translation>拼桌</translation>
    </message>
    <message>
        <source>speculative decoding: draft model, verify, acceptance</source>
        <translation>投机解码：草稿模型、校验、接受</translation>
    </message>
    <message>
        <source>step {i}</source>
        <translation>第 {i} 步</translation>
    </message>
    <message>
        <source>streaming (SSE), TTFT, inter-token latency</source>
        <translation>流式（SSE）、首字时间、字间延迟</translation>
    </message>
    <message>
        <source>temperature {t:.2f} · top-p {p:.2f} · top-k {k}</source>
        <translation>温度 {t:.2f} · top-p {p:.2f} · top-k {k}</translation>
    </message>
    <message>
        <source>the apprentice</source>
        <translation>小徒弟</translation>
    </message>
    <message>
        <source>the apprentice's guess, kept</source>
        <translation>小徒弟猜的，留下了</translation>
    </message>
    <message>
        <source>the book's own token (free with the check)</source>
        <translation>大模型自己的字（校验时顺带得到）</translation>
    </message>
    <message>
        <source>the book, its chapters</source>
        <translation>书、章</translation>
    </message>
    <message>
        <source>the book: Llama 3 8B weights, FP16, {size}</source>
        <translation>书：Llama 3 8B 的权重，FP16，{size}</translation>
    </message>
    <message>
        <source>the cheat sheet</source>
        <translation>小抄</translation>
    </message>
    <message>
        <source>the dictionary</source>
        <translation>字典</translation>
    </message>
    <message>
        <source>the request in an envelope</source>
        <translation>装进信封的请求</translation>
    </message>
    <message>
        <source>the same opening</source>
        <translation>同样的开头</translation>
    </message>
    <message>
        <source>the size of the cheat sheet</source>
        <translation>小抄有多大</translation>
    </message>
    <message>
        <source>the source draws only 6 steps: an illustration</source>
        <translation>原文图里只画了 6 步，是示意</translation>
    </message>
    <message>
        <source>the source's example, with your question</source>
        <translation>原文的例子，换上你的问题</translation>
    </message>
    <message>
        <source>thinking nobody sees</source>
        <translation>看不见的思考</translation>
    </message>
    <message>
        <source>this engine fed {a} and {b} rows</source>
        <translation>本机引擎实际算了 {a} 行和 {b} 行</translation>
    </message>
    <message>
        <source>this engine's prefix cache, median of 3</source>
        <translation>本机引擎的前缀缓存，3 次取中位数</translation>
    </message>
    <message>
        <source>this engine's scheduler, {n} requests; the two modes run in turn after a warm-up</source>
        <translation>本机引擎的调度器，{n} 个请求；热身之后两种方式轮流测</translation>
    </message>
    <message>
        <source>this model</source>
        <translation>这个模型</translation>
    </message>
    <message>
        <source>this model's attention, layer {l}, head {h}</source>
        <translation>这个模型的注意力，第 {l} 层，第 {h} 头</translation>
    </message>
    <message>
        <source>this model's tokenizer, live</source>
        <translation>这个模型的分词器，现场切</translation>
    </message>
    <message>
        <source>this model: {v:,} rows × {d}</source>
        <translation>这个模型：{v:,} 行 × {d} 列</translation>
    </message>
    <message>
        <source>this model; the hidden tokens are its first {n}</source>
        <translation>这个模型；把它写的前 {n} 个字当作看不见的思考</translation>
    </message>
    <message>
        <source>this page's check; the bandwidth is not the source's</source>
        <translation>本页推算；带宽这个数不是原文的</translation>
    </message>
    <message>
        <source>time saved on reading the question: {ms}</source>
        <translation>读题省下的时间：{ms}</translation>
    </message>
    <message>
        <source>time to first token</source>
        <translation>首字时间</translation>
    </message>
    <message>
        <source>times since the request arrived, this computer</source>
        <translation>从请求到达算起的时间，本机</translation>
    </message>
    <message>
        <source>tokenization (byte-level BPE), token ids</source>
        <translation>分词（字节级 BPE）、字的编号</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>字数</translation>
    </message>
    <message>
        <source>tokens per second</source>
        <translation>每秒字数</translation>
    </message>
    <message>
        <source>tokens per trip</source>
        <translation>每趟写几个字</translation>
    </message>
    <message>
        <source>top 50 of {v:,}, renormalised</source>
        <translation>{v:,} 个里的前 50 名，重新归一</translation>
    </message>
    <message>
        <source>top-k</source>
        <translation>top-k</translation>
    </message>
    <message>
        <source>top-p</source>
        <translation>top-p</translation>
    </message>
    <message>
        <source>trip {i}</source>
        <translation>第 {i} 趟</translation>
    </message>
    <message>
        <source>trips</source>
        <translation>趟数</translation>
    </message>
    <message>
        <source>visible answer:</source>
        <translation>看得见的答案：</translation>
    </message>
    <message>
        <source>warehouse → desk, one trip</source>
        <translation>仓库 → 桌子，搬一趟</translation>
    </message>
    <message>
        <source>weights, Transformer layers</source>
        <translation>权重、Transformer 层</translation>
    </message>
    <message>
        <source>with</source>
        <translation>有小抄</translation>
    </message>
    <message>
        <source>without</source>
        <translation>没有小抄</translation>
    </message>
    <message>
        <source>writing</source>
        <translation>写字</translation>
    </message>
    <message>
        <source>{a} of {k} guesses kept</source>
        <translation>猜的 {k} 个留下 {a} 个</translation>
    </message>
    <message>
        <source>{n:,} tokens</source>
        <translation>{n:,} 个字</translation>
    </message>
    <message>
        <source>{name}: {ms} in all, median of {n} runs</source>
        <translation>{name}：共 {ms}，{n} 次的中位数</translation>
    </message>
    <message>
        <source>{name}: {ms} in all</source>
        <translation>{name}：共 {ms}</translation>
    </message>
    <message>
        <source>{n} K/V rows computed</source>
        <translation>算了 {n} 行 K/V</translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation>{n} 个字</translation>
    </message>
    <message>
        <source>your question: {n} tokens · dashed: a piece of a character (its UTF-8 bytes split over tokens)</source>
        <translation>你的问题共 {n} 个字 · 虚线框：半个字（一个字的 UTF-8 字节被拆到几块里）</translation>
    </message>
    <message>
        <source>{n} tokens × {d} numbers</source>
        <translation>{n} 个字 × 每个字 {d} 个数</translation>
    </message>
    <message>
        <source>{n} trips</source>
        <translation>{n} 趟</translation>
    </message>
    <message>
        <source>{r} thrown away</source>
        <translation>扔掉 {r} 个</translation>
    </message>
    <message>
        <source>{x:,.0f} times this model's book</source>
        <translation>是这个模型这本书的 {x:,.0f} 倍</translation>
    </message>
    <message>
        <source>“stream”: true means: send each word as soon as it is written. ChatGPT, Claude and Cursor send much the same request.</source>
        <translation>“stream”: true 的意思是边写边发。ChatGPT、Claude、Cursor 发出的请求大同小异。</translation>
    </message>
    <message>
        <source>… {n} more</source>
        <translation>……还有 {n} 个字</translation>
    </message>
    <message>
        <source>◀ Back</source>
        <translation>◀ 上一段</translation>
    </message>
    <message>
        <source>(the source's closing line, in English)</source>
        <translation>（原文的结尾句）</translation>
    </message>
    <message>
        <source>trip {j} of {n} · this trip {ms} · all trips {total} · cheat sheet: {c} tokens in {b} blocks of {bs}</source>
        <translation>第 {j} 趟 / 共 {n} 趟 · 这一趟 {ms} · 累计 {total} · 小抄：{c} 个字，占 {b} 页（每页 {bs} 个）</translation>
    </message>
    <message>
        <source>each trip timed here</source>
        <translation>每一趟都在本机计时</translation>
    </message>
    <message>
        <source>KV cache:</source>
        <translation>KV 缓存：</translation>
    </message>
    <message>
        <source>block {b}</source>
        <translation>第 {b} 页</translation>
    </message>
    <message>
        <source>Each token is one real trip of the model, with its KV cache; the words are the source's. Green: the model's own pick.</source>
        <translation>每个字都是模型真跑的一趟，带着 KV 缓存；字是原文的（按原文填，不抽签）。绿色：模型自己也会挑中的字。</translation>
    </message>
    <message>
        <source>When the engine is running, it writes this line here, one real trip per token.</source>
        <translation>引擎运行时，这句话会在这里由模型一趟一个字地写出来。</translation>
    </message>
    <message>
        <source>no engine is running here</source>
        <translation>这里没有运行引擎</translation>
    </message>
    <message>
        <source>the engine is still starting</source>
        <translation>引擎还在启动</translation>
    </message>
    <message>
        <source>no draft model is loaded</source>
        <translation>没有加载小徒弟（草稿模型）</translation>
    </message>
    <message>
        <source>Guesses: random</source>
        <translation>猜中：随机</translation>
    </message>
    <message>
        <source>Guesses: live draft</source>
        <translation>猜中：真小徒弟</translation>
    </message>
    <message>
        <source>Disabled: {reason}</source>
        <translation>不可用：{reason}</translation>
    </message>
    <message>
        <source>Each press asks the engine for one real verify trip of the bundled draft model</source>
        <translation>每按一下，都让引擎用自带的小徒弟（草稿模型）真跑一趟验证</translation>
    </message>
    <message>
        <source>measured on the bundled draft model</source>
        <translation>用自带的小徒弟模型实测</translation>
    </message>
    <message>
        <source>the engine is running the trip…</source>
        <translation>引擎正在跑这一趟…</translation>
    </message>
    <message>
        <source>guessed: {g} · kept {a} · verify {ms}</source>
        <translation>猜了：{g} · 留下 {a} 个 · 验证 {ms}</translation>
    </message>
    <message>
        <source>random, the source's 3–4 of 5 for code</source>
        <translation>随机，按原文“代码类 5 个常能猜中 3–4 个”</translation>
    </message>
    <message>
        <source>live draft model unavailable: {reason}</source>
        <translation>真小徒弟用不了：{reason}</translation>
    </message>
    <message>
        <source>Time is accounted at about {ms:.0f} ms per trip. Each press is one real verify trip of the bundled draft model. A newcomer's first trip reads the question.</source>
        <translation>耗时按每趟约 {ms:.0f} 毫秒推算。每按一下，都是自带的小徒弟模型真跑的一趟验证。新人坐下的第一趟要先读题。</translation>
    </message>
    <message>
        <source>All terms explained ({n})</source>
        <translation>全部术语解释（{n} 个）</translation>
    </message>
    <message>
        <source>{m:.1f} million</source>
        <translation>{m:.1f} 百万</translation>
    </message>
    <message>
        <source>{w:.0f} × 10,000</source>
        <translation>{w:.0f} 万</translation>
    </message>
    <message>
        <source>The model here: a GPT-2 of {size} parameters trained only on classical Chinese poems: it continues a poem, it does not answer.</source>
        <translation>这里的模型：一个 {size}参数的 GPT-2，只读过古诗；它按诗的格式往下续写，不会回答问题。</translation>
    </message>
    <message>
        <source>The model here: a GPT-2 of {size} parameters trained only on Python's documentation: it imitates it, it does not answer.</source>
        <translation>这里的模型：一个 {size}参数的 GPT-2，只读过 Python 的文档；它模仿那种文字往下写，不会回答问题。</translation>
    </message>
    <message>
        <source>No model is loaded here: the words on this page are an illustration.</source>
        <translation>这里没有加载模型：本页的字是示意。</translation>
    </message>
    <message>
        <source>One trip of the book writes one token.</source>
        <translation>搬一趟书，写一个字。</translation>
    </message>
    <message>
        <source>The cheat sheet keeps what was read.</source>
        <translation>小抄记下读过的东西。</translation>
    </message>
    <message>
        <source>Sharing the table costs no extra trip.</source>
        <translation>拼桌不用多搬一趟。</translation>
    </message>
    <message>
        <source>Tearing the book (parallelism)</source>
        <translation>拆书（并行）</translation>
    </message>
    <message>
        <source>tearing the book</source>
        <translation>拆书</translation>
    </message>
    <message>
        <source>KV cache = 2 × layers × KV heads × head dim × length × batch × bytes. Llama 3 8B, 2,000 tokens, FP16: 262 MB (the source rounds to about 250 MB); 100,000 tokens 13.1 GB (the source: about 12.5 GB); without grouping, 2,000 tokens take about 1 GB. DeepSeek's MLA compresses each token in each layer to 576 numbers: about 70 kB per token.</source>
        <translation>KV 缓存 = 2 × 层数 × KV 头数 × 每头维度 × 长度 × 批大小 × 字节数。Llama 3 8B、2,000 个字、FP16：262 MB（原文取整为约 250 MB）；10 万字：13.1 GB（原文：约 12.5 GB）；如果不分组（老式多头注意力），2,000 个字约 1 GB。DeepSeek 用多头潜在注意力（MLA）把每层每个字压成 576 个数，约 70 kB/字。</translation>
    </message>
    <message>
        <source>Tearing the book (parallelism): 8B in FP16 is about 16 GB, 70B about 141 GB; the cards are sold as H100 80GB, H200 141GB and B200 180GB (the page draws the memory each reports, in the same GB). By chapters = pipeline parallel; every page torn apart = tensor parallel; experts living apart = expert parallel (MoE only).</source>
        <translation>拆书（并行）：8B 用 FP16 约 16 GB，70B 约 141 GB；显卡的型号叫 H100 80GB、H200 141GB、B200 180GB（图里画的是每张卡实际报告的显存，单位同样是 GB）。按章拆 = 流水线并行；每页撕开 = 张量并行；专家分住 = 专家并行（MoE 专用）。</translation>
    </message>
    <message>
        <source>What the request says</source>
        <translation>请求里写了什么</translation>
    </message>
    <message>
        <source>ChatGPT, Claude and Cursor send much the same request.</source>
        <translation>ChatGPT、Claude、Cursor 发出的请求也大同小异。</translation>
    </message>
    <message>
        <source>where it goes: the server's chat address, over HTTPS</source>
        <translation>寄到哪里：服务器的对话地址，走 HTTPS</translation>
    </message>
    <message>
        <source>which book to carry: the weights that will write the answer</source>
        <translation>搬哪本书：用来写回答的那套权重</translation>
    </message>
    <message>
        <source>send each word as soon as it is written</source>
        <translation>写出一个字就马上送回一个字</translation>
    </message>
    <message>
        <source>instructions that come before your question</source>
        <translation>排在你的问题前面的说明</translation>
    </message>
    <message>
        <source>your question, word for word</source>
        <translation>你的问题，一字不改</translation>
    </message>
    <message>
        <source>the book never leaves the warehouse</source>
        <translation>书从不离开仓库</translation>
    </message>
    <message>
        <source>Why are common characters split? This model's tokenizer learned from English code and documentation, so it cut few Chinese characters whole; a tokenizer trained on Chinese (the Chinese poetry model) keeps each common character as one piece. This page cuts with whichever model is loaded.</source>
        <translation>为什么常用字也被拆开？这个模型的分词器是在英文代码和文档上学的，整块收下的汉字很少；在中文上训练的分词器（中文古诗模型）会把每个常用字当成一块。本页用的是当前加载的模型来切。</translation>
    </message>
    <message>
        <source>Reading a question is compute-bound, writing is memory-bound: each gets GPUs of its own, and the cheat sheet is handed over between them.</source>
        <translation>读题算力受限，写字带宽受限：各用各的卡，小抄在两边之间传过去。</translation>
    </message>
    <message>
        <source>Use “tearing the book” on the Live page to see real worker processes measured here.</source>
        <translation>到“现场”页拉动“拆书”，这里就会显示真实工作进程的实测时间。</translation>
    </message>
    <message>
        <source>All in decimal GB (1 GB = 1,000,000,000 bytes). Dashed: the memory each card reports. Green: fits one {gpu} with the weights alone; orange: needs a bigger card or several.</source>
        <translation>全部按十进制 GB（1 GB = 10 亿字节）。虚线：每张卡报告的显存。绿色：只放权重，一张 {gpu} 放得下；橙色：要更大的卡或几张卡。</translation>
    </message>
    <message>
        <source>its cache holds the opening</source>
        <translation>它的缓存里有这个开头</translation>
    </message>
    <message>
        <source>median of {n} runs, {lo}–{hi}</source>
        <translation>{n} 次的中位数，{lo}–{hi}</translation>
    </message>
    <message>
        <source>Measured here, continuous batching saved no trip ({tc} against {ts}): the answers ended early, so no seat stood empty to refill.</source>
        <translation>本机实测：连续批没有省下一趟（{tc} 对 {ts}）：回答都提前结束了，没有空出的座位可补。</translation>
    </message>
    <message>
        <source>Measured here, continuous batching took fewer trips ({tc} against {ts}) but more time ({c} against {s}): its trips also carry chunks of C's question, and on this CPU a trip's time grows with the tokens it carries.</source>
        <translation>本机实测：连续批趟数更少（{tc} 对 {ts}），总时间却更长（{c} 对 {s}）：它的趟里还带着 C 的问题的分块，而在这台 CPU 上，一趟的时间随它带的字数增长。</translation>
    </message>
    <message>
        <source>Measured here, the two times overlap (continuous {c}, static {s}): this computer was busy while measuring. The trips saved ({ts} against {tc}) are the lesson.</source>
        <translation>本机实测：两个时间互有重叠（连续批 {c}，静态批 {s}）：测量时这台电脑正忙。这一页要讲的是省下的趟数（{ts} 对 {tc}）。</translation>
    </message>
    <message>
        <source>The apprentice has {w:.0f}% of the book's weights, yet one of its trips takes {t:.0f}% of the book's ({d} against {p}).</source>
        <translation>小徒弟的权重只有书的 {w:.0f}%，它跑一趟却要书的一趟的 {t:.0f}%（{d} 对 {p}）。</translation>
    </message>
    <message>
        <source>median of {n} runs</source>
        <translation>{n} 轮的中位数</translation>
    </message>
    <message>
        <source>FP16</source>
        <translation>FP16</translation>
    </message>
    <message>
        <source>in use on the Live page</source>
        <translation>“现场”页正在用的</translation>
    </message>
    <message>
        <source>{bytes} ({ratio:.2f}×) · a trip {ms} · {tps} tok/s</source>
        <translation>{bytes}（{ratio:.2f} 倍）· 一趟 {ms} · 每秒 {tps} 个字</translation>
    </message>
    <message>
        <source>{bytes} · a trip {ms} · {tps} tok/s</source>
        <translation>{bytes} · 一趟 {ms} · 每秒 {tps} 个字</translation>
    </message>
    <message>
        <source>A trip here is mostly reading the weights (§7): the apprentice saves the chapters it skips, not its dictionary.</source>
        <translation>在这台电脑上，一趟大多在读权重（§7）：小徒弟省下的是它没有的那些章，省不下它的词典。</translation>
    </message>
    <message>
        <source>A trip here is mostly other work per step (§7), which the apprentice pays just the same.</source>
        <translation>在这台电脑上，一趟大多是每步的杂事（§7），这部分小徒弟一样要付。</translation>
    </message>
    <message>
        <source>Reading the weights is {pct}% of a trip's work here (§7); the other work per step the apprentice pays just the same.</source>
        <translation>在这台电脑上，读权重占一趟干活时间的 {pct}%（§7）；每步的其余杂事，小徒弟一样要付。</translation>
    </message>
    <message>
        <source>Its dictionary (embedding + LM head, {d}) is {dp}% of the book's and {share}% of its own {a}: every guess reads it whole.</source>
        <translation>它的词典（嵌入矩阵 + LM 头，{d}）是书的词典的 {dp}%，占它自己 {a} 的 {share}%：每猜一个字都要整本读一遍。</translation>
    </message>
    <message>
        <source>FP32</source>
        <translation>FP32</translation>
    </message>
    <message>
        <source>INT8</source>
        <translation>INT8</translation>
    </message>
    <message>
        <source>Here reading the weights is {pct}% of the trip's work, {pace}; the rest is other work per step.</source>
        <translation>这里读权重占一趟干活时间的 {pct}%，{pace}；其余是每步的杂事。</translation>
    </message>
    <message>
        <source>Measured here (§7): reading the weights is {pct}% of the work of a trip of this book too.</source>
        <translation>这台电脑上实测（§7）：这本书的一趟干活时间里，读权重也占 {pct}%。</translation>
    </message>
    <message>
        <source>Measured here (§7): reading the weights is {pct}% of the work of a trip of this book; the rest is other work per step.</source>
        <translation>这台电脑上实测（§7）：这本书的一趟干活时间里读权重占 {pct}%；其余是每步的杂事。</translation>
    </message>
    <message>
        <source>waiting for a busy processor {t} (measured)</source>
        <translation>等处理器（被别的程序占着）{t}（实测）</translation>
    </message>
    <message>
        <source>median trip {w}: reading the weights {r} · other work {p} (both measured)</source>
        <translation>一趟的中位数 {w}：读权重 {r} · 其余杂事 {p}（都是实测）</translation>
    </message>
    <message>
        <source>floor {f} (formula)</source>
        <translation>下限 {f}（公式推算）</translation>
    </message>
    <message>
        <source>at {speed}/s</source>
        <translation>每秒读 {speed}</translation>
    </message>
    <message>
        <source>at {speed}/s, about as fast as the memory could</source>
        <translation>每秒读 {speed}，差不多是内存能给的速度</translation>
    </message>
    <message>
        <source>at {speed}/s, {k}× slower than the memory could</source>
        <translation>每秒读 {speed}，比内存能给的慢 {k} 倍</translation>
    </message>
    <message>
        <source>Here too the trip is mostly reading the weights, {pace}.</source>
        <translation>这里一趟也大多在读权重，{pace}。</translation>
    </message>
    <message>
        <source>Here the trip is mostly other work per step (attention, sampling, Python), not reading the weights: a book this small is read quickly.</source>
        <translation>这里一趟大多是每步的其余杂事（注意力、采样、调度），不是读权重：这么薄的书很快就读完了。</translation>
    </message>
    <message>
        <source>Measured here (§7): this book's trip is mostly other work per step; a big model's trip is mostly reading.</source>
        <translation>这台电脑上实测（§7）：这本书的一趟大多是每步的杂事；大模型的一趟大多在读权重。</translation>
    </message>
    <message>
        <source>each bar: one trip, one new token; orange: reading the weights; blue: the rest of the step</source>
        <translation>每根柱子：一趟，写一个新字；橙色：读权重；蓝色：这一步的其余部分</translation>
    </message>
    <message>
        <source>Trips for the same {n} tokens</source>
        <translation>写同样 {n} 个字要几趟</translation>
    </message>
    <message>
        <source>Measured here the apprentice kept {pct:.0f}% of its guesses, fewer than the source's 3–4 of 5: both models here are tiny and briefly trained, so they agree less often than a good draft agrees with a big model.</source>
        <translation>本机实测：小徒弟猜的留下了 {pct:.0f}%，比原文说的“5 个里猜中 3–4 个”少：这里两个模型都很小、训练时间很短，彼此一致的时候不如好的草稿模型和大模型那么多。</translation>
    </message>
    <message>
        <source>The model cards, 4 guesses on held-out text: the code apprentice keeps {code:.0f}%, the poetry apprentice {poems:.0f}%.</source>
        <translation>模型卡实测（每次猜 4 个，没学过的文本）：代码小徒弟猜中 {code:.0f}%，古诗小徒弟猜中 {poems:.0f}%。</translation>
    </message>
    <message>
        <source>The model cards, 4 guesses on held-out text: the code apprentice keeps {code:.0f}%, the poetry apprentice {poems:.0f}%. Code repeats itself; a poem's next character is open.</source>
        <translation>模型卡实测（每次猜 4 个，没学过的文本）：代码小徒弟猜中 {code:.0f}%，古诗小徒弟猜中 {poems:.0f}%。代码常常重复自己；诗的下一个字却有很多种写法。</translation>
    </message>
    <message>
        <source>without: {n} trips</source>
        <translation>不带：{n} 趟</translation>
    </message>
    <message>
        <source>with the apprentice: {n} trips</source>
        <translation>带小徒弟：{n} 趟</translation>
    </message>
    <message>
        <source>Every decode trip is billed, seen or not: the source's 200-token answer may be billed for thousands of decode steps.</source>
        <translation>每一趟解码都要计费，看不看得见都一样：原文说，200 个字的回答，可能计费几千个解码步。</translation>
    </message>
    <message>
        <source>{n:,} tokens, one sequence; bars to scale against the book; GB = 1,000,000,000 bytes</source>
        <translation>{n:,} 个字、一个序列；柱子和书按同一比例；GB = 10 亿字节</translation>
    </message>
    <message>
        <source>thinking: {n} trips</source>
        <translation>思考：{n} 趟</translation>
    </message>
    <message>
        <source>answer: {n} trips</source>
        <translation>回答：{n} 趟</translation>
    </message>
    <message>
        <source>The same odds at three temperatures:</source>
        <translation>同一组概率，换三个温度：</translation>
    </message>
    <message>
        <source>your trips so far: one column per trip, one square per token</source>
        <translation>到现在搬的趟：一趟一列，一个字一格</translation>
    </message>
    <message>
        <source>the rules of the game, 4 tokens a trip</source>
        <translation>按游戏规则，每趟 4 个字</translation>
    </message>
    <message>
        <source>the “Press: one trip” button below, or → / PageDown / Space</source>
        <translation>点下面的“按一下：搬一趟”，或按 → / PageDown / 空格</translation>
    </message>
    <message>
        <source>question</source>
        <translation>题目</translation>
    </message>
    <message>
        <source>{t} trips for {n} words</source>
        <translation>{t} 趟写 {n} 个字</translation>
    </message>
    <message>
        <source>The three ways, for one {n}-word sentence each:</source>
        <translation>三种玩法，每人一句 {n} 个字：</translation>
    </message>
    <message>
        <source>{n} sentences finished: “{s}”</source>
        <translation>写完 {n} 句：“{s}”</translation>
    </message>
    <message>
        <source>Every trip carries the book once and writes one more word .</source>
        <translation>每搬一趟书，就写一个字。</translation>
    </message>
    <message>
        <source>Chinese, cut by the same tokenizer:</source>
        <translation>中文，用同一个分词器来切：</translation>
    </message>
    <message>
        <source>1 sentence finished: “{s}”</source>
        <translation>写完 1 句：“{s}”</translation>
    </message>
    <message>
        <source>the “Press: one trip” button below</source>
        <translation>点下面的“按一下：搬一趟”</translation>
    </message>
    <message>
        <source>The same sentence, other numbers</source>
        <translation>同一句话，不同的编号</translation>
    </message>
    <message>
        <source>lost</source>
        <translation>缺字</translation>
    </message>
    <message>
        <source>spaces, line breaks ({n})</source>
        <translation>空格、换行（{n} 个）</translation>
    </message>
    <message>
        <source>lost characters ({n})</source>
        <translation>缺字（{n} 个）</translation>
    </message>
    <message>
        <source>The same odds at three temperatures</source>
        <translation>同一组概率，换三个温度</translation>
    </message>
    <message>
        <source>⟨lost⟩: a character lost from the old texts; the poems corpus marks the gap with a sign, and the model learnt to write it</source>
        <translation>⟨缺字⟩：古籍里缺失的字；诗词语料在缺处留了记号，模型也学会了写它</translation>
    </message>
    <message>
        <source>Grouped-query attention</source>
        <translation>分组查询注意力（GQA）</translation>
    </message>
    <message>
        <source>Block table (PagedAttention)</source>
        <translation>页表（PagedAttention）</translation>
    </message>
    <message>
        <source>each request's pages of the cheat sheet</source>
        <translation>每个请求的小抄占了哪几页</translation>
    </message>
    <message>
        <source>Routing</source>
        <translation>路由</translation>
    </message>
    <message>
        <source>The cache helps only on the server that holds it.</source>
        <translation>缓存只在存着它的那台服务器上管用。</translation>
    </message>
    <message>
        <source>One|␣trip|,|␣one|␣token|.</source>
        <translation>一|趟|，|一|个|字|。</translation>
    </message>
    <message>
        <source>system prompt</source>
        <translation>系统提示</translation>
    </message>
    <message>
        <source>reading the question writes the first token</source>
        <translation>读题这一趟写出第一个字</translation>
    </message>
    <message>
        <source>trip {a} is not drawn here (no room)</source>
        <translation>第 {a} 趟这里没画（放不下）</translation>
    </message>
    <message>
        <source>trips {a}–{b} are not drawn here (no room)</source>
        <translation>第 {a}–{b} 趟这里没画（放不下）</translation>
    </message>
    <message>
        <source>red line, the floor: {bytes} ÷ {bw}/s, the read speed of the {llc} cache it fits in = {ms}</source>
        <translation>红线是下限：{bytes} ÷ {bw}/s（书装得进 {llc} 缓存，按缓存的读速）= {ms}</translation>
    </message>
    <message>
        <source>red line, the floor: {bytes} ÷ {bw}/s, the read speed of RAM (the book is larger than the {llc} cache) = {ms}</source>
        <translation>红线是下限：{bytes} ÷ {bw}/s（书比 {llc} 缓存大，按内存的读速）= {ms}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>{file} is missing from its folder {folder}</source>
        <translation>其文件夹 {folder} 里缺少 {file}</translation>
    </message>
    <message>
        <source>its folder {folder} was not found</source>
        <translation>找不到它的文件夹 {folder}</translation>
    </message>
    <message>
        <source>its tokenizer differs from the master's in its {part}</source>
        <translation>它的切块规则与师傅的不同：{part}不一样</translation>
    </message>
    <message>
        <source>model type</source>
        <translation>模型类型</translation>
    </message>
    <message>
        <source>vocabulary</source>
        <translation>词表</translation>
    </message>
    <message>
        <source>merges</source>
        <translation>合并规则</translation>
    </message>
    <message>
        <source>special tokens</source>
        <translation>特殊字</translation>
    </message>
    <message>
        <source>its vocabulary has {d} tokens, the master's {t}</source>
        <translation>它的词表有 {d} 个字，师傅的有 {t} 个</translation>
    </message>
    <message>
        <source>it could not be loaded (see the log)</source>
        <translation>无法加载（详见日志）</translation>
    </message>
    <message>
        <source>The engine keeps stopping; trying again in {s} s. See the log.</source>
        <translation>引擎反复停止，{s} 秒后再试。详情见日志。</translation>
    </message>
    <message>
        <source>The engine is restarting; it will run when it is ready.</source>
        <translation>引擎正在重启，准备好就开始写。</translation>
    </message>
    <message>
        <source>The engine is not running.</source>
        <translation>引擎没有在运行。</translation>
    </message>
    <message>
        <source>1 thread</source>
        <translation>1 个线程</translation>
    </message>
    <message>
        <source>{n} threads</source>
        <translation>{n} 个线程</translation>
    </message>
    <message>
        <source>{name} · {device} · {layers} chapters (layers) · {weights} of weights · {threads}</source>
        <translation>{name} · {device} · {layers} 章（层） · 权重 {weights} · {threads}</translation>
    </message>
    <message>
        <source>{name} · {device} · {layers} chapters (layers) · {weights} of {precision} weights · {threads}</source>
        <translation>{name} · {device} · {layers} 章（层） · 权重 {weights}（{precision}） · {threads}</translation>
    </message>
    <message>
        <source>Measured ms per trip · orange: reading the question · blue: writing</source>
        <translation>每趟实测毫秒 · 橙：读题 · 蓝：写字</translation>
    </message>
    <message>
        <source>red: the floor, {ms} ms</source>
        <translation>红：下限 {ms}</translation>
    </message>
    <message>
        <source>Slower here: {reason}.</source>
        <translation>这里反而更慢：{reason}。</translation>
    </message>
    <message>
        <source>Slower here: passing the pages between processes costs more than the tiny model's compute; tearing pays off for models too big for one GPU.</source>
        <translation>这里反而更慢：进程之间传书页比小模型的计算还贵；拆书只对一张 GPU 装不下的大模型划算。</translation>
    </message>
    <message>
        <source>One Trip apprentice model</source>
        <translation>一趟·小徒弟模型</translation>
    </message>
    <message>
        <source>One Trip code model</source>
        <translation>一趟·代码模型</translation>
    </message>
    <message>
        <source>One Trip poetry apprentice</source>
        <translation>一趟·诗词小徒弟</translation>
    </message>
    <message>
        <source>One Trip poetry model</source>
        <translation>一趟·古诗模型</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>The model is loading: nothing measured yet.</source>
        <translation>模型正在加载：还没有测到任何数字。</translation>
    </message>
    <message>
        <source>{n} token</source>
        <translation>{n} 个字</translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation>{n} 个字</translation>
    </message>
    <message>
        <source>This trip: whole step {ms} ms, measured · {shown} · {per_trip} · {tps} tok/s</source>
        <translation>这一趟：整步实测 {ms} 毫秒 · {shown} · 写 {per_trip} · 每秒 {tps} 个字</translation>
    </message>
    <message>
        <source>Every figure here is either of this trip (the one on stage: this line, the desks, the legend) or, where it says so, an average of the last trips.</source>
        <translation>这里的每个数字，要么是这一趟的（台上演的那一趟：这一行、桌子、图例），要么写明了是最近几趟的平均。</translation>
    </message>
    <message>
        <source>the last trip</source>
        <translation>最近 1 趟</translation>
    </message>
    <message>
        <source>average of the last {k} trips</source>
        <translation>最近 {k} 趟平均</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>没有加载模型。</translation>
    </message>
    <message>
        <source>{name} · {params} parameters</source>
        <translation>{name} · {params}参数</translation>
    </message>
    <message>
        <source>{w} × 10,000</source>
        <translation>{w} 万</translation>
    </message>
    <message>
        <source>{y} × 100 million</source>
        <translation>{y} 亿</translation>
    </message>
    <message>
        <source>Seats</source>
        <translation>座位</translation>
    </message>
    <message>
        <source>Every request at the table: pick one to read its prompt and answer</source>
        <translation>桌上的每个请求：点一个，看它的题目和回答</translation>
    </message>
    <message>
        <source>Paused. Space goes on; → makes one trip.</source>
        <translation>已暂停。空格继续；→ 搬一趟。</translation>
    </message>
    <message>
        <source>No model could be loaded, so no trips today: the reason is below.</source>
        <translation>模型没能加载，今天搬不了书：原因写在下面。</translation>
    </message>
    <message>
        <source>The engine says: {message}</source>
        <translation>引擎提示：{message}</translation>
    </message>
    <message>
        <source>The model could not be loaded: {message}</source>
        <translation>模型没能加载：{message}</translation>
    </message>
    <message>
        <source>The engine stopped (code {code}). Starting a new one…</source>
        <translation>引擎停了（代码 {code}），正在重新启动……</translation>
    </message>
    <message>
        <source>Press Run: every trip below is a real forward pass, timed.</source>
        <translation>按“开始”：下面每一趟都是一次真实的前向计算，都计了时。</translation>
    </message>
    <message>
        <source>shown at real speed</source>
        <translation>按真实速度播放</translation>
    </message>
    <message>
        <source>shown {factor}× slower</source>
        <translation>放慢 {factor} 倍播放</translation>
    </message>
    <message>
        <source>measured {ms} ms · {shown} · {tpt} tokens/trip · {tps} tok/s</source>
        <translation>实测 {ms} 毫秒 · {shown} · 每趟 {tpt} 个字 · 每秒 {tps} 个字</translation>
    </message>
    <message>
        <source>Starting the model…</source>
        <translation>正在启动模型……</translation>
    </message>
    <message>
        <source>{name}: {layers} layers (chapters) · {weights} of weights · memory {bw}/s measured · {device}, threads: {threads}</source>
        <translation>{name}：{layers} 层（章）· 权重 {weights} · 实测内存带宽 {bw}/秒 · {device}，线程数 {threads}</translation>
    </message>
    <message>
        <source>floor {ms} ms</source>
        <translation>下限 {ms} 毫秒</translation>
    </message>
    <message>
        <source>Red line: the floor, weights ÷ measured memory bandwidth; no trip can be faster on this computer</source>
        <translation>红线是下限：权重 ÷ 实测内存带宽；在这台电脑上，哪一趟都快不过它</translation>
    </message>
    <message>
        <source>One Trip: watch a real GPT-2 write, one trip per token</source>
        <translation>一趟一个字：看真实的 GPT-2 写字，一趟写一个</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>题目</translation>
    </message>
    <message>
        <source>Pick a prompt or type your own (up to {n} characters)</source>
        <translation>选一个题目，或者自己输入（最多 {n} 个字符）</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Start writing (Space runs and pauses)</source>
        <translation>开始写（空格键：开始 / 暂停）</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Stop after this trip (Space runs and pauses)</source>
        <translation>这一趟搬完就停（空格键：开始 / 暂停）</translation>
    </message>
    <message>
        <source>Step one trip</source>
        <translation>搬一趟</translation>
    </message>
    <message>
        <source>Exactly one real forward pass (S)</source>
        <translation>只做一次真实的前向计算（S 键）</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重来</translation>
    </message>
    <message>
        <source>Clear the answer, the chips and the plots (R)</source>
        <translation>清空答案、字和图表（R 键）</translation>
    </message>
    <message>
        <source>Sharing a table</source>
        <translation>拼桌</translation>
    </message>
    <message>
        <source>How many requests share each trip of the weights (1–16)</source>
        <translation>每搬一趟书，有几个请求一起用（1–16）</translation>
    </message>
    <message>
        <source>Trip on screen</source>
        <translation>每趟演示</translation>
    </message>
    <message>
        <source>How long one trip takes on screen, in seconds (0.25–3)</source>
        <translation>屏幕上演示一趟用几秒（0.25–3）</translation>
    </message>
    <message>
        <source>Real time</source>
        <translation>真实速度</translation>
    </message>
    <message>
        <source>Show the trips at the speed they were measured</source>
        <translation>按实测的速度播放每一趟</translation>
    </message>
    <message>
        <source>Switch language</source>
        <translation>切换语言</translation>
    </message>
    <message>
        <source>Measured ms per trip  (orange: reading the question · blue: writing)</source>
        <translation>每趟实测毫秒数（橙色：读题 · 蓝色：写字）</translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation>每秒写几个字</translation>
    </message>
    <message>
        <source>F: full screen · F12: frame times</source>
        <translation>F：全屏 · F12：帧时间</translation>
    </message>
    <message>
        <source>{s} s</source>
        <translation>{s} 秒</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在加载模型……</translation>
    </message>
    <message>
        <source>The model is not available.</source>
        <translation>模型现在用不了。</translation>
    </message>
    <message>
        <source>Running.</source>
        <translation>正在写。</translation>
    </message>
    <message>
        <source>Paused. Press Run to go on, or Step for one trip.</source>
        <translation>已暂停。按“开始”继续，或按“搬一趟”只走一步。</translation>
    </message>
    <message>
        <source>One trip.</source>
        <translation>搬了一趟。</translation>
    </message>
    <message>
        <source>Finishing the answer.</source>
        <translation>正在写完这个回答。</translation>
    </message>
    <message>
        <source>Reset. Choose a prompt and press Run.</source>
        <translation>已重来。选一个题目，按“开始”。</translation>
    </message>
    <message>
        <source>Type a prompt first.</source>
        <translation>请先输入题目。</translation>
    </message>
    <message>
        <source>Done. Press Run for a new answer.</source>
        <translation>写完了。按“开始”再写一个。</translation>
    </message>
    <message>
        <source>Stopped: the model began to repeat itself (“{phrase}” again and again), as small models do. Press Run for a new answer.</source>
        <translation>停下了：模型开始原地打转（“{phrase}”一遍又一遍），小模型常会这样。按“开始”再写一个。</translation>
    </message>
    <message>
        <source>It pays only at temperature 0 (greedy): at temperature {t} it keeps {kept_t} of its guesses, greedy {kept_g}; a drawn token is harder to guess than the likeliest. The answer keeps temperature {t}.</source>
        <translation>只有温度为 0（贪心）时它才划算：温度 {t} 时它猜的字留下 {kept_t}，贪心时留下 {kept_g}；抽出来的字比最可能的字难猜。回答仍用温度 {t}。</translation>
    </message>
    <message>
        <source>Ready. Choose a prompt and press Run.</source>
        <translation>准备好了。选一个题目，按“开始”。</translation>
    </message>
    <message>
        <source>its tokenizer differs from the master's</source>
        <translation>它的切词方式和师傅的不一样</translation>
    </message>
    <message>
        <source>its vocabulary differs from the master's</source>
        <translation>它的词表和师傅的不一样</translation>
    </message>
    <message>
        <source>its context window is too short</source>
        <translation>它能看的上下文太短</translation>
    </message>
    <message>
        <source>it needs the KV cache</source>
        <translation>它需要小抄（KV 缓存）</translation>
    </message>
    <message>
        <source>no draft model was found</source>
        <translation>没有找到草稿模型</translation>
    </message>
    <message>
        <source>Apprentice: {k} guesses per trip; waiting for its first check…</source>
        <translation>小徒弟：每趟先猜 {k} 个；等师傅第一次检查…</translation>
    </message>
    <message>
        <source>Apprentice, {window}: {acc}% of guesses kept ({a} of {p}) · {tpt} tokens per trip · {ms} ms per token = {tps} tok/s</source>
        <translation>小徒弟，{window}：猜中 {acc}%（{p} 个里留下 {a} 个）· 每趟 {tpt} 个字 · 每个字 {ms} 毫秒 = 每秒 {tps} 个字</translation>
    </message>
    <message>
        <source>speed-up: run this prompt with 0 guesses once to measure plain decoding</source>
        <translation>提速多少：先用 0 个猜测跑一遍这个题目，量出不带徒弟的速度</translation>
    </message>
    <message>
        <source>{x}× the speed of plain decoding of this prompt ({plain} ms per token)</source>
        <translation>是同一题目不带徒弟时速度的 {x} 倍（那时每个字 {plain} 毫秒）</translation>
    </message>
    <message>
        <source>not a fair figure: the computer was busy with other programs during these trips</source>
        <translation>这个数不公平：这几趟里电脑正忙着别的程序</translation>
    </message>
    <message>
        <source>{x}× the speed of plain decoding</source>
        <translation>是不带徒弟时速度的 {x} 倍</translation>
    </message>
    <message>
        <source>speed-up: run 0 guesses once to measure</source>
        <translation>提速多少：先用 0 个猜测跑一遍</translation>
    </message>
    <message>
        <source>speed-up: not fair now, the computer is busy</source>
        <translation>提速多少：电脑正忙，现在比不准</translation>
    </message>
    <message>
        <source>Apprentice, {window}: {acc}% of guesses kept · {tpt} tokens per trip</source>
        <translation>小徒弟，{window}：猜中 {acc}% · 每趟 {tpt} 个字</translation>
    </message>
    <message>
        <source>by pages (TP)</source>
        <translation>按页拆（张量并行）</translation>
    </message>
    <message>
        <source>by chapters (PP)</source>
        <translation>按章拆（流水线并行）</translation>
    </message>
    <message>
        <source>Book torn {n} ways {how}: waiting for the first trip…</source>
        <translation>书拆成 {n} 份，{how}：等第一趟…</translation>
    </message>
    <message>
        <source>Book torn {n} ways {how}, {window}: step {s} ms; per desk: compute {c} ms · communication {m} ms</source>
        <translation>书拆成 {n} 份，{how}，{window}：整步 {s} 毫秒；其中每张桌子：干活（计算）{c} 毫秒 · 传纸条（通信）{m} 毫秒</translation>
    </message>
    <message>
        <source>idle (bubble) {b} ms</source>
        <translation>等待（气泡）{b} 毫秒</translation>
    </message>
    <message>
        <source>Apprentice guesses</source>
        <translation>小徒弟猜几个</translation>
    </message>
    <message>
        <source>Speculative decoding: a small draft model guesses this many tokens, the big model checks them all in one trip (0 = off)</source>
        <translation>投机解码：小的草稿模型先猜这么多个字，大模型搬一趟书就把它们全部检查完（0 = 不用徒弟）</translation>
    </message>
    <message>
        <source>off</source>
        <translation>不用</translation>
    </message>
    <message>
        <source>No apprentice: {why}</source>
        <translation>没有小徒弟：{why}</translation>
    </message>
    <message>
        <source>No draft model ({why}): the apprentice copies its guesses from the text so far</source>
        <translation>没有草稿模型（{why}）：小徒弟从已写的文字里照抄着猜</translation>
    </message>
    <message>
        <source>Tear the book</source>
        <translation>拆书</translation>
    </message>
    <message>
        <source>Run the model on several worker processes: TP cuts every page (chapter) into strips, one per desk; PP gives each desk a run of whole chapters</source>
        <translation>让模型在几个工作进程上跑：按页拆把每一章撕成几条，每张桌子一条；按章拆让每张桌子负责连续的几章</translation>
    </message>
    <message>
        <source>TP · pages</source>
        <translation>按页 · TP</translation>
    </message>
    <message>
        <source>Tensor parallel: every chapter split by attention heads over the desks</source>
        <translation>张量并行：每一章按注意力头分给各张桌子</translation>
    </message>
    <message>
        <source>PP · chapters</source>
        <translation>按章 · PP</translation>
    </message>
    <message>
        <source>Pipeline parallel: contiguous chapters per desk</source>
        <translation>流水线并行：每张桌子负责连续的几章</translation>
    </message>
    <message>
        <source>Starting the workers… the book is being torn (a few seconds)</source>
        <translation>正在叫来帮手…书正在拆开（要几秒钟）</translation>
    </message>
    <message>
        <source>The apprentice now guesses {k} tokens before every trip.</source>
        <translation>现在每趟之前，小徒弟先猜 {k} 个字。</translation>
    </message>
    <message>
        <source>The book is torn {n} ways {how}: {n} desks work on every trip.</source>
        <translation>书拆成了 {n} 份，{how}：每一趟都有 {n} 张桌子一起干。</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>现场</translation>
    </message>
    <message>
        <source>The real model writing, one trip per token</source>
        <translation>真模型在写字，一趟一个字</translation>
    </message>
    <message>
        <source>Tour</source>
        <translation>导览</translation>
    </message>
    <message>
        <source>The guided tour: fifteen sections, the game, Terms and Three questions</source>
        <translation>导览：十五节内容、小游戏、术语和三个问题</translation>
    </message>
    <message>
        <source>The apprentice rests: one trip, one token.</source>
        <translation>小徒弟歇着：一趟一个字。</translation>
    </message>
    <message>
        <source>Putting the book back together on one desk…</source>
        <translation>正在把书合回一张桌子上…</translation>
    </message>
    <message>
        <source>The book is whole again: one desk.</source>
        <translation>书又合成一本了：一张桌子。</translation>
    </message>
    <message>
        <source>The workers did not answer; the book stays as it was.</source>
        <translation>帮手们没有回应；书保持原样。</translation>
    </message>
    <message>
        <source>Batching: {n} requests share every trip of the weights</source>
        <translation>拼桌（批处理）：{n} 个请求合用每一趟搬来的权重</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Everything measured: per-layer timings, plots, token chips, every slider</source>
        <translation>全部实测数据：每一层的用时、曲线图、字卡片和所有滑块</translation>
    </message>
    <message>
        <source>Run the model on {n} worker processes, each with part of every trip's work</source>
        <translation>让 {n} 个工作进程一起跑模型，每一趟的活各干一部分</translation>
    </message>
    <message>
        <source>Speculative decoding: a small draft model guesses {k} tokens, the model checks them all in one trip</source>
        <translation>投机解码：小模型先猜 {k} 个字，大模型搬一趟把它们全部核对</translation>
    </message>
    <message>
        <source>The apprentice</source>
        <translation>小徒弟</translation>
    </message>
    <message>
        <source>This trip: whole step {ms} ms, measured · {per_trip} · {tps} tok/s · {shown}</source>
        <translation>这一趟：整步实测 {ms} 毫秒 · {per_trip} · 每秒 {tps} 个字 · {shown}</translation>
    </message>
    <message>
        <source>{figures} · {lesson}</source>
        <translation>{figures} · {lesson}</translation>
    </message>
    <message>
        <source>{where}: reading the weights is {pct}% of the trip's work, {pace}; the rest is other work per step</source>
        <translation>{where}：读权重占这一趟干活时间的 {pct}%，{pace}；其余是每步的杂事</translation>
    </message>
    <message>
        <source>waiting for a busy processor {w} ms, measured</source>
        <translation>等处理器（被别的程序占着）{w} 毫秒，实测</translation>
    </message>
    <message>
        <source>the apprentice's guesses {d} ms, measured</source>
        <translation>小徒弟猜字 {d} 毫秒，实测</translation>
    </message>
    <message>
        <source>Red: reading the weights, measured in the trip · violet: passing pages between desks, measured · blue-grey: the rest of the step, measured · dark: waiting for a processor busy with other programs, measured · white tick: the floor, the weights' bytes at the memory's measured read speed (a formula)</source>
        <translation>红色：读权重，在这一趟里实测 · 紫色：桌子之间传书页，实测 · 蓝灰色：这一步的其余部分，实测 · 深色：等被别的程序占着的处理器，实测 · 白线：下限，按内存实测读取速度读完权重字节（公式推算）</translation>
    </message>
    <message>
        <source>the median of the last {n} trips: {figures}</source>
        <translation>最近 {n} 趟的中位：{figures}</translation>
    </message>
    <message>
        <source>at {speed}/s</source>
        <translation>每秒读 {speed}</translation>
    </message>
    <message>
        <source>at {speed}/s, about as fast as the memory could</source>
        <translation>每秒读 {speed}，差不多是内存能给的速度</translation>
    </message>
    <message>
        <source>at {speed}/s, {k}× slower than the memory could</source>
        <translation>每秒读 {speed}，比内存能给的慢 {k} 倍</translation>
    </message>
    <message>
        <source>communication {c} ms, measured</source>
        <translation>传纸条（通信）{c} 毫秒，实测</translation>
    </message>
    <message>
        <source>reading the weights {r} ms, measured</source>
        <translation>读权重 {r} 毫秒，实测</translation>
    </message>
    <message>
        <source>other work {p} ms, measured</source>
        <translation>其余杂事 {p} 毫秒，实测</translation>
    </message>
    <message>
        <source>whole step {w} ms, measured; the reading is not timed separately here</source>
        <translation>整步 {w} 毫秒，实测；这里没有单独给读权重计时</translation>
    </message>
    <message>
        <source>the trip's own work {w} ms, measured; a busy processor interrupted the reading, so it is not split from the rest</source>
        <translation>这一趟自己的活 {w} 毫秒，实测；读权重时处理器被别的程序打断，所以不再把读和杂事分开</translation>
    </message>
    <message>
        <source>floor {f} ms, formula</source>
        <translation>下限 {f} 毫秒，公式推算</translation>
    </message>
    <message>
        <source>Book torn {n} ways: passing the pages between desks is the largest part of the trip</source>
        <translation>书拆成 {n} 份：桌子之间传纸条（通信）是这一趟里最大的一块</translation>
    </message>
    <message>
        <source>{where}: the trip is mostly reading the weights, {pace}</source>
        <translation>{where}：这一趟大多在读权重，{pace}</translation>
    </message>
    <message>
        <source>{where}: the trip is mostly other work per step (attention, sampling, Python), not reading the weights</source>
        <translation>{where}：这一趟大多是每步的其余杂事，不是读权重</translation>
    </message>
    <message>
        <source>Each trip in one bar: red, reading the weights; blue-grey, the rest of the step; white, the floor (the weights' bytes at the memory's measured read speed)</source>
        <translation>每一趟画成一根条：红色是读权重；蓝灰色是这一步的其余部分；白线是下限（按内存实测读取速度读完权重字节的时间）</translation>
    </message>
    <message>
        <source>{size} of weights on a {device}</source>
        <translation>{device} 上 {size} 的权重</translation>
    </message>
    <message>
        <source>n-gram apprentice</source>
        <translation>照抄的小徒弟（前文查找）</translation>
    </message>
    <message>
        <source>its guesses are kept too rarely to pay for its own passes</source>
        <translation>它猜的字留下得太少，抵不上它自己跑的趟</translation>
    </message>
    <message>
        <source>its guesses are kept, but each costs {guess} of a plain trip and the check {check} trips</source>
        <translation>猜的字能留下，可每猜一个要 {guess} 趟，核对要 {check} 趟</translation>
    </message>
    <message>
        <source>its guesses are kept, but the check costs {check} plain trips</source>
        <translation>猜的字能留下，可核对一次要 {check} 趟</translation>
    </message>
    <message>
        <source>its guesses are kept, but its own passes cost more than the trips saved</source>
        <translation>它猜的字能留下，但它自己跑的趟比省下的趟还贵</translation>
    </message>
    <message>
        <source>the runs with and without it overlap: no clear difference on this busy machine</source>
        <translation>有它和没它的几次测量互相交叠：这台忙碌的机器上看不出明显差别</translation>
    </message>
    <message>
        <source>sampling</source>
        <translation>抽签</translation>
    </message>
    <message>
        <source>{where}: not measured</source>
        <translation>{where}：未测量</translation>
    </message>
    <message>
        <source>measuring at start-up…</source>
        <translation>启动时正在测量…</translation>
    </message>
    <message>
        <source>no draft model loaded</source>
        <translation>没有加载草稿模型</translation>
    </message>
    <message>
        <source>not measured</source>
        <translation>未测量</translation>
    </message>
    <message>
        <source>Greedy while the apprentice helps: its guesses are kept more often</source>
        <translation>小徒弟帮忙时用贪心：它猜的字更常被留下</translation>
    </message>
    <message>
        <source>draft model</source>
        <translation>草稿模型</translation>
    </message>
    <message>
        <source>greedy</source>
        <translation>贪心</translation>
    </message>
    <message>
        <source>{where} {x}×, {kept} kept, {n} runs</source>
        <translation>{where} {x}×，留下 {kept}，测了 {n} 次</translation>
    </message>
    <message>
        <source>does not pay here, {where}: {why}</source>
        <translation>{where}时在这里不划算：{why}</translation>
    </message>
    <message>
        <source>it found nothing in the text to copy a guess from</source>
        <translation>它在已写的文字里找不到可以照抄的地方</translation>
    </message>
    <message>
        <source>it saves too little to show through the noise of a few trips</source>
        <translation>它省下的太少，几趟之内会被测量的起伏盖过</translation>
    </message>
    <message>
        <source>only on these few trips; the start-up check measured it {x}× as fast over {n} runs</source>
        <translation>只是这几趟如此；启动时的检查跑了 {n} 次，测得它快到 {x}×</translation>
    </message>
    <message>
        <source>↻ more of a doctest: the answer repeats the prompt</source>
        <translation>↻ 续写 doctest：答案照抄提示</translation>
    </message>
    <message>
        <source>copying text: greedy, temperature 0</source>
        <translation>照抄文本：贪心，温度 0</translation>
    </message>
    <message>
        <source>temperature {t} · top-p {p}</source>
        <translation>温度 {t} · top-p {p}</translation>
    </message>
    <message>
        <source>Its speed-up is not measured yet (python -m bench.lookup_bench).</source>
        <translation>它的加速还没有测过（python -m bench.lookup_bench）。</translation>
    </message>
    <message>
        <source>Measured by bench/lookup_bench.py ({date}): {x}× the speed of plain decoding ({lo}–{hi}× over {n} rounds), {kept} of its guesses kept; {loops} of {answers} answers fell into a loop and were stopped.</source>
        <translation>bench/lookup_bench.py 实测（{date}）：速度是普通解码的 {x}×（{n} 轮，{lo}–{hi}×），猜的字留下 {kept}；{answers} 个答案中 {loops} 个陷入重复，已被停下。</translation>
    </message>
    <message>
        <source>This answer copies its prompt, so the apprentice copies too: the n-gram apprentice, {k} guesses per trip, {sampling}. {measured}</source>
        <translation>这个答案照抄提示，所以小徒弟也照抄：照抄的小徒弟（前文查找），每趟猜 {k} 个，{sampling}。{measured}</translation>
    </message>
    <message>
        <source>only on these few trips; bench/lookup_bench.py measured it {x}× as fast over {n} rounds</source>
        <translation>只是这几趟如此；bench/lookup_bench.py 测了 {n} 轮，测得它快到 {x}×</translation>
    </message>
    <message>
        <source>One Trip pocket code model</source>
        <translation>一趟·袖珍代码模型</translation>
    </message>
    <message>
        <source>One Trip pocket poetry model</source>
        <translation>一趟·袖珍古诗模型</translation>
    </message>
    <message>
        <source>{size} of weights, inside this CPU's {llc} cache</source>
        <translation>{size} 的权重，装得进这台 CPU 的 {llc} 缓存</translation>
    </message>
    <message>
        <source>{size} of weights, more than this CPU's {llc} cache: read from RAM</source>
        <translation>{size} 的权重，比这台 CPU 的 {llc} 缓存大：从内存读</translation>
    </message>
</context>
<context>
    <name>TokenChips</name>
    <message>
        <source>token {label} has id {id}</source>
        <translation>字 {label} 的编号是 {id}</translation>
    </message>
    <message>
        <source>{n} earlier tokens are not shown</source>
        <translation>前面还有 {n} 个字没显示</translation>
    </message>
    <message>
        <source>end of text</source>
        <translation>文末</translation>
    </message>
</context>
<context>
    <name>FrameOverlay</name>
    <message>
        <source>frame time: waiting for frames</source>
        <translation>帧时间：等待画面</translation>
    </message>
    <message>
        <source>frame time p50 {p50} ms · p95 {p95} ms · {n} frames</source>
        <translation>帧时间 p50 {p50} 毫秒 · p95 {p95} 毫秒 · {n} 帧</translation>
    </message>
</context>
<context>
    <name>Glossary</name>
    <message>
        <source>HTTPS POST</source>
        <translation>HTTPS POST</translation>
    </message>
    <message>
        <source>The encrypted web request that carries your question to the server.</source>
        <translation>把你的问题加密送到服务器的那个网络请求。</translation>
    </message>
    <message>
        <source>BPE</source>
        <translation>BPE</translation>
    </message>
    <message>
        <source>Byte-pair encoding: the tokenizer starts from single bytes and merges the most frequent pairs into longer pieces.</source>
        <translation>字节对编码：分词器从单个字节出发，把最常见的相邻两块合成更长的一块。</translation>
    </message>
    <message>
        <source>␣</source>
        <translation>␣</translation>
    </message>
    <message>
        <source>On a token chip: a space that is part of the token (“␣the” is “ the”).</source>
        <translation>字上的 ␣：这个空格属于这个字（“␣the” 就是 “ the”）。</translation>
    </message>
    <message>
        <source>↵</source>
        <translation>↵</translation>
    </message>
    <message>
        <source>On a token chip: a line break that is part of the token.</source>
        <translation>字上的 ↵：这个换行属于这个字。</translation>
    </message>
    <message>
        <source>embedding matrix</source>
        <translation>嵌入矩阵</translation>
    </message>
    <message>
        <source>The model's dictionary: one row of numbers per token id, learned in training.</source>
        <translation>模型的字典：每个字的编号一行数，训练时学出来。</translation>
    </message>
    <message>
        <source>d_model</source>
        <translation>d_model</translation>
    </message>
    <message>
        <source>The model's width: how many numbers stand for one token inside it (4,096 in Llama 3 8B).</source>
        <translation>模型的宽度：模型里用多少个数表示一个字（Llama 3 8B 是 4,096）。</translation>
    </message>
    <message>
        <source>FP16</source>
        <translation>FP16</translation>
    </message>
    <message>
        <source>16-bit floating point: each number takes 2 bytes.</source>
        <translation>16 位浮点数：每个数占 2 字节。</translation>
    </message>
    <message>
        <source>forward pass</source>
        <translation>前向计算</translation>
    </message>
    <message>
        <source>One run of the whole model over its input: every layer once, in order.</source>
        <translation>整个模型对输入跑一遍：每一层按顺序各算一次。</translation>
    </message>
    <message>
        <source>compute-bound</source>
        <translation>算力受限</translation>
    </message>
    <message>
        <source>Limited by how fast the chip multiplies, not by how fast it reads memory: prefill does many multiplications per weight it reads.</source>
        <translation>快慢取决于芯片乘得多快，而不是读内存多快：预填充每读一个权重要做很多次乘法。</translation>
    </message>
    <message>
        <source>softmax(QKᵀ/√d)·V</source>
        <translation>softmax(QKᵀ/√d)·V</translation>
    </message>
    <message>
        <source>Attention: each token's query Q is compared with the keys K of the tokens before it; the scores, divided by √d (d: the size of a head) and made into weights by softmax, mix their values V.</source>
        <translation>注意力：每个字的查询 Q 和它前面各字的键 K 比一比；分数除以 √d（d 是每个头的维度），经 softmax 变成权重，再把它们的值 V 按权重混合。</translation>
    </message>
    <message>
        <source>softmax</source>
        <translation>softmax</translation>
    </message>
    <message>
        <source>Turns a list of scores into probabilities that add up to 1; a higher score gets exponentially more.</source>
        <translation>把一串分数变成加起来等于 1 的概率；分数越高，得到的概率按指数变大。</translation>
    </message>
    <message>
        <source>temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Divides the scores before softmax: below 1 the likely tokens win more often, above 1 the choice gets more random.</source>
        <translation>在 softmax 之前把分数除以它：小于 1 时可能性大的字更常被抽中，大于 1 时更随机。</translation>
    </message>
    <message>
        <source>top-p</source>
        <translation>top-p</translation>
    </message>
    <message>
        <source>Only the fewest most likely tokens whose probabilities add up to p can be drawn.</source>
        <translation>只在概率加起来够 p 的最少几个字里抽。</translation>
    </message>
    <message>
        <source>top-k</source>
        <translation>top-k</translation>
    </message>
    <message>
        <source>Only the k most likely tokens can be drawn.</source>
        <translation>只在最可能的 k 个字里抽。</translation>
    </message>
    <message>
        <source>greedy</source>
        <translation>贪心</translation>
    </message>
    <message>
        <source>Always taking the most likely token: no drawing of lots.</source>
        <translation>每次都挑最可能的那个字，不抽签。</translation>
    </message>
    <message>
        <source>memory-bound</source>
        <translation>带宽受限</translation>
    </message>
    <message>
        <source>Limited by how fast the weights are read from memory: decode reads every weight to write a single token.</source>
        <translation>快慢取决于从显存读权重有多快：解码每写一个字都要把全部权重读一遍。</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>The keys and values of every token already seen, kept for each layer so that no later step computes them again.</source>
        <translation>已经读过的每个字在每一层的键和值，存下来，后面的步骤就不用再算。</translation>
    </message>
    <message>
        <source>O(500²)</source>
        <translation>O(500²)</translation>
    </message>
    <message>
        <source>“Of the order of 500 squared”: the work grows with the square of the length; 500 tokens cost about 125,000 attention rows instead of 500.</source>
        <translation>“500 的平方量级”：工作量随长度的平方增长；500 个字约 12.5 万行注意力，而不是 500 行。</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头</translation>
    </message>
    <message>
        <source>The key/value heads a layer keeps in the KV cache; with grouping (GQA) several query heads share one, so the cache is smaller.</source>
        <translation>一层里存进 KV 缓存的键值头；分组（GQA）后几个查询头共用一个，缓存就小了。</translation>
    </message>
    <message>
        <source>without grouping</source>
        <translation>不分组</translation>
    </message>
    <message>
        <source>Every query head keeps its own keys and values (classic multi-head attention): 4× the cache of Llama 3's 8 groups.</source>
        <translation>每个查询头都有自己的键和值（老式多头注意力）：缓存是 Llama 3 八组的 4 倍。</translation>
    </message>
    <message>
        <source>GQA</source>
        <translation>GQA</translation>
    </message>
    <message>
        <source>Grouped-query attention: several query heads share one key/value head.</source>
        <translation>分组查询注意力：几个查询头共用一个键值头。</translation>
    </message>
    <message>
        <source>MLA</source>
        <translation>MLA</translation>
    </message>
    <message>
        <source>Multi-head latent attention (DeepSeek): keeps one small compressed vector per token and layer instead of full keys and values.</source>
        <translation>多头潜在注意力（DeepSeek）：每个字每层只存一个压缩过的小向量，而不是完整的键和值。</translation>
    </message>
    <message>
        <source>sliding-window attention</source>
        <translation>滑动窗口注意力</translation>
    </message>
    <message>
        <source>A layer in which each token looks only at a nearby stretch of recent tokens, so its cache stops growing.</source>
        <translation>这一层里每个字只看附近最近的一段，所以这一层的缓存不再变长。</translation>
    </message>
    <message>
        <source>SSE</source>
        <translation>SSE</translation>
    </message>
    <message>
        <source>Server-sent events: one HTTP response that stays open and carries each new token as a small text frame.</source>
        <translation>服务器推送事件：一个一直不关的 HTTP 回复，每写出一个字就推一小段文字。</translation>
    </message>
    <message>
        <source>WebSocket</source>
        <translation>WebSocket</translation>
    </message>
    <message>
        <source>A two-way connection kept open between browser and server.</source>
        <translation>客户端和服务器之间一直开着的双向连接。</translation>
    </message>
    <message>
        <source>first token</source>
        <translation>首字时间</translation>
    </message>
    <message>
        <source>Time to the first token: waiting for the question to be read (prefill) and the first token to be written.</source>
        <translation>等到第一个字的时间：要先读完题（预填充），再写出第一个字。</translation>
    </message>
    <message>
        <source>A9, C32</source>
        <translation>A9、C32</translation>
    </message>
    <message>
        <source>A cell such as “C32”: on this trip request C reads 32 tokens of its question (prefill); a cell with a letter alone: that request writes one token.</source>
        <translation>像 “C32” 这样的格子：这一趟请求 C 读了它问题里的 32 个字（预填充）；只有字母的格子：那个请求写了一个字。</translation>
    </message>
    <message>
        <source>continuous batching</source>
        <translation>连续批</translation>
    </message>
    <message>
        <source>A finished request leaves the batch at once and a new one takes its seat on the next trip.</source>
        <translation>写完的请求立刻离桌，下一趟就有新请求坐上来。</translation>
    </message>
    <message>
        <source>static batch</source>
        <translation>静态批</translation>
    </message>
    <message>
        <source>A batch that starts together and ends when its longest request ends.</source>
        <translation>一批请求一起开始，要等最长的那个写完才一起结束。</translation>
    </message>
    <message>
        <source>PagedAttention</source>
        <translation>PagedAttention</translation>
    </message>
    <message>
        <source>vLLM's KV cache in fixed-size blocks, like virtual-memory pages, so memory is taken only for tokens already written.</source>
        <translation>vLLM 把 KV 缓存按固定大小的块存放，像虚拟内存的页，只给已经写出的字占内存。</translation>
    </message>
    <message>
        <source>prefill/decode disaggregation</source>
        <translation>预填充/解码分离</translation>
    </message>
    <message>
        <source>Prefill runs on some GPUs and decode on others; the KV cache is sent from one to the other.</source>
        <translation>预填充在一些 GPU 上做，解码在另一些 GPU 上做，KV 缓存从一边传到另一边。</translation>
    </message>
    <message>
        <source>NVLink</source>
        <translation>NVLink</translation>
    </message>
    <message>
        <source>NVIDIA's fast link between the GPUs of one server, several times faster than a network card.</source>
        <translation>英伟达在同一台服务器里连接各块 GPU 的高速通道，比网卡快好几倍。</translation>
    </message>
    <message>
        <source>RDMA</source>
        <translation>RDMA</translation>
    </message>
    <message>
        <source>Remote direct memory access: a machine reads another's memory over the network without that machine's processor copying it.</source>
        <translation>远程直接内存访问：一台机器通过网络直接读另一台的内存，不用对方的处理器来复制。</translation>
    </message>
    <message>
        <source>draft model</source>
        <translation>草稿模型（小徒弟）</translation>
    </message>
    <message>
        <source>A much smaller model that guesses the next few tokens cheaply; the big model checks all the guesses in one trip.</source>
        <translation>一个小得多的模型，便宜地先猜后面几个字；大模型一趟就把这些猜测全部检查完。</translation>
    </message>
    <message>
        <source>EAGLE-3</source>
        <translation>EAGLE-3</translation>
    </message>
    <message>
        <source>A light guessing head trained on the big model's own hidden states, used as the draft in speculative decoding.</source>
        <translation>在大模型自己的隐藏状态上训练的轻量猜测头，用作投机解码的草稿。</translation>
    </message>
    <message>
        <source>MTP</source>
        <translation>MTP</translation>
    </message>
    <message>
        <source>Multi-token prediction: extra heads built into the model guess the tokens after the next one.</source>
        <translation>多 token 预测：模型里自带的额外输出头，猜下一个之后的几个字。</translation>
    </message>
    <message>
        <source>pipeline parallel</source>
        <translation>流水线并行</translation>
    </message>
    <message>
        <source>Each GPU holds some of the layers; a token's work passes from one GPU to the next.</source>
        <translation>每块 GPU 放一部分层；一个字的计算从一块 GPU 传到下一块 GPU。</translation>
    </message>
    <message>
        <source>tensor parallel</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>Every layer's matrices are split across the GPUs, which swap partial results in every layer.</source>
        <translation>每一层的矩阵都切开分给几块 GPU，它们每一层都要交换部分结果。</translation>
    </message>
    <message>
        <source>expert parallel</source>
        <translation>专家并行</translation>
    </message>
    <message>
        <source>The experts of an MoE layer live on different GPUs; each token travels to the GPUs of its experts.</source>
        <translation>MoE 层的各个专家放在不同的 GPU 上；每个字被送到它的专家所在的 GPU。</translation>
    </message>
    <message>
        <source>MoE</source>
        <translation>MoE</translation>
    </message>
    <message>
        <source>Mixture of experts: a layer holds many feed-forward “experts” and a router sends each token to only a few of them.</source>
        <translation>混合专家：一层里有很多个前馈“专家”，路由器只把每个字送给其中几个。</translation>
    </message>
    <message>
        <source>prefix caching</source>
        <translation>前缀缓存</translation>
    </message>
    <message>
        <source>Keys and values computed for an opening that was seen before are reused, so that part of the prefill is skipped.</source>
        <translation>以前见过的开头算出的键和值直接复用，这部分预填充就省了。</translation>
    </message>
    <message>
        <source>RadixAttention</source>
        <translation>RadixAttention</translation>
    </message>
    <message>
        <source>SGLang's prefix cache: a tree of computed KV blocks, looked up by the request's first tokens.</source>
        <translation>SGLang 的前缀缓存：一棵存着已算好 KV 块的树，按请求开头的字查找。</translation>
    </message>
    <message>
        <source>routing</source>
        <translation>路由</translation>
    </message>
    <message>
        <source>Choosing the server a request goes to; a prefix cache helps only on the server that holds it.</source>
        <translation>决定请求送到哪台服务器；前缀缓存只在存着它的那台服务器上有用。</translation>
    </message>
</context>
<context>
    <name>Presenter</name>
    <message>
        <source>the engine's code for this page, and back</source>
        <translation>这一页对应的引擎代码，再按一下收起</translation>
    </message>
    <message>
        <source>pace {x}×</source>
        <translation>节奏 {x}×</translation>
    </message>
    <message>
        <source>one trip on screen: {s} s</source>
        <translation>屏幕上一趟：{s} 秒</translation>
    </message>
    <message>
        <source>The end of the deck: ← goes back, Home to its start.</source>
        <translation>演讲到此为止：← 往回，Home 回到开头。</translation>
    </message>
    <message>
        <source>Deck setting “{deck}” not understood: using the default deck (the log says why).</source>
        <translation>设置里的演讲顺序（deck）“{deck}”读不懂：改用默认顺序（原因见日志）。</translation>
    </message>
    <message>
        <source>Recording this page ({s} s) to {path}</source>
        <translation>正在把这一页录成 {s} 秒的视频：{path}</translation>
    </message>
    <message>
        <source>Still recording {path}</source>
        <translation>还在录制：{path}</translation>
    </message>
    <message>
        <source>Saved: {path}</source>
        <translation>已保存：{path}</translation>
    </message>
    <message>
        <source>Recording failed: {reason}</source>
        <translation>录制失败：{reason}</translation>
    </message>
    <message>
        <source>Presenter keys</source>
        <translation>演讲者按键</translation>
    </message>
    <message>
        <source>next page; on the Live page one trip</source>
        <translation>下一页；在“现场”页走一趟</translation>
    </message>
    <message>
        <source>as →; on the Live page run / pause</source>
        <translation>同 →；在“现场”页运行 / 暂停</translation>
    </message>
    <message>
        <source>previous page</source>
        <translation>上一页</translation>
    </message>
    <message>
        <source>first page of the deck</source>
        <translation>演讲的第一页</translation>
    </message>
    <message>
        <source>tour sections 1 to 10</source>
        <translation>导览第 1 到第 10 节</translation>
    </message>
    <message>
        <source>the Live page / the tour</source>
        <translation>“现场”页 / 导览</translation>
    </message>
    <message>
        <source>black screen (any key brings the picture back)</source>
        <translation>黑屏（按任意键恢复画面）</translation>
    </message>
    <message>
        <source>full screen, and back</source>
        <translation>全屏，再按一次退出</translation>
    </message>
    <message>
        <source>faster / slower</source>
        <translation>加快 / 放慢</translation>
    </message>
    <message>
        <source>reset the run</source>
        <translation>重新开始这一轮</translation>
    </message>
    <message>
        <source>record this page as a 10 s video into the videos folder</source>
        <translation>把这一页录成 10 秒视频，存进“视频”文件夹</translation>
    </message>
    <message>
        <source>this list of keys</source>
        <translation>显示这张按键表</translation>
    </message>
</context>
<context>
    <name>ModelChoice</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Which model writes. The poetry model learned Tang and Song poems; the code model learned Python's documentation and source.</source>
        <translation>由哪个模型来写。古诗模型读过唐诗宋诗；代码模型读过 Python 的文档和源码。</translation>
    </message>
    <message>
        <source>Greedy</source>
        <translation>贪心</translation>
    </message>
    <message>
        <source>Greedy: always the most likely token (the same answer every time). Off: a token is drawn from the probabilities, with the seed shown.</source>
        <translation>贪心：每次都取最可能的字（每次答案都一样）。关掉：按概率抽签，旁边显示随机种子。</translation>
    </message>
    <message>
        <source>always the most likely token</source>
        <translation>每次取最可能的字</translation>
    </message>
    <message>
        <source>temperature {t} · top-p {p}</source>
        <translation>温度 {t} · top-p {p}</translation>
    </message>
    <message>
        <source>seed {n}</source>
        <translation>种子 {n}</translation>
    </message>
    <message>
        <source>Your model: {name}</source>
        <translation>你的模型：{name}</translation>
    </message>
    <message>
        <source>One Trip code model (English)</source>
        <translation>代码模型（英文）</translation>
    </message>
    <message>
        <source>One Trip poetry model (Chinese)</source>
        <translation>古诗模型（中文）</translation>
    </message>
    <message>
        <source>int8</source>
        <translation>INT8</translation>
    </message>
    <message>
        <source>A thinner book: the model's weights as int8, about a quarter of the bytes. The engine restarts with them; the readout then measures the trip again.</source>
        <translation>更薄的书：模型的权重换成 INT8，字节约为原来的四分之一。引擎会用它重新启动，读数随后重新实测这一趟。</translation>
    </message>
    <message>
        <source>Pocket code model (English)</source>
        <translation>袖珍代码模型（英文）</translation>
    </message>
    <message>
        <source>Pocket poetry model (Chinese)</source>
        <translation>袖珍古诗模型（中文）</translation>
    </message>
</context>
<context>
    <name>Invite</name>
    <message>
        <source>Touch to start</source>
        <translation>触摸开始</translation>
    </message>
</context>
<context>
    <name>Touch</name>
    <message>
        <source>Swipe to the left, or tap Next ▶, to begin</source>
        <translation>向左滑动，或点“下一段 ▶”，开始参观</translation>
    </message>
</context>
<context>
    <name>TextSet</name>
    <message>
        <source>end of text</source>
        <translation>文末</translation>
    </message>
</context>
<context>
    <name>Plots</name>
    <message>
        <source>trips</source>
        <translation>趟</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>字/秒</translation>
    </message>
    <message>
        <source>floor {ms} ms</source>
        <translation>下限 {ms} 毫秒</translation>
    </message>
</context>
</TS>
