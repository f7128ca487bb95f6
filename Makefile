# gmtun — build, test and benchmark targets. `make test` is what CI runs.

GO          ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK ?= $(GOBIN)/staticcheck
PKGS        := ./...
BENCHTIME   ?= 1s
BENCHCOUNT  ?= 6
PREFIX      ?= /usr/local

# The avo generators (kernels/_gen, a module of its own) and their outputs.
# Each entry is generator:output-package:asm-file:stub-file.
KERNELS := \
	zuclanes:zuclanes:zuclanes_amd64.s:stubs_amd64.go \
	sm4ctr:sm4ctr:sm4ctr_amd64.s:stubs_amd64.go \
	ghash:ghash:ghash_amd64.s:stubs_amd64.go \
	cpuid:cpu:cpu_amd64.s:stubs_amd64.go \
	sm4bs:sm4bs:sm4bs_amd64.s:stubs_amd64.go \
	zucaesni:zucaesni:zucaesni_amd64.s:stubs_amd64.go

.PHONY: all build test vet staticcheck unit purego forced-tiers kernels kernels-fresh bench bench-tunnel demo install clean

all: build

build:
	$(GO) build -o bin/gmtun ./cmd/gmtun

## test: everything CI checks (vet, staticcheck, unit tests with every kernel tier, purego, generated code fresh)
test: vet staticcheck unit purego forced-tiers kernels-fresh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) vet -tags purego $(PKGS)

staticcheck:
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags purego $(PKGS)

unit:
	$(GO) test -count=1 $(PKGS)

## purego: the portable build passes and contains no assembly at all
purego:
	$(GO) test -count=1 -tags purego $(PKGS)
	@sfiles="$$($(GO) list -tags purego -f '{{.ImportPath}} {{.SFiles}}' $(PKGS) | grep -v ' \[\]$$' || true)"; \
	if [ -n "$$sfiles" ]; then echo "assembly selected under -tags purego:"; echo "$$sfiles"; exit 1; fi

## forced-tiers: the cipher tests again with the widest tiers switched off through GODEBUG (fresh processes);
## the tiers switched off are skipped there on purpose, so GMTUN_REQUIRE_IMPLS does not apply.
## GODEBUG goes to the test binaries only (-exec), not to the go command: the compiler would warn about
## gmtun's own feature names (gfni, vaes, vpclmulqdq), and the build cache would replay that warning later.
forced-tiers: export GMTUN_REQUIRE_IMPLS =
forced-tiers:
	$(GO) test -count=1 -exec 'env GODEBUG=cpu.avx512f=off' ./ciphers/... ./kernels/...
	$(GO) test -count=1 -exec 'env GODEBUG=cpu.avx512f=off,cpu.gfni=off' ./ciphers/... ./kernels/...
	$(GO) test -count=1 -exec 'env GODEBUG=cpu.avx512f=off,cpu.vpclmulqdq=off' ./ciphers/... ./kernels/...

## kernels: regenerate the assembly from the avo generators
kernels:
	@set -e; for k in $(KERNELS); do \
		gen=$${k%%:*}; rest=$${k#*:}; pkg=$${rest%%:*}; rest=$${rest#*:}; asm=$${rest%%:*}; stub=$${rest#*:}; \
		[ -d kernels/_gen/$$gen ] || continue; \
		echo "generate kernels/$$pkg/$$asm"; \
		(cd kernels/_gen && $(GO) run ./$$gen -out ../$$pkg/$$asm -stubs ../$$pkg/$$stub -pkg $$pkg); \
	done

## kernels-fresh: fail if the committed assembly differs from a fresh generation
## (generates in place, since avo records its command line in the header, then restores the committed files)
kernels-fresh:
	@set -e; tmp=$$(mktemp -d); stale=0; for k in $(KERNELS); do \
		gen=$${k%%:*}; rest=$${k#*:}; pkg=$${rest%%:*}; rest=$${rest#*:}; asm=$${rest%%:*}; stub=$${rest#*:}; \
		[ -d kernels/_gen/$$gen ] || continue; \
		cp kernels/$$pkg/$$asm $$tmp/$$pkg.asm; cp kernels/$$pkg/$$stub $$tmp/$$pkg.stub; \
		(cd kernels/_gen && $(GO) run ./$$gen -out ../$$pkg/$$asm -stubs ../$$pkg/$$stub -pkg $$pkg) || stale=1; \
		cmp -s $$tmp/$$pkg.asm kernels/$$pkg/$$asm || { echo "kernels/$$pkg/$$asm is stale: run make kernels"; stale=1; }; \
		cmp -s $$tmp/$$pkg.stub kernels/$$pkg/$$stub || { echo "kernels/$$pkg/$$stub is stale: run make kernels"; stale=1; }; \
		cp $$tmp/$$pkg.asm kernels/$$pkg/$$asm; cp $$tmp/$$pkg.stub kernels/$$pkg/$$stub; \
	done; rm -rf $$tmp; [ $$stale = 0 ] && echo "generated kernels are fresh"

## bench: the crypto benchmarks (CPU time is what to compare on a shared machine)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./ciphers/... ./kernels/... ./handshake/...

## bench-tunnel: gmtun (each suite) vs wireguard-go through two network namespaces, same run (root)
bench-tunnel: build
	$(GO) build -o bin/tunnelbed ./bench/tunnelbed
	bin/tunnelbed -gmtun bin/gmtun -json bin/bench-tunnel.json $(TUNNELBED_FLAGS)

## demo: two sites in namespaces, keys and configs generated, ping and iperf3 per suite, a summary (root)
demo: build
	$(GO) build -o bin/tunnelbed ./bench/tunnelbed
	bin/tunnelbed -demo -gmtun bin/gmtun

## install: the binary, the systemd unit and an example configuration (root; DESTDIR for staging)
install: build
	install -D -m 0755 bin/gmtun $(DESTDIR)$(PREFIX)/bin/gmtun
	install -D -m 0644 systemd/gmtun@.service $(DESTDIR)/etc/systemd/system/gmtun@.service
	install -d -m 0700 $(DESTDIR)/etc/gmtun
	install -m 0600 configs/site-a.toml $(DESTDIR)/etc/gmtun/example.toml
	@echo "installed; next: gmtun genkey > /etc/gmtun/gm0.key, edit /etc/gmtun/gm0.toml, systemctl daemon-reload, systemctl enable --now gmtun@gm0"

clean:
	rm -rf bin
