# Documentation: the section 3 manual pages (docs/man/man3).
# Included by the top-level Makefile.
#
#   make man-check     lint every page (groff -ww, man -l, mandoc -Tlint if
#                      installed); each .so page must name an existing page
#   make install       also installs the pages into $(MANDIR)/man3

# groff (man-check) and mandoc (its -Tlint pass).
DEBS += groff-base man-db mandoc

MAN3_PAGES := $(sort $(wildcard docs/man/man3/*.3))

.PHONY: man-check install-man uninstall-man

man-check:
	@command -v groff >/dev/null || { echo "error: 'groff' not found; run 'make deps' (Debian: groff-base)" >&2; exit 1; }
	@fail=0; \
	for p in $(MAN3_PAGES); do \
	  if head -n 1 $$p | grep -q '^\.so '; then \
	    t=$$(sed -n 's/^\.so //p' $$p); \
	    if [ "$$(wc -l < $$p)" != 1 ] || [ ! -f docs/man/$$t ]; then \
	      echo "man-check: $$p: must be one line '.so man3/PAGE.3' naming an existing page" >&2; fail=1; fi; \
	    continue; \
	  fi; \
	  out=$$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z $$p 2>&1); \
	  if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: groff: |" >&2; fail=1; fi; \
	  out=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $$p 2>&1 >/dev/null); \
	  if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: man -l: $$p: |" >&2; fail=1; fi; \
	  if command -v mandoc >/dev/null; then \
	    out=$$(cd docs/man && mandoc -Tlint -W style man3/$${p##*/} 2>&1); \
	    if [ -n "$$out" ]; then echo "$$out" | sed "s|^|man-check: |" >&2; fail=1; fi; \
	  fi; \
	done; \
	command -v mandoc >/dev/null || echo "man-check: mandoc not installed: its lint pass skipped"; \
	[ $$fail = 0 ] && echo "man-check: $(words $(MAN3_PAGES)) pages clean"

install-man:
	install -d $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(MAN3_PAGES) $(DESTDIR)$(MANDIR)/man3/

uninstall-man:
	rm -f $(patsubst docs/man/man3/%,$(DESTDIR)$(MANDIR)/man3/%,$(MAN3_PAGES))

install: install-man
uninstall: uninstall-man
