GO ?= go


.PHONY: build test bench run fmt vet fuzz

build:
	$(GO) build -o bin/govhost ./cmd/govhost

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# run: the main job on the embedded default (see README).
run: build
	./bin/govhost demo

fmt:
	gofmt -w $$(git ls-files '*.go')
