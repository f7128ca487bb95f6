# gmtun — build, test and benchmark targets. `make test` is what CI runs.

SHELL       := /bin/bash
GO          ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
# gofmt from the same toolchain as $(GO): it is not on PATH under sudo, and a missing gofmt must not pass.
GOFMT       := $(shell $(GO) env GOROOT)/bin/gofmt
# staticcheck at a pinned version, fetched and run through the Go module proxy: nothing to preinstall.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
# fuzz: how much each fuzz target runs in `make test`: a count of inputs, not a duration, since a duration can end
# in a spurious "context deadline exceeded" failure when it expires mid-input (FUZZTIME=1h FUZZ=FuzzParsers for a long run)
FUZZTIME    ?= 2000x
FUZZ        ?= .
PKGS        := ./...
BENCHTIME   ?= 1s
BENCHCOUNT  ?= 6
PREFIX      ?= /usr/local

# The avo generators (kernels/_gen, a module of its own) and their outputs.
# Each entry is generator:output-package:asm-file:stub-file.
KERNELS := \
	zuc:zuc:zuc_amd64.s:stubs_amd64.go \
	sm4:sm4:sm4_amd64.s:stubs_amd64.go \
	ghash:ghash:ghash_amd64.s:stubs_amd64.go \
	cpuid:cpu:cpu_amd64.s:stubs_amd64.go \
	csum:csum:csum_amd64.s:stubs_amd64.go \
	ublock:ublock:ublock_amd64.s:stubs_amd64.go

.PHONY: all build test vet staticcheck unit purego forced-tiers fuzz kernels kernels-fresh generate generated-fresh bench bench-tunnel bench-breakdown demo install clean bench-faults static man deb install-unit

all: build

build:
	$(GO) build -o bin/gmtun ./cmd/gmtun

## test: everything CI checks (vet, staticcheck, unit tests with every kernel tier, purego, fuzz smoke,
## generated code fresh). The end-to-end tests (network namespaces, TUN, the real daemon; cmd/gmtun TestNetns*,
## bench/tunnelbed, tunnel/iface, tunnel/netio) need root, /dev/net/tun, ip, ping and iperf3: as non-root they are
## skipped and listed at the end; under CI=true a missing prerequisite fails them. Run `sudo make test` for all.
test: vet staticcheck unit purego forced-tiers fuzz kernels-fresh generated-fresh

vet:
	@test -x "$(GOFMT)" || { echo "gofmt not found at $(GOFMT)"; exit 1; }
	@out="$$($(GOFMT) -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))"; \
	test -z "$$out" || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) vet -tags purego $(PKGS)

staticcheck:
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags purego $(PKGS)

## unit: every test; the daemon's end-to-end tests (cmd/gmtun TestNetns*: floods, soak, throughput figures) run
## afterwards on their own (-p 1), so that no other package's tests share the 2 cores with the fault bed.
## The whole output goes to bin/unit.log; .ci/summarize.awk prints each package's result, the skips with their
## reasons and, last (CI shows the tail), every failed test with its short log lines.
E2E := ^TestNetns
# go test's default of 10 min per test binary is too short for the namespace tests (soak, floods, every suite)
# and for the ZUC packages on a busy 2-core machine.
TESTTIMEOUT ?= 30m
unit:
	@mkdir -p bin
	@set -o pipefail; { $(GO) test -count=1 -timeout $(TESTTIMEOUT) -v -skip '$(E2E)' $(PKGS) && \
		$(GO) test -count=1 -timeout $(TESTTIMEOUT) -v -p 1 -run '$(E2E)' ./cmd/gmtun/; } 2>&1 | tee bin/unit.log | awk -f .ci/summarize.awk

## fuzz: every fuzz target for $(FUZZTIME) (go test allows one target per run; seeds also run in `unit`)
fuzz:
	@mkdir -p bin
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' | grep -E '$(FUZZ)' || true); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg > bin/fuzz.log 2>&1 || { cat bin/fuzz.log; exit 1; }; \
		done; \
	done

## purego: the portable build passes and contains no assembly at all (the daemon's namespace tests build their
## own binary and run in `unit`, so they are not repeated here)
purego:
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -tags purego -skip '$(E2E)' $(PKGS)
	@sfiles="$$($(GO) list -tags purego -f '{{.ImportPath}} {{.SFiles}}' $(PKGS) | grep -v ' \[\]$$' || true)"; \
	if [ -n "$$sfiles" ]; then echo "assembly selected under -tags purego:"; echo "$$sfiles"; exit 1; fi

## forced-tiers: the cipher and kernel tests again with the widest tiers switched off through GODEBUG (fresh
## processes), so CPU detection and dispatch are tested on the masks a smaller CPU has; the tiers switched off are
## skipped there on purpose, so GMTUN_REQUIRE_IMPLS does not apply. GODEBUG goes to the test binaries only
## (-exec), not to the go command: the compiler would warn about gmtun's own feature names (gfni, vaes,
## vpclmulqdq), and the build cache would replay that warning later.
## SKYLAKESP is kernels/cpu.SkylakeSP (AVX-512 and AES-NI without GFNI, VAES, VPCLMULQDQ, VBMI, VBMI2): the
## CPUs the AVX-512+AES-NI tier (SM4 on ZMM with AESENCLAST, 16-lane ZUC with AES-NI) is for. TestSkylakeSPMaskInMakefile keeps the two the same.
SKYLAKESP := cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off,cpu.avx512vbmi2=off,cpu.avx512vbmi=off
forced-tiers: export GMTUN_REQUIRE_IMPLS =
forced-tiers:
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -exec 'env GODEBUG=cpu.avx512f=off' ./ciphers/... ./kernels/...
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -exec 'env GODEBUG=cpu.avx512f=off,cpu.gfni=off' ./ciphers/... ./kernels/...
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -exec 'env GODEBUG=cpu.avx512f=off,cpu.vpclmulqdq=off' ./ciphers/... ./kernels/...
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -exec 'env GODEBUG=$(SKYLAKESP)' ./ciphers/... ./kernels/...

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

## bench-breakdown: where the data plane's CPU goes, per GB (issue 15): one TCP stream per tunnel (sm4-gcm,
## zuc-256, wireguard-go) and over the bare veth under `perf record -a -g`, 3 runs; needs root and perf (linux-perf).
## Output: bin/bench-breakdown.md and bin/bench-breakdown.json.
BREAKDOWN_SUITES ?= sm4-gcm,zuc-256
bench-breakdown: build
	$(GO) build -o bin/tunnelbed ./bench/tunnelbed
	bin/tunnelbed -breakdown -gmtun bin/gmtun -suites $(BREAKDOWN_SUITES) -runs 3 -json bin/bench-breakdown.json $(TUNNELBED_FLAGS) > bin/bench-breakdown.md; \
		rc=$$?; cat bin/bench-breakdown.md; exit $$rc

## demo: two sites in namespaces, keys and configs generated, ping and iperf3 per suite, a summary (root)
demo: build
	$(GO) build -o bin/tunnelbed ./bench/tunnelbed
	bin/tunnelbed -demo -gmtun bin/gmtun

## install: the binary, the systemd unit and an example configuration (root; DESTDIR for staging)
install: build install-unit
	install -D -m 0755 bin/gmtun $(DESTDIR)$(PREFIX)/bin/gmtun
	install -d -m 0700 $(DESTDIR)/etc/gmtun
	install -m 0600 configs/site-a.toml $(DESTDIR)/etc/gmtun/example.toml
	@echo "installed; next: gmtun genkey > /etc/gmtun/gm0.key, edit /etc/gmtun/gm0.toml, systemctl daemon-reload, systemctl enable --now gmtun@gm0"

## static: a statically linked binary (CGO_ENABLED=0, no PT_INTERP) in $(BUILD)/gmtun, version from git
BUILD       ?= build
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
# Debian versions must start with a digit: 0~DATE.REV until the project tags releases.
DEB_VERSION ?= 0~$(shell git log -1 --format=%cd --date=format:%Y%m%d%H%M%S 2>/dev/null || echo 0).$(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
static:
	@mkdir -p $(BUILD)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BUILD)/gmtun ./cmd/gmtun

## man: gmtun(8) and gmtun.toml(5), generated by the binary from its command table and key docs
man: static
	@mkdir -p $(BUILD)/man
	$(BUILD)/gmtun man 8 > $(BUILD)/man/gmtun.8
	$(BUILD)/gmtun man 5 > $(BUILD)/man/gmtun.toml.5

## deb: $(BUILD)/gmtun_VERSION_ARCH.deb with dpkg-deb (binary, unit, man pages, completions, example, docs)
deb: static
	PATH="$$(dirname $(GO)):$$PATH" configs/deb/build.sh $(BUILD)/gmtun $(BUILD) $(DEB_VERSION)

## install-unit: the systemd unit with its paths rewritten for PREFIX (the binary, the Documentation= file)
## into UNITDIR, and that documentation file (part of install; TestSystemdInstall runs it into a scratch DESTDIR)
UNITDIR     ?= /etc/systemd/system
DOCDIR      ?= $(PREFIX)/share/doc/gmtun
install-unit:
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed -e 's|/usr/local/bin/gmtun|$(PREFIX)/bin/gmtun|g' -e 's|/usr/local/share/doc/gmtun|$(DOCDIR)|g' \
		systemd/gmtun@.service > $(DESTDIR)$(UNITDIR)/gmtun@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/gmtun@.service
	install -D -m 0644 docs/OPERATIONS.md $(DESTDIR)$(DOCDIR)/OPERATIONS.md

clean:
	rm -rf bin $(BUILD)

## generate: the Go files generated from circuits and unrolled code (the S-box circuits of the portable
## SM4 and ZUC cores, ZUC's unrolled rounds)
GENERATED := ciphers/internal/sm4/sbox_circuit.go ciphers/internal/zuc/sbox_ct.go ciphers/internal/zuc/unrolled_generic.go
generate:
	(cd kernels/_gen && $(GO) run ./sm4circuit -gosbox ../../ciphers/internal/sm4/sbox_circuit.go -gopkg sm4)
	$(GO) generate ./ciphers/internal/zuc/

## generated-fresh: fail if a committed generated Go file differs from a fresh generation
generated-fresh:
	@set -e; tmp=$$(mktemp -d); for f in $(GENERATED); do mkdir -p $$tmp/$$(dirname $$f); cp $$f $$tmp/$$f; done; \
	$(MAKE) --no-print-directory generate >/dev/null; stale=0; \
	for f in $(GENERATED); do cmp -s $$tmp/$$f $$f || { echo "$$f is stale: run make generate"; stale=1; }; cp $$tmp/$$f $$f; done; \
	rm -rf $$tmp; [ $$stale = 0 ] && echo "generated Go files are fresh"

## bench-faults: the fault bed (bench/faultbed) through the real daemon in namespaces, long settings, a table (root).
## FAULT_SOAK (default 1h), FAULT_BYTES (TCP transfer per suite, default 64 MiB), FAULT_OUTAGE (default 200s, past
## RejectAfterTime), FAULT_FLOOD (seconds per flood measurement, default 10). Output: bin/bench-faults.{log,md}.
FAULT_SOAK   ?= 1h
FAULT_BYTES  ?= 67108864
FAULT_OUTAGE ?= 200s
FAULT_FLOOD  ?= 10
bench-faults: build
	@mkdir -p bin
	$(GO) build -o bin/faulttable ./bench/faultbed/cmd/faulttable
	$(GO) build -tags gmtun_shorttimers -o bin/gmtun-shorttimers ./cmd/gmtun
	@set -o pipefail; GMTUN_TEST_BIN=$(CURDIR)/bin/gmtun GMTUN_TEST_BIN_SHORTTIMERS=$(CURDIR)/bin/gmtun-shorttimers GMTUN_FAULT_STRICT=1 GMTUN_FAULT_SOAK=$(FAULT_SOAK) GMTUN_FAULT_BYTES=$(FAULT_BYTES) \
		GMTUN_FAULT_OUTAGE=$(FAULT_OUTAGE) GMTUN_FAULT_FLOOD=$(FAULT_FLOOD) \
		$(GO) test -count=1 -v -timeout 0 -run '^TestNetnsFault$$' ./cmd/gmtun > bin/bench-faults.log 2>&1; rc=$$?; \
		bin/faulttable < bin/bench-faults.log | tee bin/bench-faults.md; exit $$rc
