# Integration tests: programs built on the host and run by their *.test
# wrappers inside the soft-RDMA test bed (tests/vm, `make vmtest`).
# Included by the top-level Makefile.

INTEG_SRCS := $(sort $(wildcard tests/integration/*.c))
INTEG_BINS := $(INTEG_SRCS:tests/integration/%.c=$(B)/bin/%)

.PHONY: integration-bins
integration-bins: need-pkgs $(INTEG_BINS)

# Programs that use the rdmatest program (tests/prog/rdmatest.x) link its
# rpcgen XDR routines and see its header in $(GEN).
INTEG_RPC_BINS   := $(filter $(B)/bin/rpc_%,$(INTEG_BINS))
INTEG_PLAIN_BINS := $(filter-out $(INTEG_RPC_BINS),$(INTEG_BINS))

$(INTEG_PLAIN_BINS): $(B)/bin/%: tests/integration/%.c $(STATIC_LIB) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) $< $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

$(INTEG_RPC_BINS): $(B)/bin/%: tests/integration/%.c $(STATIC_LIB) $(LIB_HDRS) $(GEN)/obj/rdmatest_xdr.o
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(GEN) $(PKG_CFLAGS) $< $(GEN)/obj/rdmatest_xdr.o $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

# The guest runs what the host built (tests/vm/vm.mk reads this list).
VMTEST_DEPS += integration-bins
