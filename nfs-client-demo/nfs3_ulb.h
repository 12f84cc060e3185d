/*
 * nfs3_ulb: the NFS version 3 upper-layer binding for RPC-over-RDMA
 * (RFC 5667 section 4, RFC 8267 section 4), stated through rpcrdma's
 * struct rpcrdma_ulb.
 */
#ifndef NFS_CLIENT_DEMO_NFS3_ULB_H
#define NFS_CLIENT_DEMO_NFS3_ULB_H

#include "rpcrdma/rpcrdma.h"

/*
 * Largest XDR length of every NFSv3 result whose size does not depend on
 * the arguments: CREATE, MKDIR, SYMLINK and MKNOD are the longest at
 * 4 + 72 (post_op_fh3) + 88 (post_op_attr) + 116 (wcc_data) = 280 bytes.
 */
#define NFS3_ULB_SMALL_REPLY_MAX 512u

/* Bytes a READDIR or READDIRPLUS reply may exceed its count by (status, slack for servers). */
#define NFS3_ULB_READDIR_SLACK 512u

extern const struct rpcrdma_ulb nfs3_ulb;

#endif
