# braid — see README.md. `make test` is the one test command (CI runs it).
GO       ?= go
PKGS     := ./...
SHM      ?= /dev/shm
BIN      := bin

.PHONY: all build test test-deps vet lint fmt-check unit race bench bench-fptree bench-pmdk bench-kv bench-raft bench-redis redis-suite demo fuzz fuzz-smoke clean

all: build

build:
	$(GO) build $(PKGS)
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags purego $(PKGS)
	GOARCH=386 $(GO) vet $(PKGS)
	GOARCH=arm64 $(GO) vet $(PKGS)
	@# Type-checks the non-Linux fallbacks.
	GOOS=darwin $(GO) vet $(PKGS)

# staticcheck, pinned, installed into $(BIN) by go install (the library's
# go.mod does not require it).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/staticcheck-$(STATICCHECK_VERSION)

# Every package is staticcheck-clean; keep it so (a finding fails make
# test).
lint: $(STATICCHECK)
	$(STATICCHECK) $(PKGS)

$(STATICCHECK):
	@mkdir -p $(BIN)
	GOBIN=$(abspath $(BIN))/staticcheck-tmp $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(BIN)/staticcheck-tmp/staticcheck $@ && rmdir $(BIN)/staticcheck-tmp

# test: formatting, vet (amd64, purego, 386, arm64, darwin), staticcheck, every
# package under the race detector with the invariants build tag, the
# portable (purego) build (kv's stores there on a fake two-node NUMA
# topology: BRAID_KV_FAKE_NUMA, kv/numa_test.go), the 32-bit build (GOARCH=386, skipped with a
# message where the kernel cannot run 386 binaries; vet has type-checked it
# either way), and each fuzz target briefly (fuzz-smoke).
test: fmt-check vet lint test-deps
	$(GO) test -race -tags invariants -count=1 -timeout 30m $(PKGS)
	BRAID_KV_FAKE_NUMA=1 $(GO) test -tags purego -count=1 -timeout 20m $(PKGS)
	@if GOARCH=386 $(GO) test -count=1 -run '^$$' ./internal/pmheader >/dev/null 2>&1; then \
	  echo "GOARCH=386 $(GO) test -count=1 -timeout 20m $(PKGS)"; \
	  GOARCH=386 $(GO) test -count=1 -timeout 20m $(PKGS); \
	else echo "skipping the GOARCH=386 tests: this machine does not run 386 binaries"; fi
	@$(MAKE) --no-print-directory fuzz-smoke

# test-deps: the Debian packages some tests drive (redis-cli for the TLS
# test of pmkv serve, nutcracker for the twemproxy test of pmkv), installed
# with apt-get when missing; where that cannot be done (not root, no
# apt-get, no network) the tests that need them skip with a message.
TEST_DEBS := redis-tools:redis-cli nutcracker:nutcracker
test-deps:
	@missing=; for d in $(TEST_DEBS); do command -v $${d#*:} >/dev/null 2>&1 || missing="$$missing $${d%%:*}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing (apt-get)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null 2>&1 || echo "test-deps: apt-get could not install$$missing: the tests that need them skip"; \
	  else echo "test-deps:$$missing missing and not installable here: the tests that need them skip"; fi; \
	fi

bench:
	BRAID_FORCE_PMEM=1 $(GO) test -run '^$$' -bench . -benchtime 1s $(PKGS)

# fptree beside tidwall/btree (DRAM) and bbolt (durable puts), in the
# module bench/fptreepeers (its own go.mod: make test never downloads the
# peers). BRAID_FPTREE_KEYS sets the size of the Get trees (default 10 M);
# BENCH_FPTREE_FLAGS adds go test flags (e.g. -count 5).
BENCH_FPTREE_FLAGS ?= -benchtime 1s
bench-fptree:
	cd bench/fptreepeers && BRAID_FORCE_PMEM=1 $(GO) test -run '^$$' -bench . -timeout 60m $(BENCH_FPTREE_FLAGS) .

# Side-by-side with PMDK (cgo, build tag pmdk): the same patterns through
# persist and libpmem in one process, plus libpmemlog/blk/obj reference
# figures (bench/pmdk). Installs the -dev packages when missing,
# checks that both sides do the same work, then runs the benchmarks in
# PMDK_RUNS (default 5) separate processes — each maps its regions anew, so
# where the kernel and hypervisor happen to place one process's memory does
# not bias every run — keeps the raw output in $(BIN)/bench-pmdk.txt and
# prints braid vs libpmem from it (medians).
bench-pmdk:
	@dpkg -s libpmem-dev libpmemlog-dev libpmemblk-dev libpmemobj-dev >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpmem-dev libpmemlog-dev libpmemblk-dev libpmemobj-dev)
	@mkdir -p $(BIN)
	$(GO) vet -tags pmdk ./bench/pmdk/...
	PMEM_IS_PMEM_FORCE=1 $(GO) test -tags pmdk -count=1 ./bench/pmdk/
	@rm -f $(BIN)/bench-pmdk.txt; n=$${PMDK_RUNS:-5}; for i in $$(seq $$n); do \
	  echo "== run $$i of $$n: PMEM_IS_PMEM_FORCE=1 $(GO) test -tags pmdk -run '^$$' -bench . -benchtime 1s -count 1 ./bench/pmdk/"; \
	  { PMEM_IS_PMEM_FORCE=1 $(GO) test -tags pmdk -run '^$$' -bench . -benchtime 1s -count 1 ./bench/pmdk/; echo $$? > $(BIN)/bench-pmdk.rc; } 2>&1 | tee -a $(BIN)/bench-pmdk.txt; \
	  [ "$$(cat $(BIN)/bench-pmdk.rc)" = 0 ] || exit 1; \
	done; rm -f $(BIN)/bench-pmdk.rc
	@echo
	$(GO) run ./bench/pmdk/compare $(BIN)/bench-pmdk.txt

# Side-by-side with Go's stores (bench/kvpeers, a module of its own: make
# test never builds the peers): the adapters' contract test, then YCSB
# load, A-F on kv, Badger, Pebble, bbolt and goleveldb in one run, with
# 100 B and 1 KiB values, 1 M records, 4 and 16 clients; ops/s with kv's
# ratio to the best peer, bytes on disk (after the load, over the key and
# value bytes loaded, and after the run), reopen after SIGKILL. The table is
# kept in $(BIN)/bench-kv.txt. BENCH_KV_FLAGS adds kvcompare flags (e.g.
# -records 100000 -ops 50000).
BENCH_KV_FLAGS ?=
bench-kv:
	@mkdir -p $(BIN)
	cd bench/kvpeers && $(GO) test -count=1 ./...
	cd bench/kvpeers && $(GO) run ./cmd/kvcompare -records 1000000 -values 100,1024 -clients 4,16 $(BENCH_KV_FLAGS) | tee $(CURDIR)/$(BIN)/bench-kv.txt

# raftstore beside hashicorp/raft-boltdb/v2 and hashicorp/raft-wal
# (bench/raftpeers, a module of its own: make test never downloads the
# peers): the contract test (every store answers as raft-boltdb), then
# cmd/raftcompare — StoreLogs in batches of 1, 16 and 256, GetLog,
# DeleteRange, and a 3-node hashicorp/raft cluster on loopback TCP per
# store (Apply latency, commits/s, the log store's share), the stores
# interleaved over rounds, under /dev/shm. The table is kept in
# $(BIN)/bench-raft.txt. BENCH_RAFT_FLAGS adds raftcompare flags (e.g.
# -rounds 5 -applies 20000).
BENCH_RAFT_FLAGS ?=
bench-raft:
	@mkdir -p $(BIN)
	cd bench/raftpeers && $(GO) test -count=1 ./...
	cd bench/raftpeers && $(GO) run ./cmd/raftcompare -dir $(SHM) $(BENCH_RAFT_FLAGS) | tee $(CURDIR)/$(BIN)/bench-raft.txt

# pmkv serve against a real, durable Redis (appendonly yes, appendfsync
# always) with the real redis-benchmark: SET and GET of 100 B, pipeline 1
# and 16, the servers interleaved (bench/redis/run.sh; RUNS, N, CLIENTS).
# Installs Debian's redis-tools and redis-server when missing.
bench-redis: build
	@command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools redis-server)
	PMKV=$(BIN)/pmkv SHM=$(SHM) sh bench/redis/run.sh | tee $(BIN)/bench-redis.txt

# Redis's own test suite (7.0.15, Debian's source package) in external
# mode against pmkv serve and a redis-server control: tests passed per unit
# (bench/redis/suite.sh; UNITS). Not in make test: it takes minutes.
redis-suite: build
	@command -v redis-cli >/dev/null && command -v redis-server >/dev/null && command -v tclsh >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools redis-server tcl)
	PMKV=$(BIN)/pmkv SHM=$(SHM) CACHE=$(BIN)/redis-suite sh bench/redis/suite.sh | tee $(BIN)/redis-suite.txt

# demo: the main jobs, quickly, on tmpfs: characterize the device (and
# write its profile), then sort 200,000 gensort records with EMS, OnePass
# and MergePass, validating each output, using that profile; then load
# 100,000 records into kv and run YCSB A on them, every read verified.
demo: build
	BRAID_FORCE_PMEM=1 $(BIN)/pmbench -quick -file $(SHM)/braid-demo.pm -profile $(SHM)/braid-profile.json
	BRAID_FORCE_PMEM=1 BRAID_PROFILE=$(SHM)/braid-profile.json $(BIN)/pmsort bench -n 200000 -runs 3 -mpmem 2MiB -dir $(SHM)
	BRAID_PROFILE=$(SHM)/braid-profile.json $(BIN)/pmkv bench -records 100000 -ops 100000 -workloads a -clients 4 -verify -segment 16MiB -device-size 512MiB

FUZZTIME ?= 10s
# A package whose tests do not build fails the target (go test -list's
# error is shown), rather than being skipped as if it had no fuzz targets.
fuzz:
	@pkgs=$$($(GO) list ./...) || exit 1; \
	for pkg in $$pkgs; do \
	  list=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$list"; echo "make fuzz: cannot list the fuzz targets of $$pkg"; exit 1; }; \
	  for f in $$(echo "$$list" | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# fuzz-smoke: every fuzz target of every package for FUZZSMOKE inputs (a
# count, so the work is bounded; the fuzzer's start and its worker processes
# still take a little wall time), so that a fuzzer that no longer builds,
# panics or fails on its seeds or first inputs fails make test. make fuzz
# fuzzes for real.
FUZZSMOKE ?= 200x
# Fuzz targets (dir:Target) that fail now, skipped until their owners fix
# them; each owner removes its entry.
FUZZ_SKIP :=
fuzz-smoke:
	@dirs=$$(grep -l '^func Fuzz' $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go') | xargs -n1 dirname | sort -u); \
	n=0; for d in $$dirs; do \
	  list=$$($(GO) test -list '^Fuzz' ./$$d) || { echo "$$list"; echo "fuzz-smoke: cannot list the fuzz targets of ./$$d"; exit 1; }; \
	  for f in $$(echo "$$list" | grep '^Fuzz'); do \
	    case " $(FUZZ_SKIP) " in *" $$d:$$f "*) echo "fuzz-smoke: skipping ./$$d $$f (FUZZ_SKIP)"; continue;; esac; \
	    out=$$($(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZSMOKE) ./$$d 2>&1) || { echo "$$out"; echo "fuzz-smoke: ./$$d $$f failed"; exit 1; }; \
	    n=$$((n+1)); \
	  done; \
	done; echo "fuzz-smoke: $$n fuzz targets, $(FUZZSMOKE) inputs each: ok"

clean:
	rm -rf $(BIN)
