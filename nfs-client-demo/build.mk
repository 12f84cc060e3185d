# nfs-client-demo: the NFSv3 demo client (nfs-client-demo/*.c), linked
# with the library and the rpcgen XDR of nfs3.x and mount3.x
# (tests/integration/integration.mk generates those).  Included by the
# top-level Makefile.
#
#   make demo-bin   builds $(B)/bin/nfs-client-demo
#
# DEMO_CORE are the modules without I/O that the unit tests and fuzz
# targets link; DEMO_PROCS the procedures the unit tests also link.

DEMO_SRCS      := $(sort $(wildcard nfs-client-demo/*.c))
DEMO_HDRS      := $(sort $(wildcard nfs-client-demo/*.h))
DEMO_OBJS      := $(DEMO_SRCS:%.c=$(B)/obj/%.o)
DEMO_BIN       := $(B)/bin/nfs-client-demo
DEMO_CORE      := nfs-client-demo/nfs_url.c nfs-client-demo/nfs_status.c \
                  nfs-client-demo/nfs3_ulb.c nfs-client-demo/progress.c \
                  nfs-client-demo/nfs_dirlist.c
# The NFS procedures do no I/O of their own: they call through the CLIENT
# they are given, so the unit tests drive them with a scripted one.
DEMO_PROCS     := nfs-client-demo/nfs_proc.c nfs-client-demo/nfs_readdir.c \
                  nfs-client-demo/nfs_path.c nfs-client-demo/nfs_mount.c
DEMO_CFLAGS     = -I$(GEN) -Infs-client-demo

$(B)/obj/nfs-client-demo/%.o: nfs-client-demo/%.c $(DEMO_HDRS) $(LIB_HDRS) $(NFS_XDR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(DEMO_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(DEMO_BIN): $(DEMO_OBJS) $(NFS_XDR_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(DEMO_OBJS) $(NFS_XDR_OBJS) $(STATIC_LIB) $(PKG_LIBS) -lpthread

.PHONY: demo-bin
demo-bin: need-build-pkgs $(DEMO_BIN)

VMTEST_DEPS += demo-bin

# The pipelined copy, whose worker clients (nfs_session.c, which
# connects) tests/unit/test_nfs_transfer.c supplies.
DEMO_TRANSFER  := nfs-client-demo/nfs_transfer.c

# DEMO_CORE and DEMO_PROCS are compiled into the unit tests and fuzz targets
# (tests/unit/test_nfs_*.c, test_progress.c, tests/fuzz/fuzz_nfs_*.c),
# DEMO_TRANSFER into the unit tests only.
UNIT_EXTRA_SRCS    += $(DEMO_CORE) $(DEMO_PROCS)
UNIT_ONLY_SRCS     += $(DEMO_TRANSFER)
UNIT_EXTRA_CFLAGS  += -Infs-client-demo
$(UNIT_BIN) $(ASAN_UNIT_BIN) $(FUZZ_BINS): $(DEMO_CORE) $(DEMO_PROCS) $(DEMO_HDRS) $(NFS_XDR_HDRS)
$(UNIT_BIN) $(ASAN_UNIT_BIN): $(DEMO_TRANSFER)
