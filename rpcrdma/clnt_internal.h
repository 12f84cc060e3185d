/*
 * State shared by the CLIENT's files: clnt_rdma.c (clnt_ops, creation,
 * the steps of a call and its retries), clnt_marshal.c (one call's
 * bytes: marshalling, planning, its buffer, header and decoding) and
 * clnt_conn.c (connections, slots, completions, waiting, reconnect).
 *
 * Locking: one mutex per CLIENT (ct->lock) guards everything here
 * except what a call owns alone while it marshals or decodes, and the
 * XID, program and version, which are atomics: a call takes the lock
 * first when it has marshalled its arguments.  A call's Send is queued
 * under the lock and posted without it, by one thread at a time for
 * every call queued meanwhile (conn->posting).  One
 * waiting thread at a time is the connection's poller: it sleeps in
 * poll() without the lock and dispatches completions with it; the
 * others sleep on their call's semaphore.  A call is woken
 * (clnt_call_wake) with the lock held but its semaphore is posted only
 * after the lock is released (clnt_rdma_unlock), so the woken thread
 * does not at once block on the mutex its waker still holds; a call
 * woken with its reply and no revocation to wait for finishes without
 * retaking it (CLNT_CONN_REPLIED_UNLOCKED): it revokes its chunk buffer
 * if it has one (a per-call registration dropped, or a key the server
 * invalidated), decodes, reposts its receive and gives back its buffer,
 * slot and credit (clnt_conn_detach_unlocked).  For that
 * a slot's `busy`, the credits' `outstanding`, the connection's `refs`
 * and ct->credit_waiters are atomics, the waker unhooks the call from
 * its slot, and ct->err has a lock of its own.
 */
#ifndef RPCRDMA_CLNT_INTERNAL_H
#define RPCRDMA_CLNT_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpc/rpc.h>

#include "cm-private/ccp_negotiation.h"
#include "rpcrdma/credits.h"
#include "rpcrdma/devices.h"
#include "rpcrdma/registration.h"
#include "rpcrdma/transport.h"
#include "xdr/header.h"

struct clnt_rdma_call;

/* A call's place on a connection: its send buffer and its XID. */
struct clnt_rdma_slot {
	/* NULL once the caller gave up (orphan), or was woken to finish alone */
	struct clnt_rdma_call *call;
	uint32_t xid;
	bool busy;                   /* atomic: freed without ct->lock */
	bool queued;                 /* its Send is on conn->sendq, not taken for a post yet */
	bool in_post;                /* taken for a post that has not returned yet */
	bool send_pending;           /* the Send from this slot is not completed */
	bool reply_pending;          /* the call was sent and no reply came yet */
	/*
	 * The chunk buffer of a call that gave up on its reply, still
	 * exposed: the server may read or write it until it replies.
	 * Revoked and put when the orphaned slot is freed.
	 */
	struct rpcrdma_regbuf *rb;
	uint32_t invalidated_rkey;   /* ...as the reply's completion reported it */
	/*
	 * An orphaned zero-timeout call (libtirpc's batching: its caller
	 * never waited): its reply is awaited until then before the slot
	 * counts as lost.  0: lost already (the caller waited it out).
	 */
	int64_t awaited_until;
};

struct clnt_rdma_conn {
	struct rpcrdma_ep *ep;
	struct rpcrdma_reg *reg;
	uint8_t *send_bufs;
	struct ibv_mr *send_mr;
	uint32_t send_size;          /* each slot's send buffer */
	struct clnt_rdma_slot *slots;
	uint32_t nslots;
	uint32_t orphans;            /* busy slots whose caller gave up (call NULL) */
	struct rpcrdma_credits_client credits;
	uint32_t inline_send;        /* in force: private data, then CCP */
	uint32_t inline_recv;
	bool ccp_pending;            /* CCP asked for and not answered: one credit, 1 KB */
	struct rpcrdma_ccp_client ccp_state;
	enum rpcrdma_ccp_outcome ccp;
	uint32_t refs;               /* calls attached, plus one while current; atomic */
	bool dead;                   /* set atomically: read without ct->lock */
	bool retry_reset;            /* killed by a call's retry timeout */
	int err;                     /* why it died (errno) */
	bool polling;                /* a thread is the poller */
	int64_t cm_checked_ms;       /* rpcrdma_coarse_ms() of the last look at idle rdma_cm events */
	int wake_fd;                 /* eventfd: ends the poller's poll() when another thread fails its call */
	/*
	 * Sends marshalled under ct->lock and not posted yet: one thread at
	 * a time (posting) takes them all and posts them without the lock,
	 * so a post (on siw the whole transmit) holds up neither the poller
	 * nor the calls being started, and Sends queued meanwhile share the
	 * next doorbell.
	 */
	struct rpcrdma_send *sendq;  /* wr_id: the slot */
	uint32_t nsendq;
	bool posting;
	pthread_cond_t posted_cv;    /* a post of queued Sends returned */
	uint32_t posted_waiters;
	struct rpcrdma_send *postq;  /* the posting thread's own copy */
};

struct clnt_rdma_call {
	sem_t wake;                  /* posted once for each wake-up taken off `waiting` */
	struct clnt_rdma_call *wake_next; /* on ct->wakes */
	struct clnt_rdma_conn *conn; /* attached connection, or NULL */
	uint32_t slot;
	uint32_t xid;
	bool waiting;                /* asleep on wake, nobody has woken it yet */
	bool woken_replied;          /* the wake found the reply in, the Send done, nothing to wait to revoke */
	bool replied;
	bool inv_pending;            /* a local invalidation is posted */
	bool failed;
	bool send_failed;            /* ...before its Send was posted: it was not sent */
	bool batched;                /* zero timeout (libtirpc's batching): sent, its reply not waited for */
	int fail_errno;
	struct rpc_err err;          /* this call's outcome, copied to ct->err at the end */
	bool have_recv;
	uint32_t recv_index, recv_len, invalidated_rkey;
	/* marshalling, owned by the caller */
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	const struct rpcrdma_ulb_proc *binding;
	bool wrapped;                /* the credential flavor may wrap the body: no DDP */
	xdrproc_t xargs;             /* the arguments, for a wrapped call marshalled again */
	void *args;
	uint8_t *stage;
	uint32_t stage_cap;
	struct rpcrdma_xdr_stream s;
	bool sent;                   /* posted on the current attempt's connection */
	bool conn_lost;              /* the attempt failed with its connection */
	bool retry_expired;          /* ...reset by a retry timeout: no reply in time */
	bool err_chunk;              /* the server answered RDMA_ERROR ERR_CHUNK */
	bool big_reply;              /* offer reply room for max_rpc_size */
	struct rpcrdma_regbuf *rb;
	uint32_t rb_len;
	uint32_t reply_off;
	/*
	 * Not zeroed when the call is made (the fields above, about 540
	 * bytes of 8 KiB, are; new fields that need zeroing go there):
	 * each attempt plans (plan), lays out its buffer by the plan's
	 * counts (read_off, write_off) and builds its header (hdr) before
	 * anything reads them.
	 */
	struct rpcrdma_call_plan plan;
	uint32_t read_off[RPCRDMA_MAX_READ_SEGS];     /* offsets in rb */
	uint32_t write_off[RPCRDMA_MAX_WRITE_CHUNKS]; /* offsets in rb */
	struct rpcrdma_header hdr;
};

struct rpcrdma_clnt {
	pthread_mutex_t lock;
	/*
	 * Held (recursive: a refresh calls through the CLIENT) for the whole
	 * of a call whose flavor may wrap the body: such AUTHs keep per-call
	 * state unlocked (RPCSEC_GSS's sequence number, checked against the
	 * reply), as libtirpc's stream client, one call at a time, allows.
	 */
	pthread_mutex_t auth_lock;
	struct clnt_rdma_call *wakes; /* woken calls whose semaphore is not posted yet */
	pthread_cond_t credit_cv;    /* credits or connection state changed */
	uint32_t credit_waiters;     /* atomic: calls that wait, or are about to, on credit_cv */
	struct clnt_rdma_conn *conn; /* current connection, or NULL: never a dead one (clnt_conn_kill) */
	bool connecting;             /* a thread is building the next connection */
	uint32_t builds;             /* connects ended, failed or not */
	int build_err;               /* the last one's -errno if it failed with the whole connect timeout */
	uint32_t connects;
	pid_t owner;                 /* its process: a forked child's clnt_destroy leaves the connection */
	pthread_mutex_t err_lock;    /* err, which calls finishing without ct->lock write too */
	struct rpcrdma_options opts;
	struct timeval timeout;
	bool timeout_set;
	struct timeval call_wait;    /* the last valid clnt_call timeout (clnt_vc's ct_wait) */
	struct timeval retry_timeout; /* CLSET_RETRY_TIMEOUT; zero: wait out the call's timeout */
	uint32_t xid;                /* of the last call */
	rpcprog_t prog;
	rpcvers_t vers;
	struct rpc_err err;
	struct sockaddr_storage addr;
	struct netbuf svcaddr;
	struct rpcrdma_device_user device_user; /* told of device removals (devices.c) */
};

/* Record @st and @err as @c's outcome; returns @st. */
static inline enum clnt_stat clnt_call_fail(struct clnt_rdma_call *c, enum clnt_stat st, int err)
{
	c->err.re_status = st;
	c->err.re_errno = err;
	return st;
}

/*
 * clnt_marshal.c: one call's bytes, in the order a call runs them.  None
 * takes ct->lock.  Each returns RPC_SUCCESS or the failure it recorded
 * in c->err.
 */

/* Marshal the header and @args into c->stage (c->s), once per call (again for a resent wrapped call). */
enum clnt_stat clnt_rdma_marshal(AUTH *auth, uint32_t max_rpc_size, struct clnt_rdma_call *c,
				 xdrproc_t xargs, void *args);
/* How the call and its reply travel on @cn, within @max bytes: c->plan. */
enum clnt_stat clnt_rdma_plan(const struct clnt_rdma_conn *cn, uint32_t max,
			      struct clnt_rdma_call *c);
/* Where each read source, write chunk and the reply chunk lies in the call's buffer: c->rb_len. */
enum clnt_stat clnt_rdma_layout(struct clnt_rdma_call *c);
/* Take the call's buffer (c->rb_len > 0), copy the read sources in, register it when per call. */
enum clnt_stat clnt_rdma_fill(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c);
/* Expose the buffer (windows), build the header, fill the slot's buffer, queue the Send.  ct->lock held. */
enum clnt_stat clnt_rdma_post(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c);
/* Decode the reply in the call's receive buffer into @res. */
enum clnt_stat clnt_rdma_decode(AUTH *auth, struct clnt_rdma_call *c, xdrproc_t xres, void *res);

/* @c's reply is in and its Send done.  ct->lock held. */
bool clnt_call_replied(const struct clnt_rdma_call *c);

/* Wake @c if it sleeps in clnt_conn_wait: its semaphore is posted at the next unlock.  ct->lock held. */
void clnt_call_wake(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c);

/* Release ct->lock, then post the semaphores of the calls woken under it. */
void clnt_rdma_unlock(struct rpcrdma_clnt *ct);

/* Post them now, lock held: before a condition wait releases the lock without clnt_rdma_unlock. */
void clnt_rdma_post_wakes(struct rpcrdma_clnt *ct);

/*
 * clnt_conn_open - connect to ct->addr and build a connection with
 * credits at 1, running CCP on it first when the options ask for it.
 * Connect and CCP together give up at @deadline (ms, rpcrdma_now_ms) or
 * at the connect timeout, whichever comes first (a zero-timeout call,
 * which is still sent, passes INT64_MAX).  Called without ct->lock.
 * Returns 0 or -errno (-ETIMEDOUT: @deadline had passed, or no
 * connection, or no CCP answer, in that time).
 */
int clnt_conn_open(struct rpcrdma_clnt *ct, int64_t deadline, struct clnt_rdma_conn **out);

/*
 * clnt_rdma_ccp - the CCP exchange on the new, unpublished connection
 * @cn (clnt_rdma.c), answered by @deadline.  Called without ct->lock.
 * Sets cn->ccp and the inline sizes in force.  Returns 0, -ECONNRESET
 * when the connection broke, or -ETIMEDOUT when no answer came: the
 * call's orphaned slot holds the connection's only credit, so the
 * connection is of no use, or -ENOMEM.
 */
int clnt_rdma_ccp(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int64_t deadline);

/*
 * clnt_conn_take_slot - a credit and a slot on @cn for @c, and a
 * reference.  ct->lock held.  Returns false when no credit is free.
 */
bool clnt_conn_take_slot(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c);

/*
 * Drop a reference; the last one frees the connection.  ct->lock held,
 * except by a call detaching unlocked (clnt_conn_detach_unlocked): once
 * the count is 0 nothing else reaches the connection.
 */
void clnt_conn_put(struct clnt_rdma_conn *cn);

/*
 * Mark @cn dead with @err (@why: for RPCRDMA_DEBUG) and wake everything
 * waiting on it; if it is ct->conn, put the CLIENT's reference and clear
 * ct->conn, so the connection goes once its calls have detached.  A
 * caller that uses @cn after the kill holds a reference of its own (an
 * attached call has one).  ct->lock held.
 */
void clnt_conn_kill(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int err, const char *why);

/*
 * clnt_conn_device_removed - the watcher saw a device node vanish: if
 * ct->conn is on a device being removed, kill it (its calls fail as on a
 * disconnect, with -ENODEV) and drop the CLIENT's reference, so an idle
 * CLIENT lets go of the device now instead of at its next call.  Takes
 * ct->lock.
 */
void clnt_conn_device_removed(struct rpcrdma_clnt *ct);

/*
 * clnt_conn_publish - make @cn, new and live from clnt_conn_open (which
 * returns no connection a kill has marked dead), the CLIENT's
 * connection (ct->conn), unless its device was removed meanwhile (then
 * it is dropped as by clnt_conn_device_removed: the watcher may have
 * told the CLIENT before @cn was there to see).  ct->lock held.  Returns
 * 0 or -ENODEV.
 */
int clnt_conn_publish(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn);

/*
 * clnt_conn_attach - take a credit and a slot on ct->conn for @c
 * (reconnecting first when there is no live connection), waiting up to
 * @deadline.  When orphans hold every credit, their replies are polled
 * for while some are awaited (see clnt_rdma_slot.awaited_until); then
 * the connection is replaced.  ct->lock held.  Returns 0, -ETIMEDOUT,
 * or -errno of a failed connect.
 */
int clnt_conn_attach(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline);

/*
 * clnt_conn_keep_exposed - @c gives up on its reply (its time is up) on
 * a live connection: its chunk buffer moves to its slot, still exposed,
 * because the server may be reading its arguments or writing its
 * results right now; revoking the buffer would fail those and break
 * the connection for every call on it.  The buffer is revoked when the
 * slot is freed (its reply came, its Send failed, or the connection
 * went).  ct->lock held.
 */
void clnt_conn_keep_exposed(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c);

/*
 * clnt_conn_detach - give back @c's receive buffer, slot and credit (or
 * leave the slot as an orphan when the reply or Send completion is
 * still due) and its reference.  ct->lock held.
 */
void clnt_conn_detach(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c);

/*
 * clnt_conn_detach_unlocked - clnt_conn_detach without ct->lock, for a
 * call that clnt_conn_wait returned CLNT_CONN_REPLIED_UNLOCKED: its
 * slot no longer names it and no completion for it is due.  Takes
 * ct->lock only when a receive cannot be reposted (the connection is
 * killed) or a call waits for a credit.
 */
void clnt_conn_detach_unlocked(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c);

/* The slot's send buffer. */
uint8_t *clnt_conn_send_buf(const struct clnt_rdma_conn *cn, uint32_t slot);

/*
 * clnt_conn_post_send - queue the Send of @len bytes of @c's slot
 * buffer; the next clnt_conn_wait on the connection posts it.  ct->lock
 * held.  Returns 0 or -ENOTCONN.  If the Send is not posted after all
 * (the post fails, the connection is killed while it is queued, or
 * during a post that then fails) the wait fails with c->send_failed
 * set; a wait that ends (at its deadline, or failed) first waits for the
 * post that takes the Send, or is taking it, to return (a zero-timeout
 * call is still sent), and fails the same way if the Send did not go.
 */
int clnt_conn_post_send(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c, uint32_t len);

/*
 * clnt_conn_wait - wait until @done(@c), @c fails, or @deadline; the
 * waiting thread may serve as the poller.  ct->lock held.  Returns 0,
 * CLNT_CONN_DEADLINE, or -errno of the failure (-ECONNRESET: connection
 * lost; -ETIMEDOUT is a failure too: the peer's transport retries
 * exhausted, or a call's retry timeout reset the connection, not
 * @deadline), with ct->lock held; or
 * CLNT_CONN_REPLIED_UNLOCKED with it released:
 * @c was woken with its reply in and no revocation to wait for
 * (woken_replied: no chunk buffer, or one revoked on the spot, see
 * rpcrdma_reg_revoke_is_synchronous), and then owns its reply alone, so
 * it need not take the contended lock only to learn that.  Only the wait
 * for the reply can see this: during a wait for a local invalidation the
 * buffer is not exposed, so that wake never sets woken_replied.
 */
#define CLNT_CONN_REPLIED_UNLOCKED 1
#define CLNT_CONN_DEADLINE         2
int clnt_conn_wait(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline,
		   bool (*done)(const struct clnt_rdma_call *c));

/* How long a call waits for its local invalidation before giving up the connection. */
int64_t clnt_conn_inv_deadline(void);

#endif
