/*
 * What a server listener holds at most: connect requests rdma_cm has not
 * handed over yet, and connections accepted but not ESTABLISHED (the
 * half-open list of svc_rdma.c).  No dependencies, so the hostile peer
 * that fills these (tests/hostile/hostile_half_open.c) checks the same
 * numbers the server keeps.
 */
#ifndef RPCRDMA_SVC_LISTEN_LIMITS_H
#define RPCRDMA_SVC_LISTEN_LIMITS_H

#define SVC_LISTEN_BACKLOG 16
#define SVC_HALF_OPEN_MAX  SVC_LISTEN_BACKLOG

#endif
