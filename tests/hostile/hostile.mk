# The hostile peer test tool (issue #7): programs that speak raw
# librdmacm/libibverbs to the library's peers and send them malformed
# RPC-over-RDMA.  Included by the top-level Makefile.
#
#   $(B)/hostile/libhostile.a  the core, tests/hostile/raw_peer.c (never links
#                              the library under test)
#   $(B)/bin/hostile_*         each tests/hostile/hostile_*.c, linked with the
#                              core and rdma-core only
#
# Built with clang under ASan+UBSan like the victims they attack, so a bug in
# the tool itself is caught too.

HOSTILE_CORE_SRCS := tests/hostile/raw_peer.c
HOSTILE_CORE_HDRS := tests/hostile/raw_peer.h
HOSTILE_CORE_OBJS := $(HOSTILE_CORE_SRCS:tests/hostile/%.c=$(B)/hostile/%.o)
HOSTILE_CORE_LIB  := $(B)/hostile/libhostile.a
HOSTILE_SRCS      := $(sort $(wildcard tests/hostile/hostile_*.c))
HOSTILE_BINS      := $(HOSTILE_SRCS:tests/hostile/%.c=$(B)/bin/%)
HOSTILE_CC         = $(CLANG) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) -Itests/hostile
HOSTILE_LIBS      := -lrdmacm -libverbs

.PHONY: hostile-bins
hostile-bins: $(HOSTILE_CORE_LIB) $(HOSTILE_BINS)

$(B)/hostile/%.o: tests/hostile/%.c $(HOSTILE_CORE_HDRS)
	@mkdir -p $(@D)
	$(HOSTILE_CC) -c $< -o $@

$(HOSTILE_CORE_LIB): $(HOSTILE_CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(HOSTILE_BINS): $(B)/bin/%: tests/hostile/%.c $(HOSTILE_CORE_LIB) $(HOSTILE_CORE_HDRS)
	@mkdir -p $(@D)
	$(HOSTILE_CC) $< $(HOSTILE_CORE_LIB) $(HOSTILE_LIBS) -o $@

# It floods a listener up to the server's own limits.
$(B)/bin/hostile_half_open: rpcrdma/svc_listen_limits.h

VMTEST_DEPS += hostile-bins

# hostile_server (the malicious server, tests/integration/hostile_server.test
# and keys.test) attacks the ASan+UBSan build of the rdmatest client
# tests/integration/rpc_victim_client.c.
hostile-bins: $(B)/asan/bin/rpc_victim_client
