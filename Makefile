GO ?= go


.PHONY: build install test bench bench-speed run demo fmt vet fuzz plugins plugins-check fixtures fixtures-check gate-tables \
	examples examples-test examples-bench sdk-test scaffold-test $(addprefix example-,$(EXAMPLE_LANGS))

build:
	@test -x bin/govhost || echo "make: building bin/govhost (the first build downloads and compiles the dependencies: a few minutes)"
	$(GO) build -o bin/govhost ./cmd/govhost

# install: govhost and the small command hook govhost-hook on PATH
# ($(GOBIN), else $(GOPATH)/bin); `govhost install` finds govhost-hook there.
install:
	$(GO) install ./cmd/govhost ./cmd/govhost-hook
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; \
	echo "installed govhost and govhost-hook in $$bin"; \
	case ":$$PATH:" in *":$$bin:"*) ;; *) echo "add it to PATH: export PATH=\"$$bin:\$$PATH\"";; esac

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# --- soak (issue 28; not part of make test) ----------------------------------
# soak: the real serve under mixed load for SOAK (default 30m): 64 agents
# authorizing and completing, hooks, uploads with load bombs, policy changes,
# SIGKILL and restart every 30 s; asserts RSS, /healthz latency and that every
# chain verifies (cmd/govhost/soak_test.go). No -race: it measures the binary
# people run.
SOAK ?= 30m
.PHONY: soak
soak:
	GOVHOST_SOAK=$(SOAK) GOVHOST_STRICT_TIMING=1 $(GO) test -count=1 -run '^TestSoak$$' -timeout 90m -v ./cmd/govhost

# run: the main job — the governance sidecar on the embedded default, in
# ./govhost-data (see README). demo runs an agent session in process.
run: build
	./bin/govhost serve --data govhost-data

demo: build
	./bin/govhost demo --data govhost-data

fmt:
	gofmt -w $$(git ls-files '*.go')

# --- Wasm gates and fixtures (see testdata/README.md) -----------------------
# Go guests: reproducible reactor modules built with the standard toolchain.
WASM_GO = GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags=-buildid=
WASM_OUT = internal/wasmfixtures/wasm

BUILTIN_GATES = permission pathguard destructive duties

# --- Built-in gates in Rust (issue 26, docs/gates-builtin.md) ---------------
# RUST_GATES are built from plugins/rust/<gate>.rs (plugins/rust/gatekit.rs
# is compiled into each) with Debian's rustc 1.63 and libstd-rust-dev-wasm32,
# no cargo: every built-in gate since permission moved. Reproducible: source
# paths remapped, symbols stripped, one codegen unit; fat LTO (fewer
# functions for wazero to read at start, calls as fast or faster).
RUST_GATES = $(BUILTIN_GATES)
RUSTC_GATE ?= $(if $(wildcard /usr/bin/rustc),/usr/bin/rustc,rustc)
RUST_GATE_WASM = $(RUSTC_GATE) --edition 2021 --target wasm32-wasi --crate-type cdylib -C lto=fat \
	-C codegen-units=1 -C strip=symbols --remap-path-prefix=$(CURDIR)=.

# Each gate's opt-level (issue 26: call speed and code size; the start reads
# every compiled byte): s where a call measured as fast as at 3 (pathguard,
# duties: 12-13 % smaller), 3 where s was slower (permission +0.15 µs a
# call, destructive +0.13 µs). docs/performance.md, "Gate calls, fifth pass".
RUST_GATE_OPT = 3
RUST_GATE_OPT_pathguard = s
RUST_GATE_OPT_duties = s

# The built-in gates' link flags (issue 26, start-up): rustc links wasm32
# with a 1 MiB stack, first in linear memory (--stack-first), so every
# instance began 18 pages (1.1 MiB) large, allocated and zeroed at each
# instantiation. 192 KiB is over four times the deepest stack any input
# reaches (destructive's 512 nested containers: 25 KB at opt-level 3,
# 34 KB at z; the others under 4 KB), and overflowing it traps:
# plugins/builtin/stack_test.go checks both, on the embedded modules or on
# GOVHOST_STACK_GATES=<dir>.
RUST_GATE_LINK = -C link-arg=-zstack-size=196608
RUST_GATE_WASM += $(RUST_GATE_LINK)

# The built-in gates' post-link step (issue 26, start-up; docs/performance.md
# "Fifth pass (s9-cold)"): binaryen's wasm-opt -O3 (Debian 12's binaryen 108,
# installed by .ci/run; deterministic, whatever the thread count) rewrites
# rustc's output with 31 % fewer functions and 13 % less code: wazero
# validates less and reads fewer function offsets at every start (1–3 ms of
# CPU a start, 2,200 fewer allocations); the calls are unchanged within noise.
WASM_OPT ?= wasm-opt
WASM_OPT_GATE = $(WASM_OPT) -O3

# plugins: the built-in gates (embedded by plugins/builtin) and the example gate.
# SHA256SUMS: the built-ins' digests, embedded beside them (issue 26: no
# hashing at start; plugins-check diffs it with the modules).
plugins:
	mkdir -p build/rustc
	$(foreach g,$(RUST_GATES),$(RUST_GATE_WASM) -C opt-level=$(or $(RUST_GATE_OPT_$(g)),$(RUST_GATE_OPT)) -o build/rustc/$(g).wasm plugins/rust/$(g).rs && \
		$(WASM_OPT_GATE) -o plugins/builtin/$(g).wasm build/rustc/$(g).wasm && ) true
	cd plugins/builtin && sha256sum $(addsuffix .wasm,$(BUILTIN_GATES)) | LC_ALL=C sort -k2 > SHA256SUMS
	$(WASM_GO) -o $(WASM_OUT)/toolgate.wasm ./examples/toolgate

# plugins-test (issue 26): the Rust gates' own tests, built natively with the
# same rustc: the permission gate refuses each configuration of
# plugins/permission/testdata/config_errors.json with exactly its error text
# (field path and problem; the module keeps it behind gate_config_error).
.PHONY: plugins-test
plugins-test:
	mkdir -p build
	$(RUSTC_GATE) --edition 2021 --test -o build/permission-test plugins/rust/permission.rs
	./build/permission-test

# plugins-check: rebuild the committed modules and fail if a byte differs.
plugins-check: plugins
	git diff --exit-code --stat -- plugins/builtin $(WASM_OUT)/toolgate.wasm

# fixtures: everything the host tests embed, rebuilt from source. Needs
# wabt (wat2wasm) and clang + lld + wasi-libc: apt-get install -y wabt clang lld wasi-libc
fixtures: plugins
	$(MAKE) -C testdata GO="$(GO)"

# fixtures-check: rebuild and fail if any committed module differs.
fixtures-check: fixtures
	git diff --exit-code -- $(WASM_OUT)

# gate-tables: every built-in gate's case table through its embedded module,
# with the gate test runner (`govhost test`).
gate-tables: build
	for g in $(BUILTIN_GATES); do ./bin/govhost test plugins/$$g/testdata/cases.json --gate $$g > /dev/null || exit 1; done

# --- Gates in other languages (examples/README.md, sdk/) ----------------------
# Built into build/ (never committed). Tools (Debian 12 packages, installed by
# .ci/run): clang lld wasi-libc libclang-rt-14-dev-wasm32 (C), rustc
# libstd-rust-dev-wasm32 (Rust, no cargo), and AssemblyScript from npm
# (`npm ci --prefix sdk/assemblyscript`).
EXAMPLES_OUT = build/examples
EXAMPLE_LANGS = go c rust assemblyscript
CLANG_WASM = clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -Wl,--strip-debug -Wall -Wextra -Werror
# Debian's rustc (1.63, with libstd-rust-dev-wasm32) builds wasm32-wasi; a
# rustup rustc earlier on PATH may lack that target, so prefer Debian's.
RUSTC ?= $(if $(wildcard /usr/bin/rustc),/usr/bin/rustc,rustc)
RUST_WASM = $(RUSTC) --edition 2021 --target wasm32-wasi -O -C strip=symbols
ASC ?= sdk/assemblyscript/node_modules/.bin/asc
ASC_GATE = $(ASC) -O3 --runtime incremental --exportStart _initialize --use abort=sdk/assemblyscript/assembly/index/gateAbort

# examples: the egress gate in every language, build/examples/egress-<lang>.wasm.
examples: $(addprefix example-,$(EXAMPLE_LANGS))

example-go:
	@mkdir -p $(EXAMPLES_OUT)
	$(WASM_GO) -o $(EXAMPLES_OUT)/egress-go.wasm ./examples/go

example-c:
	@mkdir -p $(EXAMPLES_OUT)
	$(CLANG_WASM) -I sdk/c -o $(EXAMPLES_OUT)/egress-c.wasm examples/c/egress.c

example-rust:
	@mkdir -p $(EXAMPLES_OUT)/rust
	$(RUST_WASM) --crate-type rlib --crate-name govhost_gate --out-dir $(EXAMPLES_OUT)/rust sdk/rust/src/lib.rs
	$(RUST_WASM) --crate-type cdylib --crate-name egress --extern govhost_gate=$(EXAMPLES_OUT)/rust/libgovhost_gate.rlib \
		-o $(EXAMPLES_OUT)/egress-rust.wasm examples/rust/src/lib.rs

example-assemblyscript:
	@mkdir -p $(EXAMPLES_OUT)
	$(ASC_GATE) -o $(EXAMPLES_OUT)/egress-assemblyscript.wasm examples/assemblyscript/assembly/index.ts

# examples-test: every language's build passes the shared cases.
examples-test: build examples
	for l in $(EXAMPLE_LANGS); do \
		./bin/govhost test examples/egress.cases.json --gate $(EXAMPLES_OUT)/egress-$$l.wasm > $(EXAMPLES_OUT)/egress-$$l.test.txt \
			|| { cat $(EXAMPLES_OUT)/egress-$$l.test.txt; exit 1; }; \
		tail -n 1 $(EXAMPLES_OUT)/egress-$$l.test.txt; \
	done

# examples-bench: the README's comparison table, from one `govhost bench
# --compare` run over the shared cases' requests (not part of CI: timings).
examples-bench: build examples
	./bin/govhost bench --compare --input examples/egress.cases.json \
		$(foreach l,$(EXAMPLE_LANGS),--gate $(EXAMPLES_OUT)/egress-$(l).wasm)

# sdk-test: the SDKs' own tests (C natively under ASan/UBSan, Rust natively,
# AssemblyScript under node).
sdk-test:
	@mkdir -p build/sdk
	cc -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
		-I sdk/c -o build/sdk/c_test sdk/c/test/govhost_gate_test.c
	./build/sdk/c_test
	$(RUSTC) --edition 2021 --test -O -o build/sdk/rust_test sdk/rust/src/lib.rs
	./build/sdk/rust_test -q
	$(ASC) sdk/assemblyscript/test/sdk.test.ts -O1 --runtime incremental --exportStart _initialize \
		--use abort=sdk/assemblyscript/assembly/index/gateAbort -o build/sdk/as_test.wasm
	node sdk/assemblyscript/test/run.mjs build/sdk/as_test.wasm

# scaffold-test: `govhost gate new` for every language, built and run
# against its own cases as generated (build/scaffold/<lang>).
scaffold-test: build
	rm -rf build/scaffold
	for l in $(EXAMPLE_LANGS); do \
		./bin/govhost gate new --lang $$l --dir build/scaffold/$$l scaffolded-$$l > /dev/null || exit 1; \
		$(MAKE) -s -C build/scaffold/$$l test GOVHOST=$(CURDIR)/bin/govhost RUSTC="$(RUSTC)" ASC=$(CURDIR)/$(ASC) > build/scaffold/$$l.test.txt \
			|| { cat build/scaffold/$$l.test.txt; exit 1; }; \
		tail -n 1 build/scaffold/$$l.test.txt; \
	done

# bench-speed: every row of the README's speed table in one run (issue 12).
bench-speed:
	$(GO) test -run '^$$' -bench 'GovernedInvoke|BareGates|BuiltinGate|OneTaskLatency' -benchtime 2000x -benchmem .
	$(GO) test -run '^$$' -bench 'ColdStart' -benchtime 10x -benchmem .
	$(GO) test -run '^$$' -bench 'ResidentSize' -benchtime 1x .
	$(GO) test -run '^$$' -bench 'Invoke_FakeGates|AuthorizeComplete' -benchtime 20000x -benchmem ./controller/
# issue 25 (HTTP hot path): 64 clients authorize + complete over HTTP, and the
# same two phases in process on the same engine (the ratio's reference).
	$(GO) test -run '^$$' -bench 'RoundTrip|Exchange' -benchtime 3000x -benchmem ./server/

# bench-overhead (issue 25): the controller alone (three Go gates, memory
# store) against one trivial Go guest call and against its hashing floor
# (the SHA-256 work of one call's records, built and checked), in CPU time
# per call, which a loaded machine inflates far less than wall time
# (docs/performance.md).
.PHONY: bench-overhead
bench-overhead:
	$(GO) test -run '^$$' -bench 'ControllerOverhead' -benchtime 20000x -benchmem .
