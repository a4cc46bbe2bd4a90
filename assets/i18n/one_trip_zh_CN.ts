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
</TS>
