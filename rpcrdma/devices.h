/*
 * Process-wide state about the RDMA devices under our endpoints: the
 * soft-iWARP mmap-key guard, and letting go of a device the kernel is
 * removing.  verbs.c calls in; nothing here is per connection.  All
 * functions are thread-safe and report no error: what they cannot do
 * only costs what they exist to avoid.
 */
#ifndef RPCRDMA_DEVICES_H
#define RPCRDMA_DEVICES_H

#include <stdbool.h>

#include <infiniband/verbs.h>

/*
 * An endpoint's hold on the siw key guard of context @verbs (see
 * devices.c): get before its CQ; true if counted, and then put after its
 * queues are destroyed and before its cm id is.
 */
bool rpcrdma_device_siw_guard_get(struct ibv_context *verbs);
void rpcrdma_device_siw_guard_put(struct ibv_context *verbs);

/*
 * With a process's first rdma_cm event channel: starts the thread that
 * lets go of devices the kernel removes (see devices.c); later calls
 * return at once.  A thread that cannot start is tried again at the next
 * call.
 */
void rpcrdma_device_watch_start(void);

#endif
