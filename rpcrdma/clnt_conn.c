/*
 * The CLIENT's connections: connecting and reconnecting, the slot table
 * that matches replies to calls by XID, credit waits, the completion
 * dispatcher and the poller hand-off that lets many threads wait on one
 * completion queue.  A connection lives while the CLIENT uses it or a
 * call is attached to it; a lost connection fails its calls and the
 * next call builds a new one with credits at 1.
 */
#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/clnt_internal.h"
#include "rpcrdma/debug.h"
#include "rpcrdma/options.h"

#define CONN_WC_BATCH     32
#define CONN_KEEP_BYTES   (64ull << 20)
#define CONN_INV_GRACE_MS 2000

/*
 * ThreadSanitizer models sem_post as a release but does not intercept
 * sem_clockwait (clang 14): without this it takes everything a woken
 * call reads of its waker's writes for a race.
 */
#if defined(__SANITIZE_THREAD__)
#define CONN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CONN_TSAN 1
#endif
#endif
#ifdef CONN_TSAN
void __tsan_acquire(void *addr);
static void sem_acquired(sem_t *s)
{
	__tsan_acquire(s);
}
#else
static void sem_acquired(sem_t *s)
{
	(void)s;
}
#endif

bool clnt_call_replied(const struct clnt_rdma_call *c)
{
	return c->replied && !c->conn->slots[c->slot].send_pending;
}

/*
 * Nothing of @c's stays exposed that needs a completion to end: no chunk
 * buffer, or one whose revocation is done on the spot.  (While a local
 * invalidation is awaited the buffer is no longer exposed: false.)
 */
static bool clnt_call_revoke_is_synchronous(const struct clnt_rdma_call *c)
{
	return !c->rb || rpcrdma_reg_revoke_is_synchronous(c->conn->reg, c->rb, c->invalidated_rkey);
}

/* Read without ct->lock by the scans below: a call may free its slot without it. */
static bool slot_busy(const struct clnt_rdma_slot *s)
{
	return __atomic_load_n(&s->busy, __ATOMIC_ACQUIRE);
}

void clnt_call_wake(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	if (!c->waiting)
		return;
	c->waiting = false;
	c->woken_replied = clnt_call_replied(c) && clnt_call_revoke_is_synchronous(c);
	if (c->woken_replied)
		c->conn->slots[c->slot].call = NULL; /* the call frees the slot alone: never look at it again */
	c->wake_next = ct->wakes;
	ct->wakes = c;
}

static void post_wakes(struct clnt_rdma_call *c)
{
	while (c) {
		struct clnt_rdma_call *next = c->wake_next; /* @c may be gone once posted */

		sem_post(&c->wake);
		c = next;
	}
}

void clnt_rdma_unlock(struct rpcrdma_clnt *ct)
{
	struct clnt_rdma_call *woken = ct->wakes;

	ct->wakes = NULL;
	pthread_mutex_unlock(&ct->lock);
	post_wakes(woken);
}

void clnt_rdma_post_wakes(struct rpcrdma_clnt *ct)
{
	post_wakes(ct->wakes);
	ct->wakes = NULL;
}

/* Revoke and put the chunk buffer an orphaned slot kept exposed, if any. */
static void slot_put_exposed(struct clnt_rdma_conn *cn, struct clnt_rdma_slot *s)
{
	if (!s->rb)
		return;
	/* a revocation that must post and wait is not made: put destroys an exposed buffer */
	if (rpcrdma_reg_revoke_is_synchronous(cn->reg, s->rb, s->invalidated_rkey))
		(void)rpcrdma_reg_revoke(cn->reg, s->rb, s->invalidated_rkey, 0);
	rpcrdma_reg_put(cn->reg, s->rb);
	s->rb = NULL;
}

static void conn_free(struct clnt_rdma_conn *cn)
{
	if (!cn)
		return;
	for (uint32_t i = 0; cn->slots && i < cn->nslots; i++)
		slot_put_exposed(cn, &cn->slots[i]);
	rpcrdma_reg_destroy(cn->reg);
	rpcrdma_mr_dereg(cn->send_mr);
	rpcrdma_ep_destroy(cn->ep);
	free(cn->send_bufs);
	free(cn->slots);
	free(cn->sendq);
	free(cn->postq);
	if (cn->wake_fd >= 0)
		close(cn->wake_fd);
	pthread_cond_destroy(&cn->posted_cv);
	free(cn);
}

/* One more reference: for a call attached, or a thread that polls a connection it is not attached to. */
static void conn_hold(struct clnt_rdma_conn *cn)
{
	__atomic_add_fetch(&cn->refs, 1, __ATOMIC_RELAXED);
}

void clnt_conn_put(struct clnt_rdma_conn *cn)
{
	if (cn && __atomic_sub_fetch(&cn->refs, 1, __ATOMIC_ACQ_REL) == 0)
		conn_free(cn);
}

static int conn_buffers(struct clnt_rdma_conn *cn, uint32_t nslots)
{
	cn->nslots = nslots;
	cn->slots = calloc(nslots, sizeof(*cn->slots));
	cn->send_bufs = calloc(nslots, cn->send_size);
	cn->sendq = calloc(nslots, sizeof(*cn->sendq));
	cn->postq = calloc(nslots, sizeof(*cn->postq));
	if (!cn->slots || !cn->send_bufs || !cn->sendq || !cn->postq)
		return -ENOMEM;
	cn->send_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(cn->ep), cn->send_bufs,
				     (size_t)nslots * cn->send_size, IBV_ACCESS_LOCAL_WRITE);
	return cn->send_mr ? 0 : -errno;
}

static enum rpcrdma_registration conn_strategy(const struct rpcrdma_ep *ep)
{
	return rpcrdma_ep_info(ep)->device_has_mw ? RPCRDMA_REG_MEMORY_WINDOW
						  : RPCRDMA_REG_PER_CALL_MR;
}

int clnt_conn_open(struct rpcrdma_clnt *ct, int64_t deadline, struct clnt_rdma_conn **out)
{
	struct rpcrdma_ep_params params;
	int64_t now = rpcrdma_now_ms(), left = deadline - now;
	const struct rpcrdma_ep_info *info;
	struct clnt_rdma_conn *cn;
	int rc;

	if (left <= 0)
		return -ETIMEDOUT; /* a call out of time does not connect (a zero-timeout one has INT64_MAX) */
	cn = calloc(1, sizeof(*cn));
	if (!cn)
		return -ENOMEM;
	pthread_cond_init(&cn->posted_cv, NULL);
	cn->refs = 1;
	cn->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cn->wake_fd < 0) {
		rc = -errno;
		goto fail;
	}
	rpcrdma_options_ep_params(&ct->opts, &params);
	if (left < params.timeout_ms)
		params.timeout_ms = (int)left;
	rc = rpcrdma_ep_connect((const struct sockaddr *)&ct->addr, &params, &cn->ep);
	if (rc)
		goto fail;
	info = rpcrdma_ep_info(cn->ep);
	cn->send_size = ct->opts.inline_send;
	cn->inline_send = info->inline_params.send;
	cn->inline_recv = info->inline_params.recv;
	rc = conn_buffers(cn, ct->opts.credits);
	if (!rc)
		rc = rpcrdma_reg_create(cn->ep, conn_strategy(cn->ep), CONN_KEEP_BYTES, &cn->reg);
	if (rc)
		goto fail;
	rpcrdma_credits_client_init(&cn->credits, ct->opts.credits);
	rpcrdma_credits_client_reset(&cn->credits);
	cn->ccp = RPCRDMA_CCP_NOT_ASKED;
	if (ct->opts.use_ccp) {
		rc = clnt_rdma_ccp(ct, cn, now + params.timeout_ms); /* connect and CCP together */
		if (rc)
			goto fail;
	}
	*out = cn;
	return 0;
fail:
	conn_free(cn);
	return rc;
}

/* End the poller's sleep: a call it may be polling for failed in another thread. */
static void conn_wake_poller(const struct clnt_rdma_conn *cn)
{
	if (cn->polling)
		(void)eventfd_write(cn->wake_fd, 1);
}

/* The transport failed @c (its wait returns -@err): mark it and wake it.  ct->lock held. */
static void call_wait_fail(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int err)
{
	if (!c->failed) {
		c->failed = true;
		c->fail_errno = err;
	}
	clnt_call_wake(ct, c);
}

void clnt_conn_kill(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int err, const char *why)
{
	if (cn->dead)
		return;
	rpcrdma_debug_conn_lost("client", (const struct sockaddr *)&ct->addr, why, err);
	__atomic_store_n(&cn->dead, true, __ATOMIC_RELEASE); /* read without the lock too */
	cn->err = err;
	for (uint32_t i = 0; i < cn->nslots; i++)
		if (slot_busy(&cn->slots[i]) && cn->slots[i].call) {
			/* a Send still queued will not be posted: that call was not sent */
			cn->slots[i].call->send_failed |= cn->slots[i].queued;
			call_wait_fail(ct, cn->slots[i].call, err);
		}
	conn_wake_poller(cn);
	pthread_cond_broadcast(&ct->credit_cv);
	if (ct->conn == cn) {
		/*
		 * Let go of it now, not at the next call: once its calls have
		 * detached it is freed, its queue pair destroyed and the
		 * memory timed-out calls left exposed revoked.
		 */
		ct->conn = NULL;
		clnt_conn_put(cn);
	}
}

/*
 * Kill @cn (ct->conn) if its device is being removed (its node is
 * unlinked); the kill drops the CLIENT's reference (the calls still on
 * it hold theirs).  ct->lock held.  Returns true if killed.
 */
static bool conn_drop_if_removed(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	if (!rpcrdma_ep_device_gone(cn->ep))
		return false;
	clnt_conn_kill(ct, cn, ENODEV, "its RDMA device was removed");
	return true;
}

void clnt_conn_device_removed(struct rpcrdma_clnt *ct)
{
	pthread_mutex_lock(&ct->lock);
	if (ct->conn)
		conn_drop_if_removed(ct, ct->conn);
	clnt_rdma_unlock(ct);
}

int clnt_conn_publish(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	ct->conn = cn;
	ct->connects++;
	return conn_drop_if_removed(ct, cn) ? -ENODEV : 0; /* the watcher may have passed while it was built */
}

uint8_t *clnt_conn_send_buf(const struct clnt_rdma_conn *cn, uint32_t slot)
{
	return cn->send_bufs + (size_t)slot * cn->send_size;
}

/* ---- slots and credits --------------------------------------------------------- */

static void conn_progress(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn);
static void conn_sleep(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int64_t left);
static void conn_handoff(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn);

/*
 * Calls wait on credit_cv for a credit (counted in credit_waiters) or
 * for a connection being built.  Only the first care about a slot freed
 * or a grant changed.  ct->lock held.
 */
static void credit_waiters_wake(struct rpcrdma_clnt *ct)
{
	if (__atomic_load_n(&ct->credit_waiters, __ATOMIC_SEQ_CST))
		pthread_cond_broadcast(&ct->credit_cv);
}

/*
 * Give slot @i and its credit back, with ct->lock held or, by the call
 * that owns the slot and is no longer named by it, without.  The slot's
 * other fields are left stale: they are read only while it is busy.
 */
static void slot_free(struct clnt_rdma_conn *cn, uint32_t i)
{
	__atomic_store_n(&cn->slots[i].busy, false, __ATOMIC_SEQ_CST);
	rpcrdma_credits_client_release(&cn->credits);
}

bool clnt_conn_take_slot(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c)
{
	uint32_t cap = cn->ccp_pending ? 1 : UINT32_MAX;

	if (cn->dead || !rpcrdma_credits_client_acquire(&cn->credits, cap))
		return false;
	for (uint32_t i = 0; i < cn->nslots; i++)
		if (!slot_busy(&cn->slots[i])) {
			cn->slots[i] = (struct clnt_rdma_slot){ .call = c, .xid = c->xid, .busy = true };
			c->slot = i;
			c->conn = cn;
			conn_hold(cn);
			c->replied = c->failed = c->send_failed = false;
			c->have_recv = c->inv_pending = false;
			c->invalidated_rkey = 0;
			return true;
		}
	/* Unreachable while credits never exceed slots; do not leak the credit. */
	rpcrdma_credits_client_release(&cn->credits);
	return false;
}

/*
 * @deadline_ms as a CLOCK_MONOTONIC time for sem_clockwait and
 * pthread_cond_clockwait: no clock read (in a VM without a stable TSC
 * each one is a system call).
 */
static struct timespec mono_deadline(int64_t deadline_ms)
{
	struct timespec ts = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (deadline_ms % 1000) * 1000000,
	};

	return ts;
}

/*
 * Wait on credit_cv (credits or the connection changed) until @deadline.
 * ct->lock held.  Returns 0, or -ETIMEDOUT when the deadline has passed,
 * before or during the wait: nothing is sent after a wait that used up
 * the call's time.
 */
static int conn_credit_wait(struct rpcrdma_clnt *ct, int64_t deadline)
{
	struct timespec ts = mono_deadline(deadline);

	if (rpcrdma_now_ms() >= deadline)
		return -ETIMEDOUT;
	clnt_rdma_post_wakes(ct);
	pthread_cond_clockwait(&ct->credit_cv, &ct->lock, CLOCK_MONOTONIC, &ts);
	return rpcrdma_now_ms() >= deadline ? -ETIMEDOUT : 0;
}

/*
 * Handle @cn's pending rdma_cm events: a disconnect (rxe flushes nothing
 * until the queue pair is destroyed) kills it.  ct->lock held.
 */
static void conn_cm_read(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	int rc = rpcrdma_ep_wait(cn->ep, 0);

	if (rc < 0)
		clnt_conn_kill(ct, cn, -rc, rpcrdma_ep_wait_failure(rc));
}

/*
 * Nobody polls an idle connection, so its rdma_cm events wait: read
 * them before a call goes on it.  A disconnect that came meanwhile (the
 * server restarted) then sends the call on a new connection, where it
 * would otherwise be posted on the dead one and fail as if lost in
 * flight.  Once a clock tick at most: the look is a system call, and
 * calls back to back leave no idle time for a disconnect to wait in.
 */
static void conn_cm_check(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	int64_t tick = rpcrdma_coarse_ms();

	if (tick == cn->cm_checked_ms)
		return;
	cn->cm_checked_ms = tick;
	conn_cm_read(ct, cn);
}

/*
 * Wait for another caller's connect.  Returns 0, -ETIMEDOUT at @deadline,
 * or that connect's error when it failed with the whole connect timeout:
 * the callers that waited for it do not each try again in turn, one
 * connect timeout after another.  ct->lock held.
 */
static int conn_build_wait(struct rpcrdma_clnt *ct, int64_t deadline)
{
	uint32_t builds = ct->builds;
	bool waited = false;

	while (ct->connecting) {
		waited = true;
		if (conn_credit_wait(ct, deadline))
			return -ETIMEDOUT;
	}
	return waited && builds != ct->builds && !ct->conn ? ct->build_err : 0;
}

/* Connect without the lock while other callers wait (conn_build_wait).  ct->lock held. */
static int conn_build(struct rpcrdma_clnt *ct, int64_t deadline, struct clnt_rdma_conn **out)
{
	bool whole = deadline - rpcrdma_now_ms() >= ct->opts.connect_timeout_ms;
	int rc;

	ct->connecting = true;
	clnt_rdma_unlock(ct);
	rc = clnt_conn_open(ct, deadline, out);
	pthread_mutex_lock(&ct->lock);
	ct->connecting = false;
	ct->builds++;
	ct->build_err = rc && whole ? rc : 0;
	pthread_cond_broadcast(&ct->credit_cv);
	return rc;
}

/*
 * The live connection, building one when there is none.  A zero-timeout
 * call connects with the whole connect timeout, whatever is left of its
 * wait for a credit (@deadline).
 */
static int conn_current(struct rpcrdma_clnt *ct, const struct clnt_rdma_call *c, int64_t deadline,
			struct clnt_rdma_conn **out)
{
	struct clnt_rdma_conn *cn;
	int rc = conn_build_wait(ct, deadline);

	if (rc)
		return rc;
	if (ct->conn && !ct->conn->polling)
		conn_cm_check(ct, ct->conn); /* a disconnect kills it: ct->conn is then NULL */
	if (ct->conn) {
		*out = ct->conn;
		return 0;
	}
	rc = conn_build(ct, c->batched ? INT64_MAX : deadline, &cn);
	if (!rc)
		rc = clnt_conn_publish(ct, cn);
	if (rc)
		return rc;
	*out = cn;
	return 0;
}

/* Every credit is held by a call nobody waits for, so nobody polls for their replies either. */
static bool conn_orphaned(const struct clnt_rdma_conn *cn)
{
	return cn->orphans && cn->orphans >= rpcrdma_credits_client_outstanding(&cn->credits);
}

/* Until when a reply to some orphan is still awaited (batched calls); 0: none is. */
static int64_t conn_orphans_awaited_until(const struct clnt_rdma_conn *cn)
{
	int64_t until = 0;

	for (uint32_t i = 0; i < cn->nslots; i++) {
		const struct clnt_rdma_slot *s = &cn->slots[i];

		if (slot_busy(s) && !s->call && s->awaited_until > until)
			until = s->awaited_until;
	}
	return until;
}

enum conn_attach_wait {
	CONN_ATTACH_WAIT_CREDIT = 1,  /* a credit held by a call that is waited for */
	CONN_ATTACH_WAIT_ORPHANS = 2, /* every credit held by orphans whose replies are awaited */
};

/* A slot and credit, or -errno; else how to wait for one (enum conn_attach_wait). */
static int conn_try_attach(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline)
{
	struct clnt_rdma_conn *cn;
	int64_t now;
	int rc;

	for (;;) {
		rc = conn_current(ct, c, deadline, &cn);
		if (rc)
			return rc;
		if (clnt_conn_take_slot(cn, c))
			return 0;
		if (conn_orphaned(cn) && !cn->polling) {
			bool taken, dead;

			conn_hold(cn); /* a completion that kills it lets go of ct->conn's reference */
			conn_progress(ct, cn); /* their replies may be in */
			taken = clnt_conn_take_slot(cn, c);
			dead = cn->dead;
			clnt_conn_put(cn);
			if (taken)
				return 0;
			if (dead) /* a completion broke it: connect again */
				continue;
		}
		if (!conn_orphaned(cn))
			return CONN_ATTACH_WAIT_CREDIT;
		/* a zero-timeout call waits for their replies until its own deadline at most */
		now = rpcrdma_now_ms();
		if (conn_orphans_awaited_until(cn) > now && !(c->batched && now >= deadline))
			return CONN_ATTACH_WAIT_ORPHANS;
		/* their replies are lost: the credits come back only with a new connection */
		clnt_conn_kill(ct, cn, ETIMEDOUT, "every credit is held by a call without a reply");
	}
}

/* Poll for the orphans' replies until @end at most (the wait's role: no call of @cn polls). */
static void conn_orphans_poll(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int64_t now,
			      int64_t end)
{
	conn_hold(cn); /* ct->conn may be replaced meanwhile */
	cn->polling = true;
	conn_sleep(ct, cn, end > now ? end - now : 0);
	conn_progress(ct, cn);
	cn->polling = false;
	conn_handoff(ct, cn);
	credit_waiters_wake(ct); /* another waiter polls if this one leaves */
	clnt_conn_put(cn);
}

/*
 * Every credit is held by orphans whose replies are still awaited, and
 * nobody waits for their replies: poll for them (or, if another thread
 * does, wait for a credit) until one comes, they are no longer awaited,
 * or @deadline.  ct->lock held.  Returns 0, or for a call with time
 * -ETIMEDOUT when @deadline has passed, before the wait or during it
 * (nothing is sent after it).  A zero-timeout call is sent all the
 * same: past its @deadline conn_try_attach takes the orphans for lost
 * and connects again.
 */
static int conn_orphans_wait(struct rpcrdma_clnt *ct, const struct clnt_rdma_call *c,
			     int64_t deadline)
{
	struct clnt_rdma_conn *cn = ct->conn;
	int64_t now = rpcrdma_now_ms(), end = conn_orphans_awaited_until(cn);
	int rc;

	if (now >= deadline) {
		rc = -ETIMEDOUT;
	} else if (cn->polling) {
		rc = conn_credit_wait(ct, deadline);
	} else {
		conn_orphans_poll(ct, cn, now, end < deadline ? end : deadline);
		rc = rpcrdma_now_ms() >= deadline ? -ETIMEDOUT : 0;
	}
	return c->batched ? 0 : rc;
}

/*
 * A call that frees its slot without ct->lock (clnt_conn_detach_unlocked)
 * broadcasts credit_cv only when it sees credit_waiters: so a waiter
 * counts itself before it looks for a slot the last time, and then
 * either finds that slot free or is seen.
 */
int clnt_conn_attach(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline)
{
	int rc = conn_try_attach(ct, c, deadline);

	if (rc <= 0)
		return rc;
	__atomic_add_fetch(&ct->credit_waiters, 1, __ATOMIC_SEQ_CST);
	while ((rc = conn_try_attach(ct, c, deadline)) > 0)
		if (rc == CONN_ATTACH_WAIT_CREDIT ? conn_credit_wait(ct, deadline)
						  : conn_orphans_wait(ct, c, deadline)) {
			rc = -ETIMEDOUT;
			break;
		}
	__atomic_sub_fetch(&ct->credit_waiters, 1, __ATOMIC_SEQ_CST);
	return rc;
}

static void conn_repost(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, uint32_t index)
{
	if (!cn->dead && rpcrdma_ep_repost_recv(cn->ep, index))
		clnt_conn_kill(ct, cn, EIO, "reposting a receive failed");
}

void clnt_conn_keep_exposed(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c)
{
	struct clnt_rdma_slot *s = &cn->slots[c->slot];

	s->rb = c->rb;
	s->invalidated_rkey = c->replied ? c->invalidated_rkey : 0;
	c->rb = NULL;
}

void clnt_conn_detach(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	struct clnt_rdma_conn *cn = c->conn;
	struct clnt_rdma_slot *s;

	if (!cn)
		return;
	s = &cn->slots[c->slot];
	if (c->have_recv)
		conn_repost(ct, cn, c->recv_index);
	c->have_recv = false;
	if (!cn->dead && (s->reply_pending || s->send_pending)) {
		s->call = NULL;
		s->awaited_until = c->batched ? rpcrdma_now_ms() + ct->opts.connect_timeout_ms : 0;
		cn->orphans++;
	} else {
		slot_put_exposed(cn, s);
		slot_free(cn, c->slot);
	}
	credit_waiters_wake(ct); /* for a slot, or to reset a connection left all orphans */
	c->conn = NULL;
	clnt_conn_put(cn);
}

void clnt_conn_detach_unlocked(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	struct clnt_rdma_conn *cn = c->conn;
	bool dead = __atomic_load_n(&cn->dead, __ATOMIC_ACQUIRE);
	int rc = 0;

	/* as conn_repost: a receive posted on a broken connection is only flushed */
	if (c->have_recv && !dead)
		rc = rpcrdma_ep_repost_recv(cn->ep, c->recv_index);
	c->have_recv = false;
	slot_free(cn, c->slot);
	if (rc || __atomic_load_n(&ct->credit_waiters, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&ct->lock);
		if (rc)
			clnt_conn_kill(ct, cn, EIO, "reposting a receive failed");
		credit_waiters_wake(ct);
		clnt_rdma_unlock(ct);
	}
	c->conn = NULL;
	clnt_conn_put(cn);
}

int clnt_conn_post_send(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c, uint32_t len)
{
	if (cn->dead)
		return -ENOTCONN;
	cn->sendq[cn->nsendq++] = (struct rpcrdma_send){ /* a slot has one Send queued at most */
		.sge = { (uintptr_t)clnt_conn_send_buf(cn, c->slot), len, cn->send_mr->lkey },
		.wr_id = c->slot,
	};
	cn->slots[c->slot].queued = true;
	cn->slots[c->slot].send_pending = cn->slots[c->slot].reply_pending = true;
	return 0;
}

/* ---- completions ------------------------------------------------------------------ */

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static struct clnt_rdma_slot *conn_slot_by_xid(struct clnt_rdma_conn *cn, uint32_t xid)
{
	for (uint32_t i = 0; i < cn->nslots; i++)
		if (slot_busy(&cn->slots[i]) && cn->slots[i].reply_pending && cn->slots[i].xid == xid)
			return &cn->slots[i];
	return NULL;
}

/* The slot whose Send or local invalidation completed, if still in use. */
static struct clnt_rdma_slot *conn_slot_by_index(struct clnt_rdma_conn *cn, uint64_t index)
{
	return index < cn->nslots && slot_busy(&cn->slots[index]) ? &cn->slots[index] : NULL;
}

static void conn_orphan_check(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn,
			      struct clnt_rdma_slot *s)
{
	if (!s->call && !s->reply_pending && !s->send_pending) {
		cn->orphans--;
		slot_put_exposed(cn, s);
		slot_free(cn, (uint32_t)(s - cn->slots));
		credit_waiters_wake(ct);
	}
}

/* A reply: the credit grant is applied at once, the rest is the caller's. */
static void conn_take_reply(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn,
			    const struct rpcrdma_wc *wc)
{
	const uint8_t *buf = rpcrdma_ep_recv_buf(cn->ep, (uint32_t)wc->wr_id);
	struct clnt_rdma_slot *s = wc->byte_len >= 4 ? conn_slot_by_xid(cn, be32_at(buf)) : NULL;

	if (!s) {
		/* A duplicate, a reply to nothing, or garbage: drop it. */
		conn_repost(ct, cn, (uint32_t)wc->wr_id);
		return;
	}
	if (wc->byte_len >= 16 && be32_at(buf + 4) == RPCRDMA_VERSION)
		rpcrdma_credits_client_grant(&cn->credits, be32_at(buf + 8));
	credit_waiters_wake(ct);
	s->reply_pending = false;
	if (!s->call) {
		s->invalidated_rkey = wc->with_invalidate ? wc->invalidated_rkey : 0;
		conn_repost(ct, cn, (uint32_t)wc->wr_id);
		conn_orphan_check(ct, cn, s);
		return;
	}
	s->call->replied = s->call->have_recv = true;
	s->call->recv_index = (uint32_t)wc->wr_id;
	s->call->recv_len = wc->byte_len;
	s->call->invalidated_rkey = wc->with_invalidate ? wc->invalidated_rkey : 0;
	if (!s->send_pending)
		clnt_call_wake(ct, s->call);
}

static void conn_take_wc(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn,
			 const struct rpcrdma_wc *wc)
{
	struct clnt_rdma_slot *s;

	if (wc->status != IBV_WC_SUCCESS) {
		clnt_conn_kill(ct, cn, rpcrdma_wc_errno(wc->status), rpcrdma_wc_failure(wc->status));
		return;
	}
	switch (wc->kind) {
	case RPCRDMA_WC_RECV:
		conn_take_reply(ct, cn, wc);
		return;
	case RPCRDMA_WC_SEND:
		s = conn_slot_by_index(cn, wc->wr_id);
		if (!s)
			return;
		s->send_pending = false;
		if (!s->call)
			conn_orphan_check(ct, cn, s);
		else if (s->call->replied)
			clnt_call_wake(ct, s->call);
		return;
	case RPCRDMA_WC_LOCAL_INV:
		s = conn_slot_by_index(cn, wc->wr_id);
		if (s && s->call && s->call->inv_pending) {
			s->call->inv_pending = false;
			rpcrdma_reg_revoked(s->call->rb);
			clnt_call_wake(ct, s->call);
		}
		return;
	default:
		return; /* window binds: a failure shows as a broken queue pair */
	}
}

/* Poll and dispatch what is there.  ct->lock held. */
static void conn_progress(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	struct rpcrdma_wc wc[CONN_WC_BATCH];
	int n;

	if (cn->dead)
		return;
	do {
		n = rpcrdma_ep_poll(cn->ep, wc, CONN_WC_BATCH);
		if (n < 0) {
			clnt_conn_kill(ct, cn, -n, "polling the completion queue failed");
			return;
		}
		for (int i = 0; i < n && !cn->dead; i++)
			conn_take_wc(ct, cn, &wc[i]);
	} while (n == CONN_WC_BATCH && !cn->dead);
}

/*
 * Sleep without the lock, at most @left ms, until the completion or cm
 * channel has news; rdma_cm events are read only when their channel has
 * some.
 */
static void conn_sleep(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, int64_t left)
{
	struct pollfd pfd[3] = {
		{ .fd = rpcrdma_ep_fd(cn->ep), .events = POLLIN },
		{ .fd = rpcrdma_ep_cm_fd(cn->ep), .events = POLLIN },
		{ .fd = cn->wake_fd, .events = POLLIN },
	};
	eventfd_t kicks;
	int n;

	clnt_rdma_unlock(ct);
	n = poll(pfd, 3, left > 1000 ? 1000 : (int)left);
	if (n > 0 && pfd[2].revents)
		(void)eventfd_read(cn->wake_fd, &kicks);
	pthread_mutex_lock(&ct->lock);
	if (n > 0 && pfd[1].revents && !cn->dead)
		conn_cm_read(ct, cn);
}

/* The poller left: wake one waiting call to take over. */
static void conn_handoff(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	for (uint32_t i = 0; i < cn->nslots; i++) {
		struct clnt_rdma_call *c = slot_busy(&cn->slots[i]) ? cn->slots[i].call : NULL;

		if (c && c->waiting) {
			clnt_call_wake(ct, c);
			return;
		}
	}
}

/*
 * Sleep on @c's semaphore without the lock until woken or @deadline.
 * A wake-up that raced with the timeout is still owed a post: take it,
 * so no post is left for the next wait and @c outlives its poster.
 * Returns true, the lock not retaken, when the wake found @c's reply
 * complete and no revocation to wait for: the waker wrote woken_replied before
 * the post and nothing changes @c's reply state after that.
 */
static bool call_sleep(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline)
{
	struct timespec ts = mono_deadline(deadline);
	int rc;

	c->waiting = true;
	clnt_rdma_unlock(ct);
	do
		rc = sem_clockwait(&c->wake, CLOCK_MONOTONIC, &ts);
	while (rc && errno == EINTR);
	if (!rc)
		sem_acquired(&c->wake);
	if (!rc && c->woken_replied)
		return true;
	pthread_mutex_lock(&ct->lock);
	if (c->waiting) {
		c->waiting = false; /* timed out, nobody woke it */
		return false;
	}
	if (!rc)
		return false;
	clnt_rdma_post_wakes(ct); /* ours may still be on the list */
	clnt_rdma_unlock(ct);     /* its poster needs no lock: do not stall the others meanwhile */
	while (sem_wait(&c->wake) && errno == EINTR)
		;
	pthread_mutex_lock(&ct->lock);
	return false;
}

/*
 * The Sends from @first on were not posted: their calls fail as unsent.
 * Their slots are still theirs: a call does not leave its slot while
 * its Send is in a post (conn_wait_posted), and a slot is not freed while
 * its Send is pending.  A dead connection's kill has failed the calls
 * already, not knowing whether these Sends would go out: they did not.
 * ct->lock held.
 */
static void conn_sends_failed(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn, uint32_t first,
			      uint32_t n, int err)
{
	for (uint32_t i = first; i < n; i++) {
		struct clnt_rdma_slot *s = &cn->slots[cn->postq[i].wr_id];

		if (cn->dead) {
			if (s->call)
				s->call->send_failed = true;
			continue;
		}
		s->send_pending = s->reply_pending = false;
		if (!s->call) {
			conn_orphan_check(ct, cn, s);
			continue;
		}
		s->call->send_failed = true;
		call_wait_fail(ct, s->call, err);
	}
	conn_wake_poller(cn);
}

/*
 * Post the queued Sends, unless another thread does: it looks again
 * after its post, so nothing queued is left behind.  ct->lock held;
 * released during the post.
 */
static void conn_post_queued(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn)
{
	while (cn->nsendq && !cn->posting) {
		uint32_t n = cn->nsendq, posted;
		int rc;

		if (cn->dead) { /* its calls failed as unsent: nothing goes out on it any more */
			cn->nsendq = 0;
			if (cn->posted_waiters)
				pthread_cond_broadcast(&cn->posted_cv);
			return;
		}
		memcpy(cn->postq, cn->sendq, n * sizeof(*cn->postq));
		for (uint32_t i = 0; i < n; i++) {
			cn->slots[cn->sendq[i].wr_id].queued = false;
			cn->slots[cn->sendq[i].wr_id].in_post = true;
		}
		cn->nsendq = 0;
		cn->posting = true;
		clnt_rdma_unlock(ct);
		rc = rpcrdma_ep_post_sends(cn->ep, cn->postq, n, &posted);
		pthread_mutex_lock(&ct->lock);
		cn->posting = false;
		if (rc)
			conn_sends_failed(ct, cn, posted, n, -rc);
		for (uint32_t i = 0; i < n; i++) /* a slot freed and taken meanwhile is in no post */
			cn->slots[cn->postq[i].wr_id].in_post = false;
		if (cn->posted_waiters)
			pthread_cond_broadcast(&cn->posted_cv);
	}
}

/*
 * @c stops waiting (its time is up, it failed, the connection died)
 * while its Send is still queued behind another thread's post, or in
 * that post: wait until the post has returned (the poster looks again
 * after it), so the Send goes out before the caller revokes its chunks,
 * a zero-timeout call is still sent, and a Send the post did not take
 * counts as unsent (conn_sends_failed).  On a dead connection a Send
 * still queued is not posted: the kill counted it unsent.  ct->lock held.
 */
static void conn_wait_posted(struct rpcrdma_clnt *ct, struct clnt_rdma_conn *cn,
			     const struct clnt_rdma_call *c)
{
	for (;;) {
		const struct clnt_rdma_slot *s = &cn->slots[c->slot];

		conn_post_queued(ct, cn);
		if (!s->in_post && (!s->queued || cn->dead))
			return;
		cn->posted_waiters++;
		clnt_rdma_post_wakes(ct);
		pthread_cond_wait(&cn->posted_cv, &ct->lock);
		cn->posted_waiters--;
	}
}

int clnt_conn_wait(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c, int64_t deadline,
		   bool (*done)(const struct clnt_rdma_call *c))
{
	struct clnt_rdma_conn *cn = c->conn;
	int rc = 0;

	conn_post_queued(ct, cn);
	while (!done(c)) {
		int64_t left;

		if (c->failed || cn->dead) {
			rc = -(c->failed ? c->fail_errno : cn->err);
			break;
		}
		left = deadline - rpcrdma_now_ms();
		if (left <= 0) {
			rc = CLNT_CONN_DEADLINE;
			break;
		}
		if (!cn->polling) {
			cn->polling = true;
			conn_progress(ct, cn);
			if (!done(c) && !c->failed && !cn->dead)
				conn_sleep(ct, cn, left);
			conn_progress(ct, cn);
			cn->polling = false;
			continue;
		}
		if (call_sleep(ct, c, deadline))
			return CLNT_CONN_REPLIED_UNLOCKED; /* no hand-off owed: a poller hands off itself */
	}
	if (rc)
		conn_wait_posted(ct, cn, c);
	if (rc == CLNT_CONN_DEADLINE && c->send_failed) /* dropped from the queue: never sent */
		rc = c->fail_errno ? -c->fail_errno : -ECONNRESET;
	if (!cn->polling)
		conn_handoff(ct, cn);
	return rc;
}

/* For callers that must not return while a window may still be written. */
int64_t clnt_conn_inv_deadline(void)
{
	return rpcrdma_now_ms() + CONN_INV_GRACE_MS;
}
