/*
 * What moves over a connected endpoint: receives posted again once
 * their message is consumed; Sends, RDMA Reads and Writes, memory-window
 * binds and local invalidations posted to the send queue; and the
 * completion queue polled and waited on.  Every send-queue work request
 * is signaled and gets an internal wr_id (a slot after the receive
 * indexes), so a flushed completion, whose opcode is undefined, still
 * reports its kind and the caller's wr_id.  Posts may come from several
 * threads while another polls (the CLIENT posts without its lock): they
 * serialize on the endpoint's post_lock, and the poll retires send
 * slots with atomics.  The completion loop follows rdma-core's: get the
 * channel's event, re-arm, poll, ack.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>

#include "rpcrdma/verbs_internal.h"

#define RPCRDMA_WC_BATCH 16
/*
 * The kernel's IB_WC_WITH_INVALIDATE (1 << 2); in a user CQE that bit
 * is IBV_WC_IP_CSUM_OK.
 */
#define RPCRDMA_KERNEL_WC_WITH_INV (1u << 2)

uint8_t *rpcrdma_ep_recv_buf(const struct rpcrdma_ep *ep, uint32_t index)
{
	if (index >= ep->params.recv_count)
		return NULL;
	return ep->recv_bufs + (size_t)index * ep->params.recv_size;
}

int rpcrdma_ep_repost_recv(struct rpcrdma_ep *ep, uint32_t index)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rpcrdma_ep_recv_buf(ep, index),
		.length = ep->params.recv_size,
		.lkey = ep->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = index, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (index >= ep->params.recv_count)
		return -EINVAL;
	if (!ep->id->qp) /* rpcrdma_ep_stop destroyed it */
		return -ENOTCONN;
	return verbs_rc(ibv_post_recv(ep->id->qp, &wr, &bad));
}

/*
 * Every send-queue WR is signaled and takes a slot until its completion.
 * The @n WRs chained from @wr, all of @kind, are posted at once (one
 * doorbell); the slots are counted busy before the post, since the poll
 * may retire them as soon as it is done.  post_lock held.
 */
static int ep_post_chain(struct rpcrdma_ep *ep, struct ibv_send_wr *wr, uint32_t n,
			 enum rpcrdma_wc_kind kind, const uint64_t *wr_ids, uint32_t *done)
{
	uint32_t depth = ep->params.send_depth, posted = 0;
	struct ibv_send_wr *bad = NULL, *w = wr;
	int rc;

	*done = 0;
	if (__atomic_load_n(&ep->disconnected, __ATOMIC_RELAXED))
		return -ENOTCONN;
	if (n > depth - __atomic_load_n(&ep->slots_busy, __ATOMIC_ACQUIRE))
		return -ENOBUFS;
	for (uint32_t i = 0; i < n; i++, w = w->next) {
		struct rpcrdma_send_slot *sl = &ep->slots[(ep->slot_next + i) % depth];

		if (w->num_sge < 0 || (uint32_t)w->num_sge > ep->params.max_send_sge)
			return -EINVAL;
		__atomic_store_n(&sl->wr_id, wr_ids[i], __ATOMIC_RELAXED);
		__atomic_store_n(&sl->kind, kind, __ATOMIC_RELEASE);
		w->wr_id = (uint64_t)ep->params.recv_count + (ep->slot_next + i) % depth;
		w->send_flags |= IBV_SEND_SIGNALED;
	}
	__atomic_add_fetch(&ep->slots_busy, n, __ATOMIC_ACQ_REL);
	rc = verbs_rc(ibv_post_send(ep->id->qp, wr, &bad));
	for (w = wr; rc && bad && w && w != bad; w = w->next)
		posted++; /* a provider that names no bad WR posted none */
	if (!rc)
		posted = n;
	__atomic_sub_fetch(&ep->slots_busy, n - posted, __ATOMIC_ACQ_REL);
	ep->slot_next = (ep->slot_next + posted) % depth;
	*done = posted;
	return rc;
}

static int ep_post(struct rpcrdma_ep *ep, struct ibv_send_wr *wr, enum rpcrdma_wc_kind kind,
		   uint64_t wr_id)
{
	uint32_t posted;
	int rc;

	wr->next = NULL;
	pthread_mutex_lock(&ep->post_lock);
	rc = ep_post_chain(ep, wr, 1, kind, &wr_id, &posted);
	pthread_mutex_unlock(&ep->post_lock);
	return rc;
}

int rpcrdma_ep_post_sends(struct rpcrdma_ep *ep, struct rpcrdma_send *sends, uint32_t n,
			  uint32_t *posted)
{
	struct ibv_send_wr wr[RPCRDMA_POST_SENDS_MAX];
	uint64_t wr_ids[RPCRDMA_POST_SENDS_MAX];
	int rc = 0;

	*posted = 0;
	for (uint32_t at = 0; at < n && !rc; at += RPCRDMA_POST_SENDS_MAX) {
		uint32_t k = min_u32(n - at, RPCRDMA_POST_SENDS_MAX), done;

		for (uint32_t i = 0; i < k; i++) {
			struct rpcrdma_send *s = &sends[at + i];

			wr[i] = (struct ibv_send_wr){
				.next = i + 1 < k ? &wr[i + 1] : NULL,
				.sg_list = &s->sge,
				.num_sge = 1,
				.opcode = s->invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
			};
			if (s->invalidate)
				wr[i].invalidate_rkey = s->invalidate_rkey;
			/* siw takes inline data only for a plain Send (siw_activate_tx) */
			if (!s->invalidate && s->sge.length <= ep->info.send_wr_inline)
				wr[i].send_flags = IBV_SEND_INLINE;
			wr_ids[i] = s->wr_id;
		}
		pthread_mutex_lock(&ep->post_lock);
		rc = ep_post_chain(ep, wr, k, RPCRDMA_WC_SEND, wr_ids, &done);
		pthread_mutex_unlock(&ep->post_lock);
		*posted += done;
	}
	return rc;
}

static int ep_post_rdma(struct rpcrdma_ep *ep, enum ibv_wr_opcode opcode, enum rpcrdma_wc_kind kind,
			struct ibv_sge *sge, int nsge, uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = opcode,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return ep_post(ep, &wr, kind, wr_id);
}

int rpcrdma_ep_post_read(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			 uint32_t rkey, uint64_t wr_id)
{
	/* siw serves one SGE per Read (max_sge_rd); fail here, not as a broken QP. */
	if (nsge > 0 && (uint32_t)nsge > ep->max_read_sge)
		return -EINVAL;
	return ep_post_rdma(ep, IBV_WR_RDMA_READ, RPCRDMA_WC_READ, sge, nsge, raddr, rkey, wr_id);
}

int rpcrdma_ep_post_write(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			  uint32_t rkey, uint64_t wr_id)
{
	return ep_post_rdma(ep, IBV_WR_RDMA_WRITE, RPCRDMA_WC_WRITE, sge, nsge, raddr, rkey, wr_id);
}

int rpcrdma_ep_mw_alloc(struct rpcrdma_ep *ep, struct ibv_mw **out)
{
	struct ibv_mw *mw;

	if (!ep->info.device_has_mw)
		return -EOPNOTSUPP;
	errno_clear();
	mw = ibv_alloc_mw(ep->pd, IBV_MW_TYPE_2);
	if (!mw)
		return neg_errno(ENOMEM);
	*out = mw;
	return 0;
}

void rpcrdma_ep_mw_free(struct ibv_mw *mw)
{
	if (mw)
		ibv_dealloc_mw(mw);
}

static bool mw_range_valid(const struct ibv_mr *mr, uint64_t addr, uint64_t len)
{
	uint64_t start = (uintptr_t)mr->addr;

	return len && addr >= start && len <= mr->length && addr - start <= mr->length - len;
}

int rpcrdma_ep_post_bind_mw(struct rpcrdma_ep *ep, struct ibv_mw *mw, struct ibv_mr *mr,
			    uint64_t addr, uint64_t len, unsigned int access, uint64_t wr_id,
			    uint32_t *rkey)
{
	const unsigned int remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };
	int rc;

	if (!mw || !mr || !access || (access & ~remote) || !mw_range_valid(mr, addr, len))
		return -EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = addr, .length = len, .mw_access_flags = access,
	};
	rc = ep_post(ep, &wr, RPCRDMA_WC_BIND_MW, wr_id);
	if (rc)
		return rc;
	mw->rkey = wr.bind_mw.rkey;
	*rkey = mw->rkey;
	return 0;
}

int rpcrdma_ep_post_local_inv(struct rpcrdma_ep *ep, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = rkey };

	return ep_post(ep, &wr, RPCRDMA_WC_LOCAL_INV, wr_id);
}

int rpcrdma_ep_fd(const struct rpcrdma_ep *ep)
{
	return ep->comp_channel->fd;
}

/*
 * A receive was a Send With Invalidate when the provider says so with
 * IBV_WC_WITH_INV.  rxe does not: its kernel marks the CQE with
 * IB_WC_WITH_INVALIDATE, which user space reads as IBV_WC_IP_CSUM_OK,
 * and fills invalidated_rkey.  That bit is taken as the mark only on
 * rxe (its vendor id), which sets it for nothing else and zeroes each
 * CQE, and only without IBV_WC_WITH_IMM (the rkey shares a union with
 * the immediate data).  The rkey alone is never trusted: providers
 * leave it alone for plain Sends, and rpcrdma_ep_poll() zeroes the
 * array they fill so a stale value cannot remain there either.
 */
static void wc_recv_invalidate(const struct rpcrdma_ep *ep, const struct ibv_wc *in,
			       struct rpcrdma_wc *out)
{
	bool inv = in->wc_flags & IBV_WC_WITH_INV;

	if (!inv && ep->rxe_wc_flags && !(in->wc_flags & IBV_WC_WITH_IMM))
		inv = in->wc_flags & RPCRDMA_KERNEL_WC_WITH_INV;
	out->with_invalidate = inv;
	out->invalidated_rkey = inv ? in->invalidated_rkey : 0;
}

static void wc_from_ibv(struct rpcrdma_ep *ep, const struct ibv_wc *in, struct rpcrdma_wc *out)
{
	uint64_t slot = in->wr_id - ep->params.recv_count;

	*out = (struct rpcrdma_wc){ .status = in->status };
	if (in->wr_id < ep->params.recv_count) {
		out->kind = RPCRDMA_WC_RECV;
		out->wr_id = in->wr_id;
		if (in->status == IBV_WC_SUCCESS) {
			out->byte_len = in->byte_len;
			wc_recv_invalidate(ep, in, out);
		}
		return;
	}
	if (slot >= ep->params.send_depth) {
		/* no work request of ours: a provider fault, which ends the connection as one */
		out->status = IBV_WC_GENERAL_ERR;
		out->kind = RPCRDMA_WC_SEND;
		out->wr_id = UINT64_MAX;
		return;
	}
	out->kind = __atomic_load_n(&ep->slots[slot].kind, __ATOMIC_ACQUIRE);
	out->wr_id = __atomic_load_n(&ep->slots[slot].wr_id, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&ep->slots_busy, 1, __ATOMIC_ACQ_REL);
}

int rpcrdma_wc_errno(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_WR_FLUSH_ERR:
		return ECONNRESET;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return ETIMEDOUT;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return ENOBUFS;
	case IBV_WC_REM_ACCESS_ERR:
		return EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		return EREMOTEIO;
	case IBV_WC_BAD_RESP_ERR:
		return EPROTO;
	case IBV_WC_LOC_LEN_ERR:
		return EMSGSIZE; /* a message larger than the posted receive, or a work request than the device allows */
	default:
		return EIO;
	}
}

const char *rpcrdma_wc_failure(enum ibv_wc_status status)
{
	if (status == IBV_WC_WR_FLUSH_ERR)
		return "the queue pair went down, its work requests flushed";
	return ibv_wc_status_str(status);
}

/*
 * Consume the channel's event and re-arm before polling, so none is lost.
 * An armed CQ raises one event and is then disarmed, so one read finds it,
 * and a CQ still armed needs no new request: each is a system call (rxe
 * requests notification through the kernel), paid on every poll otherwise.
 */
static int ep_cq_rearm(struct rpcrdma_ep *ep)
{
	struct ibv_cq *cq;
	void *ctx;
	int rc;

	if (ep->cq_armed && ibv_get_cq_event(ep->comp_channel, &cq, &ctx) == 0) {
		ep->cq_events++;
		ep->cq_armed = false;
	}
	if (ep->cq_armed)
		return 0;
	rc = verbs_rc(ibv_req_notify_cq(ep->cq, 0));
	ep->cq_armed = !rc;
	return rc;
}

int rpcrdma_ep_poll(struct rpcrdma_ep *ep, struct rpcrdma_wc *wc, int max)
{
	struct ibv_wc batch[RPCRDMA_WC_BATCH];
	int count = 0, n;
	int rc = ep_cq_rearm(ep);

	if (rc || max <= 0)
		return rc;
	do {
		memset(batch, 0, sizeof(batch));
		n = ibv_poll_cq(ep->cq, min_u32((uint32_t)(max - count), RPCRDMA_WC_BATCH), batch);
		for (int i = 0; i < n; i++)
			wc_from_ibv(ep, &batch[i], &wc[count++]);
	} while (n == RPCRDMA_WC_BATCH && count < max);
	if (ep->cq_events) {
		ibv_ack_cq_events(ep->cq, ep->cq_events);
		ep->cq_events = 0;
	}
	return n < 0 ? -EIO : count;
}

/* Why @ep is disconnected: its cm event's -ENODEV (device removal), else -ECONNRESET. */
static int ep_disconnect_err(const struct rpcrdma_ep *ep)
{
	return ep->disconnect_err == -ENODEV ? -ENODEV : -ECONNRESET;
}

int rpcrdma_ep_wait(struct rpcrdma_ep *ep, int timeout_ms)
{
	/* A zero timeout reads no clock: in the test bed's guest that is a system call. */
	int64_t deadline = timeout_ms > 0 ? rpcrdma_now_ms() + timeout_ms : 0;
	struct pollfd pfd[2] = {
		{ .fd = ep->comp_channel->fd, .events = POLLIN },
		{ .fd = ep->cm_channel->fd, .events = POLLIN },
	};
	int n;

	do {
		if (ep->disconnected)
			return ep_disconnect_err(ep);
		n = poll(pfd, 2, timeout_ms <= 0 ? timeout_ms : rpcrdma_ms_left(deadline));
		if (n < 0 && errno != EINTR)
			return neg_errno(EIO);
		if (n > 0 && pfd[1].revents)
			rpcrdma_ep_cm_drain(ep);
		if (ep->disconnected)
			return ep_disconnect_err(ep);
		if (n > 0 && pfd[0].revents)
			return 1;
	} while (timeout_ms < 0 || (timeout_ms > 0 && rpcrdma_ms_left(deadline) > 0));
	return 0;
}

const char *rpcrdma_ep_wait_failure(int rc)
{
	if (rc == -ENODEV)
		return "the connection manager reported its RDMA device's removal";
	return rc == -ECONNRESET ? "the connection manager reported a disconnect"
				 : "waiting for connection manager events failed";
}

uint32_t rpcrdma_ep_send_depth(const struct rpcrdma_ep *ep)
{
	return ep->params.send_depth;
}

uint32_t rpcrdma_ep_send_free(const struct rpcrdma_ep *ep)
{
	return ep->params.send_depth - __atomic_load_n(&ep->slots_busy, __ATOMIC_ACQUIRE);
}
