/*
 * The RPC-over-RDMA CLIENT: libtirpc's clnt_ops and creation, and when
 * each step of a call runs.  A call is marshalled once (clnt_marshal.c),
 * then attached to a connection (clnt_conn.c), planned, its buffer
 * filled and exposed under one key (registration.h), and sent; the
 * reply is matched by XID, the buffer's remote access ended, and the
 * results decoded.  Here too: the retries (a new connection, a larger
 * reply chunk after ERR_CHUNK, a credential refresh), the call's
 * deadline and retry timeout, and CCP on a new connection.  Many
 * threads may call at once: calls are pipelined up to the server's
 * credit grant.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rpcrdma/clnt_internal.h"
#include "rpcrdma/netconfig.h"
#include "rpcrdma/options.h"
#include "rpcrdma/rpcbind.h"
#include "xdr/ccp.h"

#define CLNT_RECONNECT_PAUSE_MS 200
#define CLNT_AUTH_REFRESHES 2 /* as libtirpc's clnt_vc */

static const struct clnt_ops clnt_rdma_ops;

static struct rpcrdma_clnt *clnt_rdma_of(CLIENT *cl)
{
	return (struct rpcrdma_clnt *)cl->cl_private;
}

/* ---- one exchange on one connection ----------------------------------------------------- */

static bool call_invalidated(const struct clnt_rdma_call *c)
{
	return !c->inv_pending;
}

/* End the remote access to the call's buffer before anything reads it.  ct->lock held. */
static enum clnt_stat clnt_rdma_end_access(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	struct clnt_rdma_conn *cn = c->conn;
	int rc, err;

	if (!c->rb)
		return RPC_SUCCESS;
	rc = rpcrdma_reg_revoke(cn->reg, c->rb, c->invalidated_rkey, c->slot);
	if (rc == 1) {
		bool send_failed = c->send_failed;

		/* a failed Send post the call's wait returned is not this wait's outcome */
		c->failed = c->send_failed = false;
		c->inv_pending = true;
		rc = clnt_conn_wait(ct, c, clnt_conn_inv_deadline(), call_invalidated);
		c->send_failed = send_failed;
	}
	if (!rc)
		return RPC_SUCCESS;
	/* The buffer stays exposed: it is destroyed, not cached, when put. */
	err = rc < 0 ? -rc : ETIMEDOUT; /* CLNT_CONN_DEADLINE */
	clnt_conn_kill(ct, cn, err, "revoking a call's memory failed");
	c->conn_lost = true;
	return clnt_call_fail(c, RPC_CANTRECV, err);
}

/*
 * A reply taken without the lock whose buffer could not be revoked (a
 * per-call region that would not deregister): not decoded from memory
 * the server may still write, and the connection is ended.
 */
static enum clnt_stat clnt_rdma_revoke_failed_unlocked(struct rpcrdma_clnt *ct,
						       struct clnt_rdma_call *c)
{
	pthread_mutex_lock(&ct->lock);
	clnt_conn_kill(ct, c->conn, EIO, "revoking a call's memory failed");
	clnt_rdma_unlock(ct);
	return clnt_call_fail(c, RPC_CANTRECV, EIO);
}

static enum clnt_stat clnt_rdma_waited(struct clnt_rdma_call *c, int rc)
{
	if (rc == CLNT_CONN_DEADLINE)
		return clnt_call_fail(c, RPC_TIMEDOUT, 0);
	if (c->send_failed) { /* as a post that fails at once: never sent */
		c->sent = false;
		c->conn_lost = rc == -ENOTCONN || __atomic_load_n(&c->conn->dead, __ATOMIC_ACQUIRE);
		return clnt_call_fail(c, RPC_CANTSEND, -rc);
	}
	c->conn_lost = true;
	return clnt_call_fail(c, RPC_CANTRECV, -rc);
}

/* @tv, valid (rpcrdma_timeout_valid: every timeout kept is), in ms rounded up. */
static int64_t clnt_rdma_tv_ms(struct timeval tv)
{
	return (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
}

/*
 * When this attempt stops waiting: the call's deadline, or sooner with a
 * retry timeout and resending allowed.  A reliable connection that
 * returns no reply for that long is taken for stuck (a peer or provider
 * that stopped without an error), as Linux's xprtrdma does on a timeout:
 * the connection is reset and the call sent again on a new one.  Not
 * for CCP, which runs while the connection is being made.
 */
static int64_t clnt_rdma_try_end(const struct rpcrdma_clnt *ct, const struct clnt_rdma_conn *cn,
				 int64_t deadline)
{
	int64_t ms = clnt_rdma_tv_ms(ct->retry_timeout), end;

	if (!ct->opts.reconnect_resend || cn->ccp_pending || !ms)
		return deadline;
	end = rpcrdma_now_ms() + ms;
	return end < deadline ? end : deadline;
}

/*
 * Send @c on the connection it is attached to and take its reply.
 * Called with ct->lock held; marshalled data is @c's.  Returns with the
 * lock held, or, *@unlocked set, without it and @c detached: a call woken
 * with its complete reply (CLNT_CONN_REPLIED_UNLOCKED) finishes alone.
 */
static enum clnt_stat clnt_rdma_exchange(struct rpcrdma_clnt *ct, AUTH *auth,
					 struct clnt_rdma_call *c, xdrproc_t xres, void *res,
					 int64_t deadline, bool *unlocked)
{
	struct clnt_rdma_conn *cn = c->conn;
	int64_t try_end = clnt_rdma_try_end(ct, cn, deadline);
	enum clnt_stat st, end;
	int rc;

	*unlocked = false;
	st = clnt_rdma_plan(cn, ct->opts.max_rpc_size, c);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_layout(c);
	if (st == RPC_SUCCESS && c->rb_len) {
		/* copies and registration (system calls) without the lock */
		clnt_rdma_unlock(ct);
		st = clnt_rdma_fill(cn, c);
		pthread_mutex_lock(&ct->lock);
	}
	if (st == RPC_SUCCESS)
		st = clnt_rdma_post(cn, c);
	if (st != RPC_SUCCESS) {
		if (c->err.re_errno == ENOTCONN)
			c->conn_lost = true;
		end = clnt_rdma_end_access(ct, c);
		return end != RPC_SUCCESS ? end : st; /* as c->err says */
	}
	rc = clnt_conn_wait(ct, c, try_end, clnt_call_replied);
	if (rc == CLNT_CONN_DEADLINE && try_end < deadline) {
		if (!cn->dead)
			cn->retry_reset = true;
		clnt_conn_kill(ct, cn, ETIMEDOUT, "no reply within the retry timeout");
		rc = -ETIMEDOUT;
	}
	c->retry_expired = rc < 0 && cn->retry_reset && !c->send_failed; /* sent, then reset */
	if (rc == CLNT_CONN_DEADLINE && c->rb && !cn->dead)
		clnt_conn_keep_exposed(cn, c);
	if (rc == CLNT_CONN_REPLIED_UNLOCKED) {
		/* synchronous (clnt_call_wake): posts nothing, needs no lock */
		if (c->rb && rpcrdma_reg_revoke(cn->reg, c->rb, c->invalidated_rkey, c->slot) < 0)
			st = clnt_rdma_revoke_failed_unlocked(ct, c);
		else
			st = clnt_rdma_decode(auth, c, xres, res);
		rpcrdma_reg_put(cn->reg, c->rb);
		c->rb = NULL;
		clnt_conn_detach_unlocked(ct, c);
		*unlocked = true;
		return st;
	}
	end = clnt_rdma_end_access(ct, c);
	if (rc)
		return clnt_rdma_waited(c, rc);
	if (end != RPC_SUCCESS)
		return end;
	clnt_rdma_unlock(ct);
	st = clnt_rdma_decode(auth, c, xres, res);
	pthread_mutex_lock(&ct->lock);
	return st;
}

/* Give back the call's buffer and its place on the connection.  ct->lock held. */
static void clnt_rdma_release(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	if (c->rb) {
		rpcrdma_reg_put(c->conn->reg, c->rb);
		c->rb = NULL;
	}
	clnt_conn_detach(ct, c);
}

/*
 * No connection or credit for @c: RPC_TIMEDOUT when it was sent before
 * (whatever stopped its resending: it may have run) or its time ran out,
 * otherwise RPC_CANTSEND with the reason, a connect that timed out
 * (connect_timeout_ms) included.  A zero-timeout call is never left
 * unsent with RPC_TIMEDOUT: that status means sent for it.
 */
static enum clnt_stat clnt_rdma_attach_fail(struct clnt_rdma_call *c, int rc, int64_t deadline,
					    bool resending)
{
	if (resending || (rc == -ETIMEDOUT && !c->batched && rpcrdma_now_ms() >= deadline))
		return clnt_call_fail(c, RPC_TIMEDOUT, 0);
	return clnt_call_fail(c, RPC_CANTSEND, -rc);
}

/* Another attempt on a new connection: the first was never sent, or resending is allowed. */
static bool clnt_rdma_retry(const struct rpcrdma_clnt *ct, const struct clnt_rdma_call *c,
			    int64_t deadline)
{
	if (!c->conn_lost || rpcrdma_now_ms() >= deadline)
		return false;
	return !c->sent || ct->opts.reconnect_resend;
}

/*
 * The server found our guessed reply room too small (ERR_CHUNK): send
 * the call once more, same XID, with room for max_rpc_size.
 */
static bool clnt_rdma_grow_reply(struct clnt_rdma_call *c)
{
	if (!c->err_chunk || c->big_reply || (c->binding && c->binding->reply_max))
		return false;
	c->big_reply = true;
	return true;
}

/*
 * A reconnect for a resent call failed: pause, then try again while the
 * call's time is left.  A connect attempt that timed out is tried again
 * too: a server being restarted can accept the transport connection and
 * never answer it (knfsd while `rpc.nfsd 0` runs, on siw).
 */
static bool clnt_rdma_reconnect_pause(struct rpcrdma_clnt *ct, int64_t deadline)
{
	if (rpcrdma_now_ms() + CLNT_RECONNECT_PAUSE_MS >= deadline)
		return false;
	clnt_rdma_unlock(ct);
	nanosleep(&(struct timespec){ 0, CLNT_RECONNECT_PAUSE_MS * 1000000L }, NULL);
	pthread_mutex_lock(&ct->lock);
	return true;
}

/*
 * A wrapped call the server may have seen goes out again marshalled
 * anew, same XID: an RPCSEC_GSS server discards a sequence number it
 * has seen (RFC 2203 section 5.3.3.1; libtirpc's answers it with an
 * authentication error), and Linux's client re-encodes such calls
 * too.  Other calls are sent as they were (a duplicate request cache
 * may recognise them).  ct->lock held; @c is detached.
 */
static enum clnt_stat clnt_rdma_remarshal(struct rpcrdma_clnt *ct, AUTH *auth,
					  struct clnt_rdma_call *c)
{
	enum clnt_stat st;

	if (!c->wrapped || !c->sent)
		return RPC_SUCCESS;
	clnt_rdma_unlock(ct);
	st = clnt_rdma_marshal(auth, ct->opts.max_rpc_size, c, c->xargs, c->args);
	pthread_mutex_lock(&ct->lock);
	return st;
}

/*
 * Attach, exchange, release; again on a new connection when allowed.
 * Called with ct->lock held; returns with it held unless *@unlocked
 * (clnt_rdma_exchange).
 */
static enum clnt_stat clnt_rdma_run(struct rpcrdma_clnt *ct, AUTH *auth, struct clnt_rdma_call *c,
				    xdrproc_t xres, void *res, int64_t deadline, bool *unlocked)
{
	/* a zero-timeout call waits for a connection and a credit as a stream client's write blocks */
	int64_t send_by = c->batched ? deadline + ct->opts.connect_timeout_ms : deadline;
	bool resending = false, again = false;
	enum clnt_stat st;
	int rc;

	for (;;) {
		st = clnt_rdma_remarshal(ct, auth, c);
		if (st != RPC_SUCCESS)
			return st;
		memset(&c->err, 0, sizeof(c->err));
		c->conn_lost = c->sent = c->err_chunk = c->retry_expired = false;
		rc = clnt_conn_attach(ct, c, again ? deadline : send_by);
		if (rc && resending && clnt_rdma_reconnect_pause(ct, deadline))
			continue;
		if (rc)
			return clnt_rdma_attach_fail(c, rc, deadline, resending);
		/* Another attempt is not sent once the call's time is up (the
		 * first is, even with a zero timeout: libtirpc's batching). */
		if (again && rpcrdma_now_ms() >= deadline) {
			clnt_rdma_release(ct, c);
			return clnt_call_fail(c, RPC_TIMEDOUT, 0);
		}
		again = true;
		st = clnt_rdma_exchange(ct, auth, c, xres, res, deadline, unlocked);
		if (*unlocked && clnt_rdma_grow_reply(c)) {
			pthread_mutex_lock(&ct->lock);
			*unlocked = false;
			continue;
		}
		if (*unlocked)
			return st; /* replied: nothing to retry */
		clnt_rdma_release(ct, c);
		if (clnt_rdma_grow_reply(c))
			continue;
		if (st == RPC_SUCCESS || !clnt_rdma_retry(ct, c, deadline))
			return c->retry_expired ? clnt_call_fail(c, RPC_TIMEDOUT, 0) : st;
		resending = resending || c->sent;
	}
}

/*
 * A call with @xid (a caller's: the next of ct->xid).  Needs no ct->lock:
 * the XID is an atomic, so a call takes the contended lock only once it
 * has marshalled.
 */
static struct clnt_rdma_call *clnt_rdma_call_new(struct rpcrdma_clnt *ct, uint32_t xid,
						 rpcprog_t prog, rpcvers_t vers, rpcproc_t proc)
{
	struct clnt_rdma_call *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	memset(c, 0, offsetof(struct clnt_rdma_call, plan));
	sem_init(&c->wake, 0, 0);
	c->xid = xid;
	c->prog = prog;
	c->vers = vers;
	c->proc = proc;
	if (ct->opts.ulb && ct->opts.ulb->prog == prog && ct->opts.ulb->vers == vers)
		c->binding = rpcrdma_ulb_proc_find(ct->opts.ulb, proc);
	return c;
}

static void clnt_rdma_call_free(struct clnt_rdma_call *c)
{
	if (!c)
		return;
	sem_destroy(&c->wake);
	free(c->stage);
	free(c);
}

/* ---- CCP on a new connection ------------------------------------------------------------ */

static void clnt_rdma_ccp_apply(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn,
				enum clnt_stat st, const struct rpcrdma_config_reply *rep)
{
	const struct rpcrdma_ep_info *info = rpcrdma_ep_info(cn->ep);
	struct rpcrdma_ccp_local local = { .send_size = ct->opts.inline_send,
					   .recv_size = ct->opts.inline_recv };
	const struct rpcrdma_inline_params *pd =
		info->peer_pd == RPCRDMA_PD_OK ? &info->inline_params : NULL;

	if (st == RPC_SUCCESS &&
	    rpcrdma_ccp_client_apply(&cn->ccp_state, &local, rep, &info->rd, pd) == RPCRDMA_CCP_OK) {
		cn->ccp = RPCRDMA_CCP_USED;
	} else {
		rpcrdma_ccp_client_fallback(&cn->ccp_state, &info->inline_params, &info->rd);
		cn->ccp = RPCRDMA_CCP_NOT_OFFERED;
	}
	cn->inline_send = cn->ccp_state.inline_send;
	cn->inline_recv = cn->ccp_state.inline_recv;
	cn->ccp_pending = false;
}

int clnt_rdma_ccp(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int64_t deadline)
{
	const struct rpcrdma_ep_info *info = rpcrdma_ep_info(cn->ep);
	struct rpcrdma_ccp_local local = { .send_size = ct->opts.inline_send,
					   .recv_size = ct->opts.inline_recv };
	struct rpcrdma_config_req req = rpcrdma_ccp_client_request(&local, &info->rd);
	struct rpcrdma_config_reply rep = { 0 };
	AUTH *none = authnone_create();
	struct clnt_rdma_call *c;
	enum clnt_stat st;
	bool lost, unanswered, unlocked = false;

	if (!none) /* libtirpc's one AUTH, NULL only if its first allocation failed */
		return -ENOMEM;
	rpcrdma_ccp_client_init(&cn->ccp_state);
	cn->ccp_pending = true;
	cn->inline_send = cn->ccp_state.inline_send;
	cn->inline_recv = cn->ccp_state.inline_recv;
	/* half the XID space from the calls': CLGET_XID still names the caller's last call */
	c = clnt_rdma_call_new(ct, __atomic_load_n(&ct->xid, __ATOMIC_RELAXED) ^ 0x80000000u,
			       RPCRDMA_CCP_PROGRAM, RPCRDMA_CCP_VERSION, RPCRDMA_CCP_PROC_CONF_RDMA);
	pthread_mutex_lock(&ct->lock);
	if (!c || !clnt_conn_take_slot(cn, c)) {
		clnt_rdma_unlock(ct);
		clnt_rdma_call_free(c);
		return -ENOMEM;
	}
	clnt_rdma_unlock(ct);
	st = clnt_rdma_marshal(none, ct->opts.max_rpc_size, c,
			       (xdrproc_t)xdr_rpcrdma_config_req, &req);
	pthread_mutex_lock(&ct->lock);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_exchange(ct, none, c, (xdrproc_t)xdr_rpcrdma_config_reply, &rep,
					deadline, &unlocked);
	/*
	 * Not seen today: alone on a connection nobody else sees, the CCP
	 * call is its own poller, and only a call woken by another poller
	 * finishes unlocked.  Kept so the exchange has one contract.
	 */
	if (unlocked)
		pthread_mutex_lock(&ct->lock);
	unanswered = st == RPC_TIMEDOUT;
	clnt_rdma_release(ct, c); /* nothing left to release once detached unlocked */
	lost = c->conn_lost || cn->dead; /* after the release: its receive's repost may kill it */
	if (!lost && !unanswered)
		clnt_rdma_ccp_apply(ct, cn, st, &rep);
	clnt_rdma_unlock(ct);
	clnt_rdma_call_free(c);
	return lost ? -ECONNRESET : unanswered ? -ETIMEDOUT : 0;
}

/* ---- clnt_ops ------------------------------------------------------------------------------ */

/* clnt_call's own timeout is zero: libtirpc's message passing, whatever CLSET_TIMEOUT says. */
static bool clnt_rdma_tv_zero(struct timeval tv)
{
	return tv.tv_sec == 0 && tv.tv_usec == 0;
}

/*
 * The call's deadline, as clnt_vc times a call: CLSET_TIMEOUT's timeout,
 * or else clnt_call's, an invalid one standing for the last valid one.
 * A zero clnt_call timeout, or a zero wait, returns RPC_TIMEDOUT once the
 * call is sent, so the call must be sent (@c->batched).
 */
static int64_t clnt_rdma_deadline(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
				  struct timeval tv)
{
	int64_t ms = 0;

	if (!ct->timeout_set && rpcrdma_timeout_valid(&tv))
		ct->call_wait = tv;
	if (!clnt_rdma_tv_zero(tv))
		ms = clnt_rdma_tv_ms(ct->timeout_set ? ct->timeout : ct->call_wait);
	c->batched = ms == 0;
	return rpcrdma_now_ms() + ms;
}

/* The last call's error, for clnt_geterr. */
static void clnt_rdma_set_err(struct rpcrdma_clnt *ct, const struct rpc_err *err)
{
	pthread_mutex_lock(&ct->err_lock);
	ct->err = *err;
	pthread_mutex_unlock(&ct->err_lock);
}

/*
 * One call with a new XID.  The deadline is taken at the first attempt
 * (*@deadline is INT64_MIN until then), under the lock the call takes
 * anyway; a zero-timeout call has no other attempt (clnt_rdma_refresh
 * needs time left).  @err gets the call's error.  No @xres is libtirpc's
 * classic batching when the timeout is zero: RPC_SUCCESS once the call
 * is sent, as clnt_vc returns; a reply that comes anyway is decoded as
 * void (clnt_vc would call a NULL routine, with a timeout).
 */
static enum clnt_stat clnt_rdma_attempt(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
					xdrproc_t xres, void *res, struct timeval tv,
					int64_t *deadline, struct rpc_err *err)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	struct clnt_rdma_call *c;
	bool unlocked = false;
	enum clnt_stat st;

	c = clnt_rdma_call_new(ct, __atomic_add_fetch(&ct->xid, 1, __ATOMIC_RELAXED),
			       __atomic_load_n(&ct->prog, __ATOMIC_RELAXED),
			       __atomic_load_n(&ct->vers, __ATOMIC_RELAXED), proc);
	if (!c) {
		*err = (struct rpc_err){ .re_status = RPC_SYSTEMERROR, .re_errno = ENOMEM };
		clnt_rdma_set_err(ct, err);
		return RPC_SYSTEMERROR;
	}
	st = clnt_rdma_marshal(cl->cl_auth, ct->opts.max_rpc_size, c, xargs, args);
	pthread_mutex_lock(&ct->lock);
	if (*deadline == INT64_MIN)
		*deadline = clnt_rdma_deadline(ct, c, tv);
	else if (st == RPC_SUCCESS && rpcrdma_now_ms() >= *deadline)
		st = clnt_call_fail(c, RPC_TIMEDOUT, 0); /* the refresh used up the call's time */
	if (st == RPC_SUCCESS)
		st = clnt_rdma_run(ct, cl->cl_auth, c, xres ? xres : RPCRDMA_XDR_VOID, res, *deadline,
				   &unlocked);
	if (!unlocked)
		clnt_rdma_unlock(ct);
	if (!xres && clnt_rdma_tv_zero(tv) && st == RPC_TIMEDOUT) /* sent: classic batching's success */
		st = clnt_call_fail(c, RPC_SUCCESS, 0);
	*err = c->err;
	clnt_rdma_set_err(ct, err);
	clnt_rdma_call_free(c);
	return st;
}

/*
 * As libtirpc's clients do: when the server refuses the credential, the
 * AUTH may refresh it (RPCSEC_GSS establishes a new context) and the
 * call is made again with it, twice at most.  Not after a reply whose
 * verifier failed (AUTH_INVALIDRESP): the server ran that call.
 */
static bool clnt_rdma_refresh(AUTH *auth, const struct rpc_err *err, int64_t deadline)
{
	struct rpc_msg rejected = { .rm_direction = REPLY };

	if (err->re_why == AUTH_INVALIDRESP || rpcrdma_now_ms() >= deadline)
		return false;
	rejected.rm_reply.rp_stat = MSG_DENIED;
	rejected.rjcted_rply.rj_stat = AUTH_ERROR;
	rejected.rjcted_rply.rj_why = err->re_why;
	return AUTH_REFRESH(auth, &rejected);
}

static enum clnt_stat clnt_rdma_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
				     xdrproc_t xres, void *res, struct timeval tv)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	bool serial = !rpcrdma_auth_pipelined(cl->cl_auth->ah_cred.oa_flavor);
	int64_t deadline = INT64_MIN;
	int refreshes = CLNT_AUTH_REFRESHES;
	struct rpc_err err;
	enum clnt_stat st;

	if (serial)
		pthread_mutex_lock(&ct->auth_lock);
	do
		st = clnt_rdma_attempt(cl, proc, xargs, args, xres, res, tv, &deadline, &err);
	while (st == RPC_AUTHERROR && refreshes-- > 0 &&
	       clnt_rdma_refresh(cl->cl_auth, &err, deadline));
	if (serial)
		pthread_mutex_unlock(&ct->auth_lock);
	return st;
}

/* libtirpc's stream clients do nothing here either: a call cannot be abandoned midway. */
static void clnt_rdma_abort(CLIENT *cl)
{
	(void)cl;
}

static void clnt_rdma_geterr(CLIENT *cl, struct rpc_err *err)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);

	pthread_mutex_lock(&ct->err_lock);
	*err = ct->err;
	pthread_mutex_unlock(&ct->err_lock);
}

static bool_t clnt_rdma_freeres(CLIENT *cl, xdrproc_t xres, void *res)
{
	XDR x = { .x_op = XDR_FREE };

	(void)cl;
	return xres(&x, res);
}

/*
 * In a forked child the connection's rdma_cm id and verbs objects are
 * the parent's, reached through the files both share: destroying them
 * would tear down the parent's connection.  The child leaves them, and
 * the memory describing them, as they are.
 */
static void clnt_rdma_free(struct rpcrdma_clnt *ct)
{
	if (!ct)
		return;
	rpcrdma_device_user_remove(&ct->device_user);
	if (ct->owner == getpid())
		clnt_conn_put(ct->conn);
	pthread_cond_destroy(&ct->credit_cv);
	pthread_mutex_destroy(&ct->lock);
	pthread_mutex_destroy(&ct->err_lock);
	pthread_mutex_destroy(&ct->auth_lock);
	free(ct);
}

static void clnt_rdma_destroy(CLIENT *cl)
{
	clnt_rdma_free(clnt_rdma_of(cl));
	free(cl->cl_netid);
	free(cl->cl_tp);
	free(cl);
}

static bool_t clnt_rdma_control_locked(struct rpcrdma_clnt *ct, u_int request, void *info)
{
	switch (request) {
	case CLSET_FD_CLOSE:
	case CLSET_FD_NCLOSE:
		return TRUE;
	case CLSET_TIMEOUT:
		if (!rpcrdma_timeout_valid(info))
			return FALSE;
		ct->timeout = *(struct timeval *)info;
		ct->timeout_set = true;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = ct->timeout_set ? ct->timeout : ct->call_wait;
		return TRUE;
	case CLSET_RETRY_TIMEOUT:
		if (!rpcrdma_timeout_valid(info))
			return FALSE;
		ct->retry_timeout = *(struct timeval *)info;
		return TRUE;
	case CLGET_RETRY_TIMEOUT:
		*(struct timeval *)info = ct->retry_timeout;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = __atomic_load_n(&ct->xid, __ATOMIC_RELAXED);
		return TRUE;
	case CLSET_XID: /* the xid of the next call */
		__atomic_store_n(&ct->xid, *(uint32_t *)info - 1, __ATOMIC_RELAXED);
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = (uint32_t)__atomic_load_n(&ct->vers, __ATOMIC_RELAXED);
		return TRUE;
	case CLSET_VERS:
		__atomic_store_n(&ct->vers, *(uint32_t *)info, __ATOMIC_RELAXED);
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = (uint32_t)__atomic_load_n(&ct->prog, __ATOMIC_RELAXED);
		return TRUE;
	case CLSET_PROG:
		__atomic_store_n(&ct->prog, *(uint32_t *)info, __ATOMIC_RELAXED);
		return TRUE;
	case CLGET_SVC_ADDR:
		*(struct netbuf *)info = ct->svcaddr;
		return TRUE;
	case CLGET_SERVER_ADDR:
		memcpy(info, ct->svcaddr.buf, ct->svcaddr.len);
		return TRUE;
	default:
		return FALSE;
	}
}

static bool_t clnt_rdma_control(CLIENT *cl, u_int request, void *info)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	bool_t ok;

	if (!info && request != CLSET_FD_CLOSE && request != CLSET_FD_NCLOSE)
		return FALSE;
	pthread_mutex_lock(&ct->lock);
	ok = clnt_rdma_control_locked(ct, request, info);
	clnt_rdma_unlock(ct);
	return ok;
}

static const struct clnt_ops clnt_rdma_ops = {
	.cl_call = clnt_rdma_call,
	.cl_abort = clnt_rdma_abort,
	.cl_geterr = clnt_rdma_geterr,
	.cl_freeres = clnt_rdma_freeres,
	.cl_destroy = clnt_rdma_destroy,
	.cl_control = clnt_rdma_control,
};

static void conn_info_fill(const struct rpcrdma_clnt *ct, const struct clnt_rdma_conn *cn,
			   struct rpcrdma_conn_info *info)
{
	const struct rpcrdma_ep_info *ei = rpcrdma_ep_info(cn->ep);

	*info = (struct rpcrdma_conn_info){
		.inline_send = cn->inline_send,
		.inline_recv = cn->inline_recv,
		.credits = cn->credits.granted,
		.ird = ei->rd.ird,
		.ord = ei->rd.ord,
		.peer_private_data = ei->peer_pd == RPCRDMA_PD_OK,
		.remote_invalidate = ei->inline_params.remote_invalidate,
		.iwarp = ei->transport == IBV_TRANSPORT_IWARP,
		.registration = rpcrdma_reg_strategy(cn->reg),
		.ccp = cn->ccp,
		.connects = ct->connects,
		.ack_timeout = ei->ack_timeout,
		.traffic_class = ei->traffic_class,
		.send_wr_inline = ei->send_wr_inline,
	};
	rpcrdma_reg_counts(cn->reg, &info->remote_invalidations, &info->local_invalidations);
}

int clnt_rdma_getinfo(CLIENT *cl, struct rpcrdma_conn_info *info)
{
	struct rpcrdma_conn_info got;
	struct rpcrdma_clnt *ct;
	int rc = 0;

	if (!cl || !info || cl->cl_ops != &clnt_rdma_ops || !rpcrdma_conn_info_size_ok(info))
		return -EINVAL;
	ct = clnt_rdma_of(cl);
	pthread_mutex_lock(&ct->lock);
	if (ct->conn)
		conn_info_fill(ct, ct->conn, &got);
	else
		rc = -ENOTCONN;
	clnt_rdma_unlock(ct);
	return rc ? rc : rpcrdma_conn_info_store(info, &got);
}

/* ---- creation --------------------------------------------------------------------------------- */

static CLIENT *clnt_rdma_create_fail(struct rpcrdma_clnt *ct, CLIENT *cl, enum clnt_stat st,
				     int err)
{
	rpcrdma_createerr_set(st, err);
	clnt_rdma_free(ct);
	if (cl) {
		free(cl->cl_netid);
		free(cl->cl_tp);
		free(cl);
	}
	return NULL;
}

static uint32_t clnt_rdma_initial_xid(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)getpid() ^ (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
}

static void clnt_rdma_device_removed(struct rpcrdma_device_user *u)
{
	clnt_conn_device_removed((struct rpcrdma_clnt *)((char *)u -
							 offsetof(struct rpcrdma_clnt, device_user)));
}

static struct rpcrdma_clnt *clnt_rdma_new(const struct sockaddr *addr, rpcprog_t prog,
					  rpcvers_t vers, const struct rpcrdma_options *opts)
{
	struct rpcrdma_clnt *ct = calloc(1, sizeof(*ct));
	pthread_mutexattr_t recursive;

	if (!ct)
		return NULL;
	pthread_mutexattr_init(&recursive);
	pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&ct->auth_lock, &recursive);
	pthread_mutexattr_destroy(&recursive);
	pthread_mutex_init(&ct->lock, NULL);
	pthread_mutex_init(&ct->err_lock, NULL);
	pthread_cond_init(&ct->credit_cv, NULL);
	ct->opts = *opts;
	ct->owner = getpid();
	ct->call_wait = opts->call_timeout;
	memcpy(&ct->addr, addr, rpcrdma_sockaddr_len(addr));
	ct->svcaddr = (struct netbuf){ .maxlen = sizeof(ct->addr), .buf = &ct->addr,
				       .len = rpcrdma_sockaddr_len(addr) };
	ct->prog = prog;
	ct->vers = vers;
	ct->xid = clnt_rdma_initial_xid();
	ct->device_user.removed = clnt_rdma_device_removed;
	return ct;
}

/*
 * clnt_rdma_tli_create() with options already loaded (rpcrdma_options_load)
 * and @addr known to be AF_INET or AF_INET6.  Returns the CLIENT, or NULL
 * with rpc_createerr set as clnt_rdma_tli_create() sets it.
 */
static CLIENT *clnt_rdma_open(const struct sockaddr *addr, rpcprog_t prog, rpcvers_t vers,
			      const struct rpcrdma_options *opts)
{
	struct clnt_rdma_conn *cn;
	struct rpcrdma_clnt *ct;
	const char *netid;
	CLIENT *cl;
	int rc;

	ct = clnt_rdma_new(addr, prog, vers, opts);
	cl = calloc(1, sizeof(*cl));
	if (!ct || !cl) {
		free(cl);
		return clnt_rdma_create_fail(ct, NULL, RPC_SYSTEMERROR, ENOMEM);
	}
	netid = addr->sa_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6;
	cl->cl_netid = strdup(netid);
	cl->cl_tp = strdup(rpcrdma_getnetconfigent(netid)->nc_device); /* as clnt_tli_create() sets it */
	cl->cl_auth = authnone_create();
	if (!cl->cl_netid || !cl->cl_tp || !cl->cl_auth)
		return clnt_rdma_create_fail(ct, cl, RPC_SYSTEMERROR, ENOMEM);
	rpcrdma_device_user_add(&ct->device_user); /* before a connection is there to be told of */
	rc = clnt_conn_open(ct, INT64_MAX, &cn);
	if (!rc) {
		pthread_mutex_lock(&ct->lock);
		rc = clnt_conn_publish(ct, cn);
		clnt_rdma_unlock(ct);
	}
	if (rc)
		return clnt_rdma_create_fail(ct, cl, RPC_SYSTEMERROR, -rc);
	cl->cl_ops = (struct clnt_ops *)&clnt_rdma_ops; /* libtirpc declares it non-const */
	cl->cl_private = ct;
	return cl;
}

CLIENT *clnt_rdma_tli_create(const struct sockaddr *addr, rpcprog_t prog, rpcvers_t vers,
			     const struct rpcrdma_options *o)
{
	struct rpcrdma_options opts;
	int rc;

	if (!addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return clnt_rdma_create_fail(NULL, NULL, RPC_UNKNOWNADDR, EAFNOSUPPORT);
	rc = rpcrdma_options_load(&opts, o);
	if (rc)
		return clnt_rdma_create_fail(NULL, NULL, RPC_SYSTEMERROR, -rc);
	return clnt_rdma_open(addr, prog, vers, &opts);
}

/*
 * What a failed rpcbind lookup (@rc, rpcrdma_rpcb_lookup) tells the
 * caller, every field set: nothing of an earlier failure may show.
 * @lookup_err: the lookup's own rpc_createerr, for -EHOSTUNREACH (rpcbind
 * not reached), -EIO (the rpcbind call failed) and -EADDRNOTAVAIL (no
 * address of the family for a wildcard registration, or none in time).
 */
static CLIENT *clnt_rdma_lookup_fail(int rc, const rpcrdma_createerr *lookup_err)
{
	switch (rc) {
	case -EHOSTUNREACH:
	case -EIO:
	case -EADDRNOTAVAIL:
		rpc_createerr = *lookup_err;
		return NULL;
	case -ENOENT:
		return clnt_rdma_create_fail(NULL, NULL, RPC_PROGNOTREGISTERED, ENOENT);
	case -EINVAL: /* the registered universal address does not parse */
		return clnt_rdma_create_fail(NULL, NULL, RPC_PMAPFAILURE, EINVAL);
	default:
		return clnt_rdma_create_fail(NULL, NULL, RPC_SYSTEMERROR, -rc);
	}
}

CLIENT *clnt_rdma_create(const char *host, rpcprog_t prog, rpcvers_t vers, const char *netid,
			 const struct rpcrdma_options *o)
{
	static const char *const both[] = { RPCRDMA_NETID, RPCRDMA_NETID6 };
	rpcrdma_createerr kept_err = { .cf_stat = RPC_SUCCESS };
	struct rpcrdma_options opts;
	struct sockaddr_storage ss;
	int family, kept = 0, rc;
	int64_t deadline;

	if (netid && !rpcrdma_netid_family(netid, &family))
		return clnt_rdma_create_fail(NULL, NULL, RPC_UNKNOWNPROTO, EINVAL);
	rc = rpcrdma_options_load(&opts, o); /* bad options say so before any lookup */
	if (rc)
		return clnt_rdma_create_fail(NULL, NULL, RPC_SYSTEMERROR, -rc);
	deadline = rpcrdma_now_ms() + opts.connect_timeout_ms; /* for the lookups together */
	for (size_t i = 0; i < 2; i++) {
		const char *id = netid ? netid : both[i];
		int left = rpcrdma_ms_left(deadline);

		rc = rpcrdma_rpcb_lookup_timed(host, prog, vers, id, left > 0 ? left : 1, &ss);
		if (!rc)
			return clnt_rdma_open((struct sockaddr *)&ss, prog, vers, &opts);
		/* with both netids, the first failure unless it found no server to ask */
		if (!kept || kept == -EHOSTUNREACH || kept == -EADDRNOTAVAIL) {
			kept = rc;
			kept_err = rpc_createerr;
		}
		if (netid)
			break;
	}
	return clnt_rdma_lookup_fail(kept, &kept_err);
}
