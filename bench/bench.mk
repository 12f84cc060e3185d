# Benchmarks (issue 6): `make bench` runs bench/bench-guest in the soft-RDMA
# test bed once per provider (tests/vm/vmrun --rdma P --nfsd) and gathers the
# figures on the host into bench/results.json, bench/results.md and PNG plots
# (bench/*.png, gnuplot).  See docs/performance.md.  Included by the top-level
# Makefile before tests/vm/vm.mk.
#
#   make bench          deps, build, run both providers, write the results
#
# Variables: BENCH_PROVIDERS (default "siw rxe"), BENCH_RUNS (runs per figure,
# default 5, at least 5 for published figures), BENCH_SIZE_MIB (file size of
# the NFS READ/WRITE figures, default 256), BENCH_TIMEOUT (seconds per VM).

DEBS += libnfs-utils gnuplot-nox time python3

BENCH_PROVIDERS ?= siw rxe
BENCH_RUNS      ?= 5
BENCH_SIZE_MIB  ?= 256
BENCH_TIMEOUT   ?= 1500
BENCH_OUT       ?= bench

.PHONY: bench bench-bins

RPC_BENCH_BIN   := $(B)/bin/rpc_bench

bench-bins: need-pkgs $(DEMO_BIN) $(RPC_BENCH_BIN)

# The rdmatest program over RDMA or libtirpc TCP (items 3 and 5), linked like
# the integration tests' rpc_* programs (tests/integration/integration.mk).
$(RPC_BENCH_BIN): bench/rpc_bench.c $(STATIC_LIB) $(LIB_HDRS) $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(INTEG_LINK) $< $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

bench: deps
	@$(MAKE) --no-print-directory bench-bins
	@$(MAKE) --no-print-directory vm-provision
	@BENCH_PROVIDERS="$(BENCH_PROVIDERS)" BENCH_RUNS=$(BENCH_RUNS) BENCH_SIZE_MIB=$(BENCH_SIZE_MIB) \
	  BENCH_TIMEOUT=$(BENCH_TIMEOUT) BENCH_OUT=$(BENCH_OUT) VMRUN_DIR=$(VM_DIR) bench/run-bench
