"""The board's memory behind the system top's own DMA in Amaranth's simulator: runs
written and read back across bursts and pages with random stalls on both streams
(the read side held with ``rready`` low), words the host port wrote read by the
DMA and the other way round, and sizes it refuses."""

import random

import pytest
from amaranth import Module
from amaranth.lib.wiring import connect
from amaranth.sim import Simulator

from hw.system.bus_memory import BusMemory
from hw.system.dma import Dma

WORDS = 1024


def _run(rng, host_words, runs, busy):
    """``host_words`` ({word: value}) written by the host port, then each ``(op, addr, data)``
    of ``runs`` by the DMA (a write of ``data``, or a read of ``len(data)`` beats); then
    the host reads ``host_words``' addresses back. Returns each read's beats, and the host's."""
    m = Module()
    m.submodules.dma = dma = Dma()
    m.submodules.mem = mem = BusMemory(WORDS)
    connect(m, dma.bus, mem.bus)
    reads, host_reads = [], {}

    async def bench(ctx):
        for addr, value in host_words.items():
            ctx.set(mem.host_addr, addr)
            ctx.set(mem.host_wdata, value)
            ctx.set(mem.host_we, 1)
            await ctx.tick()
        ctx.set(mem.host_we, 0)
        for op, addr, data in runs:
            d = "wr" if op == "w" else "rd"
            ctx.set(getattr(dma, f"{d}_addr"), addr)
            ctx.set(getattr(dma, f"{d}_beats"), len(data))
            ctx.set(getattr(dma, f"{d}_start"), 1)
            await ctx.tick()
            ctx.set(getattr(dma, f"{d}_start"), 0)
            got = []
            while ctx.get(getattr(dma, f"{d}_busy")) or (op == "r" and len(got) < len(data)):
                if op == "w":
                    ctx.set(dma.wr_data.payload, data[0] if data else 0)
                    ctx.set(dma.wr_data.valid, bool(data) and rng.random() >= busy)
                else:
                    ctx.set(dma.rd_data.ready, rng.random() >= busy)
                *_, wv, wr, rv, rr, word = await ctx.tick().sample(
                    dma.wr_data.valid, dma.wr_data.ready, dma.rd_data.valid, dma.rd_data.ready, dma.rd_data.payload)
                if op == "w" and wv and wr:
                    data = data[1:]
                if op == "r" and rv and rr:
                    got.append(word)
            ctx.set(dma.wr_data.valid, 0)
            ctx.set(dma.rd_data.ready, 0)
            if op == "r":
                reads.append(got)
        for addr in host_words:
            ctx.set(mem.host_addr, addr)
            ctx.set(mem.host_re, 1)
            await ctx.tick()
            ctx.set(mem.host_re, 0)
            host_reads[addr] = ctx.get(mem.host_rdata)

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return reads, host_reads


@pytest.mark.parametrize("busy", [0.0, 0.4])
def test_runs_read_back_what_was_written(busy, seed):
    rng = random.Random(seed)
    runs, want = [], []
    for addr, beats in [(0x000, 1), (0x7F0, 40), (0x1004, 17)]:       # the last wraps past the 4 KiB memory
        data = [rng.getrandbits(32) for _ in range(beats)]
        runs += [("w", addr, data), ("r", addr, [0] * beats)]
        want.append(data)
    reads, _ = _run(rng, {}, runs, busy)
    assert reads == want


def test_the_host_port_and_the_dma_see_one_memory(seed):
    rng = random.Random(seed)
    host = {w: rng.getrandbits(32) for w in range(100, 120)}
    dma = [rng.getrandbits(32) for _ in range(20)]
    # The DMA reads what the host wrote, then overwrites half of it; the host reads that back.
    reads, host_reads = _run(rng, host, [("r", 400, [0] * 20), ("w", 440, dma)], 0.2)
    assert reads == [list(host.values())]
    assert [host_reads[w] for w in range(100, 110)] == list(host.values())[:10]
    assert [host_reads[w] for w in range(110, 120)] == dma[:10]


@pytest.mark.parametrize("words", [0, 1, 3, 1000, "64"])
def test_a_size_it_cannot_decode_is_refused(words):
    with pytest.raises(ValueError, match="memory words must be a power of two"):
        BusMemory(words)
