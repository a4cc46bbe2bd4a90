<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>StageScene</name>
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
        <translation>题目 · {n} 块</translation>
    </message>
    <message>
        <source>The book rests in the warehouse. Every token costs one trip.</source>
        <translation>书放在仓库里。每写一个字，都要把整本书搬一趟。</translation>
    </message>
    <message>
        <source>Reading the question: {n} tokens in one trip</source>
        <translation>读题：搬一趟，读完 {n} 块</translation>
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
        <translation>边读题边写字：这一趟读进 {n} 块</translation>
    </message>
    <message>
        <source>Checking the apprentice's guesses: {n} tokens in one trip</source>
        <translation>核对小徒弟猜的字：搬一趟，验 {n} 块</translation>
    </message>
    <message>
        <source>A copy travels; the book stays home</source>
        <translation>搬的是拷贝：书本身一直在仓库里</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
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
        <source>{name}: {layers} layers (chapters) · {weights} of weights · memory {bw}/s measured · {threads} threads on {device}</source>
        <translation>{name}：{layers} 层（章）· 权重 {weights} · 实测内存带宽 {bw}/秒 · {device} 上 {threads} 个线程</translation>
    </message>
    <message>
        <source>floor {ms} ms: weights ÷ bandwidth</source>
        <translation>下限 {ms} 毫秒：权重 ÷ 带宽</translation>
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
        <translation>清空答案、字块和图表（R 键）</translation>
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
        <source>Ready. Choose a prompt and press Run.</source>
        <translation>准备好了。选一个题目，按“开始”。</translation>
    </message>
    <message>
        <source>The engine keeps stopping; it will not be restarted. See the log.</source>
        <translation>引擎反复停止，不再自动重启。详情见日志。</translation>
    </message>
</context>
<context>
    <name>TokenChips</name>
    <message>
        <source>token {label} has id {id}</source>
        <translation>字块 {label} 的编号是 {id}</translation>
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
</TS>
