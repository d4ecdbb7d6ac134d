// The clock gate Kaleido's flow inserts (synth/flow.py), for registers that hold
// more often than they load: a latch that is open while the clock is low keeps
// the enable steady while it is high, and an AND passes the clock only when the
// latch holds a 1. OSU018 has no integrated clock-gating cell, so this is built
// from its LATCH and AND cells when it is mapped. A flow with a real ICG cell
// names that cell in `clockgate -pos` instead (or gives `clockgate -liberty`).
module kaleido_clock_gate(input CE, input CLK, output GCLK);
  reg enable;
  always @* if (!CLK) enable = CE;
  assign GCLK = CLK & enable;
endmodule
