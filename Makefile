# rpcrdma: ONC RPC over RDMA for libtirpc.
#
# Outputs go under build/.  Variants:
#   build/obj    the shipped library (gcc, -O2)
#   build/asan   the same sources and the unit tests under ASan+UBSan (clang)
#   build/fuzz   libFuzzer targets (clang, ASan+UBSan)
#   build/tsan   the library and the multi-threaded integration programs under
#                ThreadSanitizer (clang; tests/integration/integration.mk)
#   build/lsan   rpc_leak under LeakSanitizer alone (the same file)
#   build/hostile the hostile peers' core (tests/hostile/hostile.mk)
# `make clean` removes these, build/lib, build/bin and the generated code;
# not the test bed (build/vm: `make vm-clean`).

PREFIX   ?= /usr/local
DESTDIR  ?=
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
MANDIR   ?= $(PREFIX)/share/man

VERSION       := 0.1.0
SOVERSION     := 0
B             := build

CC            ?= cc
CLANG         ?= clang
PKG_CONFIG    ?= pkg-config
PKGS          := libtirpc libibverbs librdmacm

# Debian packages `make deps` installs.  tests/vm/vm.mk appends the test bed's.
DEBS := make gcc g++ clang libclang-rt-14-dev pkg-config rpcsvc-proto \
        libtirpc-dev libibverbs-dev librdmacm-dev libcriterion-dev

WARN          := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
                 -Wmissing-prototypes -Wpointer-arith -Wvla
BASE_CFLAGS   := -std=c11 -D_GNU_SOURCE -I. $(WARN)
PKG_CFLAGS     = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS       = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CFLAGS        ?= -O2 -g
SAN_FLAGS     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                 -fno-omit-frame-pointer

LIB_SRCS      := $(sort $(wildcard xdr/*.c cm-private/*.c rpcrdma/*.c))
LIB_HDRS      := $(sort $(wildcard xdr/*.h cm-private/*.h rpcrdma/*.h))
# What `make install` ships: the API; the rest are the library's internals.
PUBLIC_HDRS   := rpcrdma/rpcrdma.h rpcrdma/netconfig.h rpcrdma/rpcbind.h
UNIT_SRCS     := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES    := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))

LIB_OBJS      := $(LIB_SRCS:%.c=$(B)/obj/%.o)
ASAN_OBJS     := $(LIB_SRCS:%.c=$(B)/asan/%.o)
FUZZ_OBJS     := $(LIB_SRCS:%.c=$(B)/fuzz/%.o)

STATIC_LIB    := $(B)/lib/librpcrdma.a
SHARED_LIB    := $(B)/lib/librpcrdma.so.$(VERSION)
UNIT_BIN      := $(B)/bin/unit-tests
ASAN_UNIT_BIN := $(B)/asan/unit-tests
FUZZ_BINS     := $(FUZZ_NAMES:%=$(B)/fuzz/fuzz-%)

FUZZ_SECONDS       ?= 60
CHECK_FUZZ_SECONDS ?= 10

.PHONY: all lib deps need-build-pkgs need-pkgs check unit-tests asan-tests fuzz fuzz-check \
        abi-check install uninstall uninstall-lib clean
all: lib

lib: need-build-pkgs $(STATIC_LIB) $(SHARED_LIB)

# ---- dependencies -----------------------------------------------------------
deps:
	@missing=$$(for p in $(DEBS); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	  done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEBS)) Debian packages are installed"; exit 0; fi; \
	echo "deps: installing:" $$missing; \
	if [ "$$(id -u)" != 0 ]; then echo "deps: must run as root (apt-get)" >&2; exit 1; fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get -o DPkg::Lock::Timeout=600 update -q && \
	apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $$missing

# need-build-pkgs: what building the library and the demo needs (make
# install); need-pkgs: that and what the tests and fuzzers need too.
need-build-pkgs:
	@command -v $(PKG_CONFIG) >/dev/null || { echo "error: '$(PKG_CONFIG)' not found; run 'make deps' (Debian: pkg-config)" >&2; exit 1; }
	@for p in $(PKGS); do \
	  $(PKG_CONFIG) --exists $$p || { \
	    echo "error: pkg-config cannot find '$$p'; run 'make deps' (Debian: $$p-dev)" >&2; exit 1; }; \
	done
	@command -v rpcgen >/dev/null || { echo "error: 'rpcgen' not found; run 'make deps' (Debian: rpcsvc-proto)" >&2; exit 1; }

need-pkgs: need-build-pkgs
	@$(PKG_CONFIG) --exists criterion || { \
	  echo "error: pkg-config cannot find 'criterion'; run 'make deps' (Debian: libcriterion-dev)" >&2; exit 1; }
	@command -v $(CLANG) >/dev/null || { echo "error: '$(CLANG)' not found; run 'make deps' (Debian: clang)" >&2; exit 1; }
	@test -f "$$($(CLANG) -print-file-name=libclang_rt.fuzzer-x86_64.a)" || \
	  { echo "error: libFuzzer runtime not found; run 'make deps' (Debian: libclang-rt-14-dev)" >&2; exit 1; }

# ---- library ----------------------------------------------------------------
$(B)/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=default $(PKG_CFLAGS) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

# Only the installed headers' functions are exported (rpcrdma/librpcrdma.map).
# -z nodelete: the device removal watcher thread (rpcrdma/devices.c) never
# ends, so a dlclose() must leave its code mapped.
SYMBOL_MAP    := rpcrdma/librpcrdma.map

$(SHARED_LIB): $(LIB_OBJS) $(SYMBOL_MAP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,librpcrdma.so.$(SOVERSION) -Wl,--version-script=$(SYMBOL_MAP) \
	    -Wl,-z,nodelete -o $@ $(LIB_OBJS) $(PKG_LIBS)
	ln -sf librpcrdma.so.$(VERSION) $(B)/lib/librpcrdma.so.$(SOVERSION)
	ln -sf librpcrdma.so.$(SOVERSION) $(B)/lib/librpcrdma.so

# ---- test RPC program (rpcgen) -------------------------------------------------
# rpcgen's output declares an unused 'buf' in every routine; that one warning
# is off for generated code only.
GEN           := $(B)/gen
GEN_CFLAGS    := -I$(GEN) -Wno-unused-variable

$(GEN)/%.h $(GEN)/%_xdr.c: tests/prog/%.x
	@mkdir -p $(GEN)
	cp $< $(GEN)/$*.x
	cd $(GEN) && rm -f $*.h $*_xdr.c && rpcgen -h -o $*.h $*.x && rpcgen -c -o $*_xdr.c $*.x

$(GEN)/obj/%_xdr.o: $(GEN)/%_xdr.c $(GEN)/%.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -fPIC $(GEN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(GEN)/asan/%_xdr.o: $(GEN)/%_xdr.c $(GEN)/%.h
	@mkdir -p $(@D)
	$(CLANG) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) $(GEN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# ---- unit tests (Criterion) ---------------------------------------------------
# nfs-client-demo/build.mk adds the demo's I/O-free modules to the unit tests
# and fuzz targets (UNIT_EXTRA_SRCS, UNIT_EXTRA_CFLAGS), and to the unit tests
# alone the ones whose session calls a test supplies (UNIT_ONLY_SRCS).
CRIT_LIBS = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)

# rpcgen XDR the unit tests and fuzz targets link: the test program's, and NFSv3's (the demo's procedures)
UNIT_XDR := rdmatest nfs3

$(UNIT_BIN): $(UNIT_SRCS) $(STATIC_LIB) $(UNIT_XDR:%=$(GEN)/obj/%_xdr.o) tests/unit/*.h
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(GEN) $(UNIT_EXTRA_CFLAGS) $(PKG_CFLAGS) $(UNIT_SRCS) $(UNIT_EXTRA_SRCS) $(UNIT_ONLY_SRCS) $(UNIT_XDR:%=$(GEN)/obj/%_xdr.o) $(STATIC_LIB) $(PKG_LIBS) $(CRIT_LIBS) -lpthread -o $@

$(B)/asan/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) $(PKG_CFLAGS) -c $< -o $@

$(ASAN_UNIT_BIN): $(UNIT_SRCS) $(ASAN_OBJS) $(UNIT_XDR:%=$(GEN)/asan/%_xdr.o) tests/unit/*.h
	@mkdir -p $(@D)
	$(CLANG) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) -I$(GEN) $(UNIT_EXTRA_CFLAGS) $(PKG_CFLAGS) $(UNIT_SRCS) $(UNIT_EXTRA_SRCS) $(UNIT_ONLY_SRCS) $(UNIT_XDR:%=$(GEN)/asan/%_xdr.o) $(ASAN_OBJS) $(PKG_LIBS) $(CRIT_LIBS) -lpthread -o $@

unit-tests: need-pkgs $(UNIT_BIN)
	$(UNIT_BIN) --jobs 2

asan-tests: need-pkgs $(ASAN_UNIT_BIN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(ASAN_UNIT_BIN) --jobs 2

# ---- fuzzing (libFuzzer) ------------------------------------------------------
FUZZ_CFLAGS := $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS)

$(B)/fuzz/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c $< -o $@

$(GEN)/fuzz/%_xdr.o: $(GEN)/%_xdr.c $(GEN)/%.h
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(GEN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(B)/fuzz/fuzz-%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) $(UNIT_XDR:%=$(GEN)/fuzz/%_xdr.o) tests/unit/*.h
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -I$(GEN) $(UNIT_EXTRA_CFLAGS) $(PKG_CFLAGS) $< $(UNIT_EXTRA_SRCS) $(FUZZ_OBJS) $(UNIT_XDR:%=$(GEN)/fuzz/%_xdr.o) $(PKG_LIBS) -o $@

# Each target runs from its seed corpus (read-only) with new inputs kept in build/.
fuzz: need-pkgs $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-fuzzers $(B)/fuzz $(FUZZ_NAMES)

fuzz-check: need-pkgs $(FUZZ_BINS)
	@FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) tests/fuzz/run-fuzzers $(B)/fuzz $(FUZZ_NAMES)

# ---- the whole suite ------------------------------------------------------------
check: deps
	$(MAKE) lib
	$(MAKE) abi-check
	$(MAKE) man-check
	$(MAKE) unit-tests
	$(MAKE) asan-tests
	$(MAKE) fuzz-check
	$(MAKE) vmtest

# ---- the shared library's interface ---------------------------------------------------
# and a C++ program using the installed headers compiles, links and runs.
abi-check: $(SHARED_LIB)
	tests/abi/exports.sh $(SHARED_LIB) $(PUBLIC_HDRS)
	@mkdir -p $(B)/abi
	$(CXX) -std=c++11 -pedantic-errors -Wall -Wextra -Werror -I. $(PKG_CFLAGS) tests/abi/cxx_consumer.cc \
	    $(SHARED_LIB) $(PKG_LIBS) -o $(B)/abi/cxx_consumer
	LD_LIBRARY_PATH=$(B)/lib $(B)/abi/cxx_consumer && echo "abi-check: the headers build a C++11 program"

# ---- install ----------------------------------------------------------------------
# ldconfig when root installs into (or removes from) a directory listed in ld.so.conf.
LDCONFIG_IF_LISTED = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
	sed 's/[[:space:]]*$$//; s|/*$$||' /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null | \
	grep -qxF "$(patsubst %/,%,$(LIBDIR))"; then echo ldconfig; ldconfig; fi
install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/rpcrdma
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf librpcrdma.so.$(VERSION) $(DESTDIR)$(LIBDIR)/librpcrdma.so.$(SOVERSION)
	ln -sf librpcrdma.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/librpcrdma.so
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCDIR)/rpcrdma/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' rpcrdma/rpcrdma.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/rpcrdma.pc
	@# The loader finds a library in a directory of ld.so.conf (Debian: /usr/local/lib)
	@# through its cache only: refreshed, as a package's postinst would, by root's real install.
	@$(LDCONFIG_IF_LISTED)

# Exactly what install put there: other versions and other files in the directories stay.
uninstall: uninstall-lib
	@$(LDCONFIG_IF_LISTED)

uninstall-lib:
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,librpcrdma.a librpcrdma.so librpcrdma.so.$(SOVERSION) \
	    librpcrdma.so.$(VERSION)) $(DESTDIR)$(LIBDIR)/pkgconfig/rpcrdma.pc
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/rpcrdma/,$(notdir $(PUBLIC_HDRS)))
	rmdir $(DESTDIR)$(INCDIR)/rpcrdma 2>/dev/null || true

clean:
	rm -rf $(B)/obj $(B)/asan $(B)/lsan $(B)/fuzz $(B)/tsan $(B)/hostile $(B)/lib $(B)/bin $(B)/gen $(B)/abi

include docs/docs.mk
-include nfs-client-demo/demo.mk
-include tests/integration/integration.mk
include nfs-client-demo/build.mk
-include bench/bench.mk
-include tests/hostile/hostile.mk
-include tests/vm/vm.mk
