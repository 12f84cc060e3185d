# The NFS demo (README "Try it"): `make demo` copies a file to the Linux
# kernel NFS server and back over RPC-over-RDMA with nfs-client-demo, in the
# soft-RDMA test bed (tests/vm, soft-iWARP).  Included by the top-level
# Makefile; the program's build rules (demo-bin) are in nfs-client-demo/build.mk.
#
#   make demo           install the Debian packages that are missing (make deps,
#                       as `make check` does), build build/bin/nfs-client-demo if
#                       needed, provision the test bed, and run
#                       nfs-client-demo/demo-guest in a VM with the kernel NFS
#                       server (exit status: the demo's)
#   make install        also installs nfs-client-demo into $(BINDIR)

BINDIR       ?= $(PREFIX)/bin
DEMO_TIMEOUT ?= 900

.PHONY: demo install-demo uninstall-demo

demo: deps
	@$(MAKE) --no-print-directory demo-bin
	@echo "demo: checking the soft-RDMA test bed (the first run provisions it: about 85 MB of Debian kernel packages and siw.ko, about a minute)"
	@$(MAKE) --no-print-directory vm-provision
	@echo "demo: booting a VM with soft-iWARP and the kernel NFS server (tests/vm/vmrun --rdma siw --nfsd)"
	@VMRUN_DIR=$(VM_DIR) tests/vm/vmrun --rdma siw --nfsd --timeout $(DEMO_TIMEOUT) -- nfs-client-demo/demo-guest

install-demo: demo-bin
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(B)/bin/nfs-client-demo $(DESTDIR)$(BINDIR)/

uninstall-demo:
	rm -f $(DESTDIR)$(BINDIR)/nfs-client-demo

install: install-demo
uninstall: uninstall-demo
