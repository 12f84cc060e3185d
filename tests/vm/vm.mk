# Soft-RDMA test bed (tests/vm/README.md).  Included by the top-level Makefile.
#
#   make vm-provision   download/build the guest kernel, siw.ko and initramfs
#                       into $(B)/vm (vmrun also does this on first use)
#   make vmtest-smoke   smoke checks on rxe and siw (ibv_devinfo, rping,
#                       NFS over RDMA with the kernel client and server)
#   make vmtest         smoke checks + tests/integration/*.test on rxe and siw
#   make vm-clean       remove $(B)/vm (not part of `make clean`)
#
# Variables: VMTEST_PROVIDERS (default "rxe siw"), VMTEST_TIMEOUT (seconds per
# VM), VMTEST_DEPS (targets to build before `make vmtest`, e.g. test binaries).

# Host packages the test bed needs (the guest runs the host's /usr over 9p).
# The guest kernel, its headers and kbuild are not installed on the host:
# tests/vm/provision fetches them with `apt-get download` into $(B)/vm.
DEBS += qemu-system-x86 busybox-static kmod cpio xz-utils iproute2 util-linux \
        gcc-12 libelf1 libssl3 linux-source-6.1 patch \
        rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest \
        rpcbind nfs-kernel-server nfs-common tcpdump tshark

VM_DIR           := $(abspath $(B)/vm)
VMTEST_PROVIDERS ?= rxe siw
VMTEST_DEPS      ?=
VMTEST_ARGS       = $(foreach p,$(VMTEST_PROVIDERS),--rdma $(p)) \
                    $(if $(VMTEST_TIMEOUT),--timeout $(VMTEST_TIMEOUT))

.PHONY: vm-provision vmtest-smoke vmtest vm-clean

vm-provision:
	@VMRUN_DIR=$(VM_DIR) tests/vm/provision >/dev/null

vmtest-smoke: vm-provision
	@VMRUN_DIR=$(VM_DIR) tests/vm/vmtest --smoke $(VMTEST_ARGS)

vmtest: vm-provision $(VMTEST_DEPS)
	@VMRUN_DIR=$(VM_DIR) tests/vm/vmtest $(VMTEST_ARGS)

vm-clean:
	rm -rf $(VM_DIR)
