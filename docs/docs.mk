# Documentation: the manual pages (docs/man/man1: nfs-client-demo; man3: the
# library) and the README's example program (docs/examples).  Included by the top-level
# Makefile before tests/vm/vm.mk (which reads VMTEST_DEPS).
#
#   make man-check     lint every page (groff -ww, man -l, mandoc -Tlint if
#                      installed); each .so page must name an existing page
#   make install       also installs the pages into $(MANDIR)/man1 and man3
#   make example-bins  builds $(B)/examples/hello_server and hello_client with
#                      the project's flags, and $(B)/examples/readme/* with
#                      the README's commands against a scratch install

# groff (man-check) and mandoc (its -Tlint pass).
DEBS += groff-base man-db mandoc

MAN1_PAGES := $(sort $(wildcard docs/man/man1/*.1))
MAN3_PAGES := $(sort $(wildcard docs/man/man3/*.3))
MAN_PAGES  := $(MAN1_PAGES) $(MAN3_PAGES)

.PHONY: man-check install-man uninstall-man example-bins
.PRECIOUS: $(B)/examples/%.h $(B)/examples/%_xdr.c $(B)/examples/%_svc.c $(B)/examples/%_clnt.c

man-check:
	@command -v groff >/dev/null || { echo "error: 'groff' not found; run 'make deps' (Debian: groff-base)" >&2; exit 1; }
	@fail=0; \
	for p in $(MAN_PAGES); do \
	  if head -n 1 $$p | grep -q '^\.so '; then \
	    t=$$(sed -n 's/^\.so //p' $$p); \
	    if [ "$$(wc -l < $$p)" != 1 ] || [ ! -f docs/man/$$t ]; then \
	      echo "man-check: $$p: must be one line '.so manN/PAGE.N' naming an existing page" >&2; fail=1; fi; \
	    continue; \
	  fi; \
	  out=$$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z $$p 2>&1); \
	  if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: groff: |" >&2; fail=1; fi; \
	  out=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $$p 2>&1 >/dev/null); \
	  if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: man -l: $$p: |" >&2; fail=1; fi; \
	  if command -v mandoc >/dev/null; then \
	    out=$$(cd docs/man && mandoc -Tlint -W style $${p#docs/man/} 2>&1); \
	    if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: |" >&2; fail=1; fi; \
	  fi; \
	done; \
	command -v mandoc >/dev/null || echo "man-check: mandoc not installed: its lint pass skipped"; \
	[ $$fail = 0 ] && echo "man-check: $(words $(MAN_PAGES)) pages clean ($(words $(MAN1_PAGES)) in man1, $(words $(MAN3_PAGES)) in man3)"

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	$(if $(MAN1_PAGES),install -m 644 $(MAN1_PAGES) $(DESTDIR)$(MANDIR)/man1/)
	install -m 644 $(MAN3_PAGES) $(DESTDIR)$(MANDIR)/man3/

uninstall-man:
	rm -f $(patsubst docs/man/%,$(DESTDIR)$(MANDIR)/%,$(MAN_PAGES))

install: install-man
uninstall: uninstall-man

# ---- the README's example (docs/examples, run by tests/integration/readme_example.test) ----
# Built like a user would (rpcgen -h/-c/-m/-l), with the project's warnings
# for the hand-written files; rpcgen's own output gets GEN_CFLAGS plus the
# two warnings its -m server stub trips (no prototype for the dispatch
# function, xdr_void cast to xdrproc_t).
EX            := $(B)/examples
EX_GEN_CFLAGS := $(GEN_CFLAGS) -I$(EX) -Wno-missing-prototypes -Wno-cast-function-type

$(EX)/%.h $(EX)/%_xdr.c $(EX)/%_svc.c $(EX)/%_clnt.c: docs/examples/%.x
	@mkdir -p $(EX)
	cp $< $(EX)/$*.x
	cd $(EX) && rm -f $*.h $*_xdr.c $*_svc.c $*_clnt.c && \
	  rpcgen -h -o $*.h $*.x && rpcgen -c -o $*_xdr.c $*.x && \
	  rpcgen -m -o $*_svc.c $*.x && rpcgen -l -o $*_clnt.c $*.x

$(EX)/%.o: $(EX)/%.c $(EX)/hello.h
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(EX_GEN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(EX)/hello_server: docs/examples/hello_server.c $(EX)/hello_svc.o $(EX)/hello_xdr.o $(STATIC_LIB) $(LIB_HDRS)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(EX) $(PKG_CFLAGS) $< $(EX)/hello_svc.o $(EX)/hello_xdr.o $(STATIC_LIB) $(PKG_LIBS) -o $@

$(EX)/hello_client: docs/examples/hello_client.c $(EX)/hello_clnt.o $(EX)/hello_xdr.o $(STATIC_LIB) $(LIB_HDRS)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(EX) $(PKG_CFLAGS) $< $(EX)/hello_clnt.o $(EX)/hello_xdr.o $(STATIC_LIB) $(PKG_LIBS) -o $@

# The README's build commands (docs/examples/build.sh) as a user runs them:
# against `make install` into a scratch prefix, with its pkg-config file;
# the binaries use the installed shared library (LD_LIBRARY_PATH).
EX_ABS := $(abspath $(EX))

$(EX)/readme.stamp: docs/examples/build.sh docs/examples/hello.x docs/examples/hello_server.c \
                    docs/examples/hello_client.c rpcrdma/rpcrdma.pc.in $(STATIC_LIB) $(SHARED_LIB) $(LIB_HDRS)
	rm -rf $(EX)/prefix $(EX)/readme $@
	mkdir -p $(EX) && $(MAKE) --no-print-directory install PREFIX=$(EX_ABS)/prefix DESTDIR= >$(EX)/install.log
	mkdir -p $(EX)/readme
	cp docs/examples/hello.x docs/examples/hello_server.c docs/examples/hello_client.c $(EX)/readme/
	cd $(EX)/readme && PKG_CONFIG_PATH=$(EX_ABS)/prefix/lib/pkgconfig sh -ex $(abspath docs/examples/build.sh)
	touch $@

example-bins: need-pkgs $(EX)/hello_server $(EX)/hello_client $(EX)/readme.stamp

VMTEST_DEPS += example-bins

.PHONY: clean-examples
clean-examples:
	rm -rf $(EX)
clean: clean-examples
