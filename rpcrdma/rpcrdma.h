/*
 * The public API of rpcrdma: libtirpc CLIENT and SVCXPRT handles that
 * carry ONC RPC over RDMA (RPC-over-RDMA version 1, RFC 8166, with
 * RFC 8797 connection private data).  Programs keep their rpcgen XDR
 * routines and use clnt_call(), svc_run(), svc_getargs() and
 * svc_sendreply() as with any other transport.
 *
 * Which arguments and results may travel by direct data placement
 * (read and write chunks) is the upper-layer binding's decision
 * (RFC 8166 section 6): struct rpcrdma_ulb names them per procedure.
 * A procedure the binding does not list moves everything inline or in
 * long messages (position-zero read chunk, reply chunk).
 *
 * Failures of the create functions set libtirpc's rpc_createerr, so
 * clnt_pcreateerror() explains them; call failures are reported by
 * clnt_call()'s status and clnt_geterr()/clnt_sperror().
 */
#ifndef RPCRDMA_RPCRDMA_H
#define RPCRDMA_RPCRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Upper-layer binding of one procedure. */
struct rpcrdma_ulb_proc {
	rpcproc_t proc;
	/* bit k-1: the k-th non-empty opaque item of the arguments may become a read chunk */
	uint32_t arg_ddp;
	/* bit k-1: the k-th non-empty opaque item of the results may land in a write chunk */
	uint32_t res_ddp;
	/* largest length of DDP result @item (0-based among res_ddp's bits); NULL: max_rpc_size */
	uint32_t (*res_max)(const void *args, unsigned int item);
	/*
	 * Largest XDR length of the results without the DDP results' data
	 * (their length words count); the RPC reply header is added by the
	 * transport.  NULL: unknown, max_rpc_size is assumed.
	 */
	uint32_t (*reply_max)(const void *args);
};

struct rpcrdma_ulb {
	rpcprog_t prog;
	rpcvers_t vers;
	const struct rpcrdma_ulb_proc *procs;
	size_t nprocs;
};

/*
 * Options of a CLIENT or listener.  Start from rpcrdma_options_init()
 * and change fields: it sets @size to this struct's size in the
 * program's build.  Later versions of the library only append fields,
 * so the size tells a library how much of the struct the program has:
 * fields a shorter struct lacks take their defaults, and a longer one
 * is refused (E2BIG) if it sets fields this library does not know.
 * A size below the first version's or above 4096 is refused (EINVAL).
 */
struct rpcrdma_options {
	uint32_t size;               /* sizeof(struct rpcrdma_options), set by rpcrdma_options_init */
	uint32_t inline_send;        /* our receive/send buffer sizes advertised in private data */
	uint32_t inline_recv;
	uint32_t credits;            /* client: slots asked for; server: receives posted */
	uint32_t max_rpc_size;       /* largest complete RPC message accepted or built */
	uint32_t ird, ord;           /* RDMA Read depths wanted (capped by the device) */
	/*
	 * Set R in the private data (RFC 8797).  A client sets it only on a
	 * device with type-2 memory windows, where each call's remotely
	 * accessible memory is one window that is safe to invalidate; a
	 * server answers with Send With Invalidate when both peers set it.
	 */
	bool remote_invalidate;
	bool use_ccp;                /* client: run RFC 5666 CCP after connecting */
	/*
	 * client: a call interrupted by the loss of its connection is sent
	 * again on a new connection while its timeout allows (never on the
	 * connection it was first sent on); otherwise it fails with
	 * RPC_CANTRECV and the next call reconnects.  With it,
	 * CLSET_RETRY_TIMEOUT also resends a call that had no reply for
	 * that long, on a new connection.
	 */
	bool reconnect_resend;
	int connect_timeout_ms;
	/* client: what CLGET_TIMEOUT reports until CLSET_TIMEOUT or a call; as with
	 * libtirpc's transports, clnt_call() uses its own timeout unless CLSET_TIMEOUT
	 * was used, and a negative one stands for the last valid one (this before any) */
	struct timeval call_timeout;
	const struct rpcrdma_ulb *ulb; /* client: binding of the program, or NULL */
	/* ---- appended after the first version ---- */
	/*
	 * InfiniBand and RoCE: the queue pair's local ACK timeout, 4.096 us
	 * x 2^ack_timeout (1-31), how long a sent packet waits for its
	 * acknowledgement before it is sent again; 0 (default): for a
	 * client on rxe 21 if rdma_cm takes it (about 8.6 s: rxe's
	 * retransmissions break connections that bind memory windows, see
	 * rpcrdma_options_init(3)), otherwise what rdma_cm chooses, on RoCE
	 * with Linux 6.1 19 (about 2 s per lost packet).  iWARP connections
	 * ignore it (TCP retransmits).
	 */
	uint32_t ack_timeout;
	/*
	 * Client: the IP type of service of the connection (0-255).  On RoCE
	 * it is the traffic class of every packet, which the network maps to
	 * a priority (a lossless one, say); the server answers in the same
	 * class.  -1 (default): the device's default (rdma_cm's
	 * default_roce_tos, 0 unless an administrator set it).  iWARP devices
	 * may apply it to their TCP connection; soft-iWARP does not.
	 */
	int32_t tos;
	/*
	 * Server: while more calls wait to be served on a connection, the
	 * replies made meanwhile are held and posted together, at most this
	 * many (1 to RPCRDMA_REPLY_BATCH_MAX; default the maximum): one
	 * doorbell, and the client's completion event finds them together.
	 * A held reply waits for the calls served after it in the same
	 * burst, so a service whose procedures can take long sets 1: every
	 * reply is posted as it is made.
	 */
	uint32_t reply_batch;
	/*
	 * Zero.  It names what would be tail padding: a program copying the
	 * struct or building it with an initializer leaves padding undefined,
	 * and a later version's first field would be read from there.  A
	 * field appended (here or in its place) moves
	 * RPCRDMA_OPTIONS_KNOWN_END (options.h) to its end, and the struct
	 * keeps ending with a named field (options.c asserts it).
	 */
	uint32_t reserved;
};

#define RPCRDMA_REPLY_BATCH_MAX 8u

/* How a connection makes a call's memory remotely accessible. */
enum rpcrdma_registration {
	RPCRDMA_REG_MEMORY_WINDOW, /* one type-2 window per call on pre-registered memory */
	RPCRDMA_REG_PER_CALL_MR,   /* one memory region registered per call */
};

enum rpcrdma_ccp_outcome {
	RPCRDMA_CCP_NOT_ASKED,     /* use_ccp was false (or this is a server) */
	RPCRDMA_CCP_USED,          /* the server answered; its values are in force */
	RPCRDMA_CCP_NOT_OFFERED,   /* the server does not serve program 100417 */
};

/*
 * What a connection negotiated.  Set @size to sizeof(struct
 * rpcrdma_conn_info) before asking (RPCRDMA_CONN_INFO_INIT): the get
 * functions write at most that much, zero what follows the fields they
 * know, and set @size to the length of the fields they filled; a size
 * below the first version's or above 4096 is refused (-EINVAL).
 */
struct rpcrdma_conn_info {
	uint32_t size;
	uint32_t inline_send;        /* largest Send we post */
	uint32_t inline_recv;        /* largest Send we accept */
	uint32_t credits;            /* client: current grant; server: receives posted */
	uint32_t ird, ord;           /* RDMA Read depths on the queue pair */
	bool peer_private_data;      /* the peer sent valid RFC 8797 private data */
	bool remote_invalidate;      /* both peers set R */
	bool iwarp;                  /* iWARP (MPA) rather than InfiniBand/RoCE */
	enum rpcrdma_registration registration;
	enum rpcrdma_ccp_outcome ccp;
	uint32_t connects;           /* client: connections made so far (1 after create) */
	/* client, memory windows: calls whose window the server invalidated, and we did */
	uint64_t remote_invalidations;
	uint64_t local_invalidations;
	/* ---- appended after the first version ---- */
	uint32_t ack_timeout;        /* the queue pair's local ACK timeout (IB, RoCE); 0 on iWARP */
	uint32_t traffic_class;      /* the queue pair's traffic class (IB, RoCE); 0 on iWARP */
	uint32_t send_wr_inline;     /* largest Send the provider copies when it is posted; 0: none */
	/* a field appended here must move RPCRDMA_CONN_INFO_KNOWN_END (options.h) */
};

/*
 * An initializer for a struct rpcrdma_conn_info about to be filled.  C++
 * before C++20 has no designated initializers, and a partial brace list
 * draws -Wmissing-field-initializers: a value-initialized copy instead.
 */
#ifdef __cplusplus
#define RPCRDMA_CONN_INFO_INIT \
	([]() { struct rpcrdma_conn_info i_ = {}; i_.size = sizeof(i_); return i_; }())
#else
#define RPCRDMA_CONN_INFO_INIT { .size = sizeof(struct rpcrdma_conn_info) }
#endif

/* Largest max_rpc_size the options accept: 16 MiB of data plus headers. */
#define RPCRDMA_MAX_RPC_SIZE_LIMIT ((16u << 20) + 4096u)

/*
 * rpcrdma_options_init - defaults: 4096-byte inline thresholds, 32
 * credits, max_rpc_size RPCRDMA_MAX_RPC_SIZE_LIMIT, IRD/ORD 16,
 * remote_invalidate set, no CCP, no resend after reconnect, 10 s
 * connect timeout, 25 s call timeout, no ULB; and size.  A macro, so
 * the size is the struct's in the program's build:
 * rpcrdma_options_init_sized() writes the defaults of the fields this
 * library knows within @size bytes, zeroes the rest of them, and
 * records @size (nothing is written for a @size below the first
 * version's struct, which no header ever had).
 */
void rpcrdma_options_init_sized(struct rpcrdma_options *o, size_t size);
#define rpcrdma_options_init(o) rpcrdma_options_init_sized((o), sizeof(*(o)))

/*
 * clnt_rdma_tli_create - connect to @addr (AF_INET or AF_INET6, port
 * set) and return a CLIENT for (@prog, @vers).  @o may be NULL
 * (defaults).  The CLIENT uses AUTH_NONE until the caller sets cl_auth.
 * Any number of threads may call through one CLIENT at once; their
 * calls are pipelined up to the server's credit grant.
 * Returns the CLIENT, or NULL with rpc_createerr set (RPC_SYSTEMERROR
 * with re_errno for connection failures, RPC_UNKNOWNADDR for a bad
 * address, RPC_SYSTEMERROR/EINVAL for bad options or an @o->size
 * below the first version's, RPC_SYSTEMERROR/E2BIG for options this
 * library does not know).
 */
CLIENT *clnt_rdma_tli_create(const struct sockaddr *addr, rpcprog_t prog, rpcvers_t vers,
			     const struct rpcrdma_options *o);

/*
 * clnt_rdma_getinfo - what @cl's current connection negotiated.
 * Returns 0, or -EINVAL when @cl is not an RDMA CLIENT (its cl_ops are
 * not ours) or @info->size is below the first version's, -ENOTCONN
 * when it has no connection right now.
 */
int clnt_rdma_getinfo(CLIENT *cl, struct rpcrdma_conn_info *info);

/*
 * clnt_rdma_create - find (@prog, @vers) with @host's rpcbind
 * (rpcrdma_rpcb_lookup) for @netid ("rdma", "rdma6", or NULL to try
 * both in that order) and connect.  Returns the CLIENT, or NULL with
 * rpc_createerr set (RPC_PROGNOTREGISTERED, RPC_PMAPFAILURE,
 * RPC_UNKNOWNHOST, RPC_UNKNOWNPROTO for another netid, or as
 * clnt_rdma_tli_create).
 */
CLIENT *clnt_rdma_create(const char *host, rpcprog_t prog, rpcvers_t vers, const char *netid,
			 const struct rpcrdma_options *o);

/*
 * svc_rdma_create - a listening SVCXPRT on @addr (port 0 picks one;
 * xp_port and xp_ltaddr tell which), registered with xprt_register so
 * svc_run() accepts connections and serves them.  Each connection
 * copies the listener's options when it is accepted and shares its
 * table of bindings (svc_rdma_reg).
 * Returns the SVCXPRT, or NULL with rpc_createerr set (RPC_SYSTEMERROR
 * with re_errno: EINVAL and E2BIG for options as clnt_rdma_tli_create,
 * or why the listener failed).
 */
SVCXPRT *svc_rdma_create(const struct sockaddr *addr, const struct rpcrdma_options *o);

/*
 * svc_rdma_getinfo - what the accepted connection @xprt negotiated
 * (the SVCXPRT a dispatch function receives).  Returns 0, or -EINVAL
 * for a listener, a non-RDMA SVCXPRT, or an @info->size below the
 * first version's.
 */
int svc_rdma_getinfo(SVCXPRT *xprt, struct rpcrdma_conn_info *info);

/*
 * svc_rdma_reg - svc_reg(@listener, @prog, @vers, @dispatch, NULL) for
 * the dispatch table, rpcrdma_rpcb_set() for the listener's netid and
 * address, and remember @ulb (may be NULL; must stay valid until
 * replaced or the listener and its connections are gone) for the
 * replies of the listener's connections, those already accepted too
 * (their next replies).  May run while another thread serves the
 * listener (but see svc_rdma_create(3) on libtirpc's own table).  A
 * wildcard listener address is registered as such; clnt_rdma_create()
 * then uses the address of the host it asked.  Again for a pair
 * replaces its binding and its rpcbind registration (unset, then set: a
 * lookup in between finds none).  Returns TRUE, or FALSE when svc_reg
 * refuses or the table of bindings is full (8), or when rpcbind
 * registration fails (then rpc_createerr tells why).
 */
bool_t svc_rdma_reg(SVCXPRT *listener, rpcprog_t prog, rpcvers_t vers,
		    void (*dispatch)(struct svc_req *, SVCXPRT *), const struct rpcrdma_ulb *ulb);

#ifdef __cplusplus
}
#endif

#endif
