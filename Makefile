GO ?= go


.PHONY: build test bench run fmt vet fuzz plugins fixtures fixtures-check

build:
	$(GO) build -o bin/govhost ./cmd/govhost

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# run: the main job on the embedded default (see README).
run: build
	./bin/govhost chain verify --file governance/testdata/chain.jsonl \
		--expected-head 5618d44826bd46c6789c1190f0aea886859348e8773a87651aa9b1b07afed342

fmt:
	gofmt -w $$(git ls-files '*.go')

# --- Wasm gates and fixtures (see testdata/README.md) -----------------------
# Go guests: reproducible reactor modules built with the standard toolchain.
WASM_GO = GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags=-buildid=
WASM_OUT = internal/wasmfixtures/wasm

# plugins: the example gate (and, later, the built-in gates).
plugins:
	$(WASM_GO) -o $(WASM_OUT)/toolgate.wasm ./examples/toolgate

# fixtures: everything the host tests embed, rebuilt from source. Needs
# wabt (wat2wasm) and clang + lld + wasi-libc: apt-get install -y wabt clang lld wasi-libc
fixtures: plugins
	$(MAKE) -C testdata GO="$(GO)"

# fixtures-check: rebuild and fail if any committed module differs.
fixtures-check: fixtures
	git diff --exit-code -- $(WASM_OUT)
