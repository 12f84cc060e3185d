/*
 * Process-wide state about the RDMA devices under our endpoints: the
 * soft-iWARP mmap-key guard, and letting go of a device the kernel is
 * removing.  verbs.c calls in; nothing here is per connection.  All functions are thread-safe and return nothing: what
 * they cannot do only costs what they exist to avoid.
 */
#ifndef RPCRDMA_DEVICES_H
#define RPCRDMA_DEVICES_H

#include <infiniband/verbs.h>

/* Before a process's first CQ on a siw context @verbs (see devices.c). */
void rpcrdma_device_siw_guard(struct ibv_context *verbs);

/*
 * With a process's first rdma_cm event channel: starts the thread that
 * lets go of devices the kernel removes (see devices.c); later calls
 * return at once.  A thread that cannot start is tried again at the next
 * call.
 */
void rpcrdma_device_watch_start(void);

#endif
