# Integration tests: programs built on the host and run by their *.test
# wrappers inside the soft-RDMA test bed (tests/vm, `make vmtest`).
# Included by the top-level Makefile.
#
# Every tests/integration/NAME.c is one program, $(B)/bin/NAME:
#   rpc_*.c, capture_*.c  link the rdmatest program's rpcgen XDR
#                         (tests/prog/rdmatest.x, header in $(GEN)) and the
#                         shared test code in tests/integration/support/
#   nfs_*.c               link the NFSv3 and MOUNTv3 rpcgen XDR
#                         (nfs-client-demo/{nfs3,mount3}.x, headers in $(GEN))
#   anything else         links only the library and the support code's
#                         libc-only parts: the address parser
#                         (support/rdmatest_addr.c), the MPA stream
#                         follower and the capture rewrite
#                         (support/mpa_stream.c, pcap_reframe.c, also
#                         unit-tested and fuzzed)

# rpc_gss: libtirpc's RPCSEC_GSS headers need the GSS-API ones (libkrb5-dev);
# its test runs a KDC in the test bed (krb5-kdc, kadmin.local from
# krb5-admin-server, kinit from krb5-user).
DEBS += libkrb5-dev krb5-kdc krb5-admin-server krb5-user

INTEG_SRCS := $(sort $(wildcard tests/integration/*.c))
INTEG_BINS := $(INTEG_SRCS:tests/integration/%.c=$(B)/bin/%)

.PHONY: integration-bins
integration-bins: need-pkgs $(INTEG_BINS)

INTEG_RPC_BINS   := $(filter $(B)/bin/rpc_% $(B)/bin/capture_%,$(INTEG_BINS))
INTEG_NFS_BINS   := $(filter $(B)/bin/nfs_%,$(INTEG_BINS))
INTEG_PLAIN_BINS := $(filter-out $(INTEG_RPC_BINS) $(INTEG_NFS_BINS),$(INTEG_BINS))

INTEG_LINK = $(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(GEN) -Itests/integration/support $(PKG_CFLAGS)

# ---- shared code of the rdmatest programs ---------------------------------------------
INTEG_SUPPORT_SRCS := $(sort $(wildcard tests/integration/support/*.c))
INTEG_SUPPORT_HDRS := $(sort $(wildcard tests/integration/support/*.h))
INTEG_SUPPORT_OBJS := $(INTEG_SUPPORT_SRCS:tests/integration/support/%.c=$(B)/obj/integ/%.o)
INTEG_SUPPORT_LIB  := $(B)/obj/integ/libintegsupport.a

$(B)/obj/integ/%.o: tests/integration/support/%.c $(INTEG_SUPPORT_HDRS) $(LIB_HDRS) $(GEN)/rdmatest.h
	@mkdir -p $(@D)
	$(INTEG_LINK) -c $< -o $@

$(INTEG_SUPPORT_LIB): $(INTEG_SUPPORT_OBJS)
	rm -f $@ && ar rcs $@ $^

# The MPA stream follower and the capture rewrite it serves are libc-only:
# the unit tests (tests/unit/test_mpa_stream.c, test_pcap_reframe.c) and
# the fuzz targets compile them in too.
REFRAME_SRCS := $(addprefix tests/integration/support/,mpa_stream.c pcap_reframe.c)
UNIT_EXTRA_SRCS += $(REFRAME_SRCS)
$(UNIT_BIN) $(ASAN_UNIT_BIN) $(FUZZ_BINS): $(REFRAME_SRCS) $(REFRAME_SRCS:.c=.h)

# ---- NFSv3 and MOUNTv3 protocol files (rpcgen) --------------------------------------------
# Generated like tests/prog/rdmatest.x (top-level Makefile); $(GEN)/obj/%_xdr.o
# compiles them with the project's warnings, -Werror, and -Wno-unused-variable
# for rpcgen's unused 'buf'.  `make nfs-xdr` builds just these.
NFS_X        := nfs3 mount3
NFS_XDR_OBJS := $(NFS_X:%=$(GEN)/obj/%_xdr.o)
NFS_XDR_HDRS := $(NFS_X:%=$(GEN)/%.h)

$(GEN)/%.h $(GEN)/%_xdr.c: nfs-client-demo/%.x
	@mkdir -p $(GEN)
	cp $< $(GEN)/$*.x
	cd $(GEN) && rm -f $*.h $*_xdr.c && rpcgen -h -o $*.h $*.x && rpcgen -c -o $*_xdr.c $*.x

.PHONY: nfs-xdr
nfs-xdr: need-pkgs $(NFS_XDR_OBJS)

# ---- the programs -------------------------------------------------------------------------------
INTEG_PLAIN_SUPPORT := rdmatest_addr.o rdmatest_verdict.o mpa_stream.o pcap_reframe.o

$(INTEG_PLAIN_BINS): $(B)/bin/%: tests/integration/%.c $(STATIC_LIB) $(LIB_HDRS) $(INTEG_PLAIN_SUPPORT:%=$(B)/obj/integ/%) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(INTEG_LINK) $< $(INTEG_PLAIN_SUPPORT:%=$(B)/obj/integ/%) $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

$(INTEG_RPC_BINS): $(B)/bin/%: tests/integration/%.c $(STATIC_LIB) $(LIB_HDRS) $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(INTEG_LINK) $< $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

$(INTEG_NFS_BINS): $(B)/bin/%: tests/integration/%.c $(STATIC_LIB) $(LIB_HDRS) $(NFS_XDR_OBJS) $(NFS_XDR_HDRS)
	@mkdir -p $(@D)
	$(INTEG_LINK) $< $(NFS_XDR_OBJS) $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

# The guest runs what the host built (tests/vm/vm.mk reads this list).
VMTEST_DEPS += integration-bins

# ---- the same programs under ASan and UBSan: $(B)/asan/bin/NAME ------------------------
# The robustness tests run the library's peers instrumented (a hostile peer's
# input must not cause a sanitizer report; leaks are found by LeakSanitizer).
ASAN_STATIC_LIB   := $(B)/asan/lib/librpcrdma.a
ASAN_INTEG_BINS   := $(INTEG_SRCS:tests/integration/%.c=$(B)/asan/bin/%)
ASAN_INTEG_RPC    := $(filter $(B)/asan/bin/rpc_% $(B)/asan/bin/capture_%,$(ASAN_INTEG_BINS))
ASAN_INTEG_NFS    := $(filter $(B)/asan/bin/nfs_%,$(ASAN_INTEG_BINS))
ASAN_INTEG_PLAIN  := $(filter-out $(ASAN_INTEG_RPC) $(ASAN_INTEG_NFS),$(ASAN_INTEG_BINS))
ASAN_SUPPORT_OBJS := $(INTEG_SUPPORT_SRCS:tests/integration/support/%.c=$(B)/asan/integ/%.o)
ASAN_INTEG_LINK    = $(CLANG) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) -I$(GEN) -Itests/integration/support $(PKG_CFLAGS)

.PHONY: asan-integration-bins
asan-integration-bins: need-pkgs $(ASAN_INTEG_BINS)

$(ASAN_STATIC_LIB): $(ASAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/asan/integ/%.o: tests/integration/support/%.c $(INTEG_SUPPORT_HDRS) $(LIB_HDRS) $(GEN)/rdmatest.h
	@mkdir -p $(@D)
	$(ASAN_INTEG_LINK) -c $< -o $@

$(ASAN_INTEG_PLAIN): $(B)/asan/bin/%: tests/integration/%.c $(ASAN_STATIC_LIB) $(LIB_HDRS) $(INTEG_PLAIN_SUPPORT:%=$(B)/asan/integ/%) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(ASAN_INTEG_LINK) $< $(INTEG_PLAIN_SUPPORT:%=$(B)/asan/integ/%) $(ASAN_STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

$(ASAN_INTEG_RPC): $(B)/asan/bin/%: tests/integration/%.c $(ASAN_STATIC_LIB) $(LIB_HDRS) $(GEN)/asan/rdmatest_xdr.o $(ASAN_SUPPORT_OBJS) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(ASAN_INTEG_LINK) $< $(GEN)/asan/rdmatest_xdr.o $(ASAN_SUPPORT_OBJS) $(ASAN_STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

$(ASAN_INTEG_NFS): $(B)/asan/bin/%: tests/integration/%.c $(ASAN_STATIC_LIB) $(LIB_HDRS) $(NFS_X:%=$(GEN)/asan/%_xdr.o) $(NFS_XDR_HDRS)
	@mkdir -p $(@D)
	$(ASAN_INTEG_LINK) $< $(NFS_X:%=$(GEN)/asan/%_xdr.o) $(ASAN_STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

VMTEST_DEPS += asan-integration-bins

# ---- rpc_leak under LeakSanitizer alone: $(B)/lsan/bin/rpc_leak -----------------------
# 10,000 connect/call/destroy cycles: ASan's allocator and quarantine make
# each cycle three times slower than the shipped build, LeakSanitizer alone
# (which needs no instrumentation) does not.
LSAN_LEAK_BIN := $(B)/lsan/bin/rpc_leak

.PHONY: lsan-integration-bins
lsan-integration-bins: need-pkgs $(LSAN_LEAK_BIN)

$(LSAN_LEAK_BIN): tests/integration/rpc_leak.c $(STATIC_LIB) $(LIB_HDRS) $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BASE_CFLAGS) -O1 -g -fsanitize=leak -DRPCRDMA_LSAN_BUILD -I$(GEN) -Itests/integration/support $(PKG_CFLAGS) \
	  $< $(GEN)/obj/rdmatest_xdr.o $(INTEG_SUPPORT_LIB) $(STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

VMTEST_DEPS += lsan-integration-bins

# ---- the multi-threaded CLIENT under ThreadSanitizer: $(B)/tsan/bin/NAME ---------------
# tsan_threads.test runs these two, with the library, the rdmatest XDR and
# the support code all built with -fsanitize=thread (clang); any report fails
# it.  Only these: under TSan a call is 20 to 30 times slower in the TCG test
# bed (rpc_basic would take about 150 s per provider).
TSAN_CFLAGS       := $(BASE_CFLAGS) -O1 -g -fsanitize=thread
TSAN_OBJS         := $(LIB_SRCS:%.c=$(B)/tsan/%.o)
TSAN_STATIC_LIB   := $(B)/tsan/lib/librpcrdma.a
TSAN_SUPPORT_OBJS := $(INTEG_SUPPORT_SRCS:tests/integration/support/%.c=$(B)/tsan/integ/%.o)
TSAN_INTEG_BINS   := $(B)/tsan/bin/rpc_threads $(B)/tsan/bin/rpc_reconnect
TSAN_INTEG_LINK    = $(CLANG) $(TSAN_CFLAGS) -I$(GEN) -Itests/integration/support $(PKG_CFLAGS)

.PHONY: tsan-integration-bins
tsan-integration-bins: need-pkgs $(TSAN_INTEG_BINS)

$(B)/tsan/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(TSAN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(TSAN_STATIC_LIB): $(TSAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(GEN)/tsan/%_xdr.o: $(GEN)/%_xdr.c $(GEN)/%.h
	@mkdir -p $(@D)
	$(CLANG) $(TSAN_CFLAGS) $(GEN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(B)/tsan/integ/%.o: tests/integration/support/%.c $(INTEG_SUPPORT_HDRS) $(LIB_HDRS) $(GEN)/rdmatest.h
	@mkdir -p $(@D)
	$(TSAN_INTEG_LINK) -c $< -o $@

$(TSAN_INTEG_BINS): $(B)/tsan/bin/%: tests/integration/%.c $(TSAN_STATIC_LIB) $(LIB_HDRS) $(GEN)/tsan/rdmatest_xdr.o $(TSAN_SUPPORT_OBJS) $(INTEG_SUPPORT_HDRS)
	@mkdir -p $(@D)
	$(TSAN_INTEG_LINK) $< $(GEN)/tsan/rdmatest_xdr.o $(TSAN_SUPPORT_OBJS) $(TSAN_STATIC_LIB) $(PKG_LIBS) -lpthread -o $@

VMTEST_DEPS += tsan-integration-bins
