/*
 * nfs_transfer: moves a whole file between a local descriptor and an
 * NFS file with several READs or WRITEs in flight.  Each of @inflight
 * threads takes the next rsize/wsize range and calls through the
 * session's worker client; memory use is @inflight buffers of one I/O
 * size, whatever the file's size.
 */
#ifndef NFS_CLIENT_DEMO_NFS_TRANSFER_H
#define NFS_CLIENT_DEMO_NFS_TRANSFER_H

#include <stdint.h>

#include "nfs_session.h"
#include "progress.h"

#define NFS_TRANSFER_INFLIGHT_DEFAULT 16u
#define NFS_TRANSFER_INFLIGHT_MAX 64u

struct nfs_transfer_result {
	uint64_t bytes;      /* moved; get: the length of the file's copy in @fd (see below) */
	uint32_t rewrites;   /* put: passes repeated after the server's write verifier changed */
};

/*
 * nfs_transfer_get - READ @size bytes of @fh into @fd (pwrite at the same
 * offsets).  A file that turns out shorter ends the copy there.  A
 * regular @fd is emptied before the first byte is written and in the end
 * holds the file's copy, or after a failure what was copied up to the
 * first byte that was not (@res->bytes; a failure before any READ returned
 * data leaves it untouched).  Returns ok, the first NFS or RPC failure, or
 * NFS_STATUS_LOCAL for @fd's errors.
 */
struct nfs_status nfs_transfer_get(struct nfs_session *s, const struct nfs_fh *fh, int fd,
				   uint64_t size, unsigned int inflight, struct progress *p,
				   struct nfs_transfer_result *res);

/*
 * nfs_transfer_put - WRITE @size bytes of @fd to @fh: UNSTABLE writes,
 * then COMMIT; if the server's write verifier changed meanwhile (it
 * rebooted and may have lost data), everything is written again with
 * FILE_SYNC, and COMMITted if the server answered any of those WRITEs as
 * less stable.  Returns as nfs_transfer_get; NFS3ERR_IO when the server
 * restarted again before that COMMIT; NFS_STATUS_LOCAL EIO when @fd
 * shrank during the copy.
 */
struct nfs_status nfs_transfer_put(struct nfs_session *s, const struct nfs_fh *fh, int fd,
				   uint64_t size, unsigned int inflight, struct progress *p,
				   struct nfs_transfer_result *res);

#endif
