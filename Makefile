GO ?= go


.PHONY: build test bench run fmt vet fuzz plugins plugins-check fixtures fixtures-check gate-tables

build:
	$(GO) build -o bin/govhost ./cmd/govhost

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# run: the main job on the embedded default (see README).
run: build
	./bin/govhost demo --data govhost-data

fmt:
	gofmt -w $$(git ls-files '*.go')

# --- Wasm gates and fixtures (see testdata/README.md) -----------------------
# Go guests: reproducible reactor modules built with the standard toolchain.
WASM_GO = GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags=-buildid=
WASM_OUT = internal/wasmfixtures/wasm

BUILTIN_GATES = permission pathguard destructive

# plugins: the built-in gates (embedded by plugins/builtin) and the example gate.
plugins:
	for g in $(BUILTIN_GATES); do $(WASM_GO) -o plugins/builtin/$$g.wasm ./plugins/$$g/wasm || exit 1; done
	$(WASM_GO) -o $(WASM_OUT)/toolgate.wasm ./examples/toolgate

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
