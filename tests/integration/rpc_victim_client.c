/*
 * rpc_victim_client: rpcrdma's CLIENT as the victim of a hostile server
 * (tests/hostile/hostile_server.c, which runs its ASan+UBSan build,
 * build/asan/bin/rpc_victim_client).  It connects to the server with
 * clnt_rdma_tli_create() and the rdmatest binding, runs the steps given
 * as arguments, and checks each call's clnt_call status against what
 * the step expects and the data of every call that succeeds.  The data
 * of every successful READ is kept and checked again after each later
 * step and at exit: nothing a server does later may change it.
 *
 *   rpc_victim_client [--no-ri] [--auth-sys] ADDR PORT STEP...
 *
 * STEP is sleep/MS, or CALL[+CALL...]: calls joined by + run at the
 * same time, one thread each.  CALL is PROC[/N][xK]=EXPECT: PROC is
 * null, echo, write, read or longres; N the size (bytes; words for
 * longres); xK runs K copies at once; EXPECT is ok or a clnt_stat name
 * without RPC_ (CANTDECODERES, TIMEDOUT...), alternatives joined by |.
 * A call that may time out waits 1.5 s, others 10 s.  A VERSMISMATCH
 * must also report, through clnt_geterr, versions low <= high within
 * 1..5 (hostile_server's ERR_VERS name 2..5 and 1..1).  --no-ri: do not
 * ask for remote invalidation (RFC 8797 R).  --auth-sys: call with
 * AUTH_SYS credentials (authunix_create_default) instead of AUTH_NONE.
 *
 * Prints one line per call; exits 0 when everything was as expected,
 * 1 when not, 2 on a usage error, 3 when the CLIENT was not created.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmatest_support.h"

#define MAX_CALLS   64
#define MAX_KEPT    64
#define EXPECT_LEN  96
/* The highest version an ERR_VERS of hostile_server names: re_vers must lie within 1..this. */
#define ERR_VERS_HIGH_MAX 5u

enum vproc { V_NULL, V_ECHO, V_WRITE, V_READ, V_LONGRES };

static const char *const proc_names[] = { "null", "echo", "write", "read", "longres" };

struct vcall {
	enum vproc proc;
	uint32_t n;
	uint32_t seed;
	char expect[EXPECT_LEN];
	CLIENT *cl;
	enum clnt_stat st;
	bool data_ok;
	bool vers_ok;                /* an ERR_VERS reported sane versions (clnt_geterr) */
	char note[96];
};

/* READ results that succeeded: checked again until exit. */
struct kept_read {
	rdmatest_read_res res;
	uint32_t seed;
};
static struct kept_read kept[MAX_KEPT];
static uint32_t nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_seed = 1000;

static const struct { enum clnt_stat st; const char *name; } stat_names[] = {
	{ RPC_SUCCESS, "ok" },          { RPC_CANTENCODEARGS, "CANTENCODEARGS" },
	{ RPC_CANTDECODERES, "CANTDECODERES" }, { RPC_CANTSEND, "CANTSEND" },
	{ RPC_CANTRECV, "CANTRECV" },   { RPC_TIMEDOUT, "TIMEDOUT" },
	{ RPC_VERSMISMATCH, "VERSMISMATCH" }, { RPC_AUTHERROR, "AUTHERROR" },
	{ RPC_PROGUNAVAIL, "PROGUNAVAIL" }, { RPC_PROGVERSMISMATCH, "PROGVERSMISMATCH" },
	{ RPC_PROCUNAVAIL, "PROCUNAVAIL" }, { RPC_CANTDECODEARGS, "CANTDECODEARGS" },
	{ RPC_SYSTEMERROR, "SYSTEMERROR" },
};

static const char *stat_name(enum clnt_stat st)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		if (stat_names[i].st == st)
			return stat_names[i].name;
	return "OTHER";
}

/* Is @st one of the |-separated names in @expect? */
static bool stat_expected(const char *expect, enum clnt_stat st)
{
	const char *name = stat_name(st);
	size_t n = strlen(name);

	for (const char *p = expect; p; p = strchr(p, '|')) {
		if (*p == '|')
			p++;
		if (!strncmp(p, name, n) && (p[n] == '|' || !p[n]))
			return true;
	}
	return false;
}

/* ---- one call -------------------------------------------------------------------------- */

static bool bytes_are(const uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != rdmatest_gen_byte(seed, i))
			return false;
	return true;
}

static bool read_res_ok(const rdmatest_read_res *r, uint32_t n, uint32_t seed)
{
	return r->count == n && r->data.rdmatest_data_len == n && (r->data.rdmatest_data_val || !n) &&
	       bytes_are((const uint8_t *)r->data.rdmatest_data_val, n, seed);
}

static void keep_read(const rdmatest_read_res *r, uint32_t seed)
{
	pthread_mutex_lock(&kept_lock);
	if (nkept < MAX_KEPT)
		kept[nkept++] = (struct kept_read){ *r, seed };
	pthread_mutex_unlock(&kept_lock);
}

static struct timeval call_timeout(const struct vcall *c)
{
	return strstr(c->expect, "TIMEDOUT") ? (struct timeval){ 1, 500000 }
					     : (struct timeval){ 10, 0 };
}

static void run_echo(struct vcall *c, uint8_t *buf)
{
	rdmatest_data arg = { c->n, (char *)buf }, res = { 0, NULL };

	rdmatest_fill(buf, c->n, c->seed);
	c->st = clnt_call(c->cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
			  (xdrproc_t)xdr_rdmatest_data, (char *)&res, call_timeout(c));
	c->data_ok = c->st == RPC_SUCCESS && res.rdmatest_data_len == c->n &&
		     bytes_are((uint8_t *)res.rdmatest_data_val, c->n, c->seed);
	clnt_freeres(c->cl, (xdrproc_t)xdr_rdmatest_data, (char *)&res);
}

static void run_write(struct vcall *c, uint8_t *buf)
{
	rdmatest_write_args arg = { 0, { c->n, (char *)buf } };
	rdmatest_write_res res = { 0, 0 };

	rdmatest_fill(buf, c->n, c->seed);
	c->st = clnt_call(c->cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&arg,
			  (xdrproc_t)xdr_rdmatest_write_res, (char *)&res, call_timeout(c));
	c->data_ok = res.count == c->n && res.checksum == rdmatest_fnv1a(buf, c->n);
}

static void run_read(struct vcall *c)
{
	rdmatest_read_args arg = { c->n, c->seed };
	rdmatest_read_res res;

	memset(&res, 0, sizeof(res));
	c->st = clnt_call(c->cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&arg,
			  (xdrproc_t)xdr_rdmatest_read_res, (char *)&res, call_timeout(c));
	c->data_ok = c->st == RPC_SUCCESS && read_res_ok(&res, c->n, c->seed);
	if (c->st == RPC_SUCCESS && c->data_ok)
		keep_read(&res, c->seed); /* freed at exit */
	else
		clnt_freeres(c->cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&res);
}

static void run_longres(struct vcall *c)
{
	rdmatest_read_args arg = { c->n, c->seed };
	rdmatest_words res = { 0, NULL };

	c->st = clnt_call(c->cl, RDMATEST_LONG_RES, (xdrproc_t)xdr_rdmatest_read_args, (char *)&arg,
			  (xdrproc_t)xdr_rdmatest_words, (char *)&res, call_timeout(c));
	c->data_ok = c->st == RPC_SUCCESS && res.rdmatest_words_len == c->n;
	for (uint32_t i = 0; c->data_ok && i < c->n; i++)
		c->data_ok = res.rdmatest_words_val[i] == rdmatest_gen_word(c->seed, i);
	clnt_freeres(c->cl, (xdrproc_t)xdr_rdmatest_words, (char *)&res);
}

static void *call_thread(void *arg)
{
	struct vcall *c = arg;
	uint8_t *buf = malloc(c->n ? c->n : 1);

	c->vers_ok = true;
	if (!buf) {
		c->st = RPC_SYSTEMERROR;
		return NULL;
	}
	switch (c->proc) {
	case V_NULL:
		c->st = rdmatest_call_null(c->cl, call_timeout(c));
		c->data_ok = true;
		break;
	case V_ECHO:
		run_echo(c, buf);
		break;
	case V_WRITE:
		run_write(c, buf);
		break;
	case V_READ:
		run_read(c);
		break;
	case V_LONGRES:
		run_longres(c);
		break;
	}
	if (c->st != RPC_SUCCESS) {
		struct rpc_err e;

		clnt_geterr(c->cl, &e);
		/* the CLIENT's last error: this call's only when its status says so */
		if (e.re_status == RPC_VERSMISMATCH && c->st == RPC_VERSMISMATCH)
			snprintf(c->note, sizeof(c->note), " (versions %u..%u)", (unsigned)e.re_vers.low,
				 (unsigned)e.re_vers.high);
		else
			snprintf(c->note, sizeof(c->note), " (errno %d)", e.re_errno);
		c->vers_ok = e.re_status != RPC_VERSMISMATCH || c->st != RPC_VERSMISMATCH ||
			     (e.re_vers.low >= 1 && e.re_vers.low <= e.re_vers.high &&
			      e.re_vers.high <= ERR_VERS_HIGH_MAX);
	}
	free(buf);
	return NULL;
}

/* ---- steps ------------------------------------------------------------------------------ */

/* PROC[/N][xK]=EXPECT into @out (K entries).  Returns K, or 0 on a syntax error. */
static uint32_t parse_call(const char *text, struct vcall *out, uint32_t room)
{
	const char *eq = strchr(text, '=');
	uint32_t n = 0, k = 1;
	size_t plen = strcspn(text, "/x=");
	int proc = -1;

	for (int i = 0; i < 5; i++)
		if (strlen(proc_names[i]) == plen && !strncmp(text, proc_names[i], plen))
			proc = i;
	if (proc < 0 || !eq || strlen(eq + 1) >= EXPECT_LEN)
		return 0;
	if (text[plen] == '/')
		n = (uint32_t)strtoul(text + plen + 1, NULL, 10);
	if (strchr(text, 'x') && strchr(text, 'x') < eq)
		k = (uint32_t)strtoul(strchr(text, 'x') + 1, NULL, 10);
	if (!k || k > room)
		return 0;
	for (uint32_t i = 0; i < k; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].proc = (enum vproc)proc;
		out[i].n = n;
		out[i].seed = __atomic_add_fetch(&next_seed, 1, __ATOMIC_RELAXED);
		snprintf(out[i].expect, EXPECT_LEN, "%s", eq + 1);
	}
	return k;
}

static bool check_kept(void)
{
	bool ok = true;

	for (uint32_t i = 0; i < nkept; i++)
		if (!read_res_ok(&kept[i].res, kept[i].res.count, kept[i].seed)) {
			printf("victim: FAIL: the result of an earlier READ (seed %u) changed\n",
			       kept[i].seed);
			ok = false;
		}
	return ok;
}

/* Run one step: its calls at once.  Returns false when a call was not as expected. */
static bool run_step(CLIENT *cl, const char *step, uint32_t index)
{
	static struct vcall calls[MAX_CALLS];
	pthread_t th[MAX_CALLS];
	char *copy = strdup(step), *save = NULL;
	uint32_t n = 0;
	bool ok = true;

	if (!strncmp(step, "sleep/", 6)) {
		uint32_t ms = (uint32_t)strtoul(step + 6, NULL, 10);

		free(copy);
		nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
		return check_kept();
	}
	for (char *t = strtok_r(copy, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
		uint32_t k = parse_call(t, calls + n, MAX_CALLS - n);

		if (!k) {
			fprintf(stderr, "victim: bad call '%s'\n", t);
			exit(2);
		}
		n += k;
	}
	free(copy);
	for (uint32_t i = 0; i < n; i++) {
		calls[i].cl = cl;
		pthread_create(&th[i], NULL, call_thread, &calls[i]);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct vcall *c = &calls[i];
		bool good;

		pthread_join(th[i], NULL);
		good = stat_expected(c->expect, c->st) && (c->st != RPC_SUCCESS || c->data_ok) &&
		       c->vers_ok;
		printf("victim: step %u %s/%u: %s%s%s (expected %s)%s\n", index,
		       proc_names[c->proc], c->n, stat_name(c->st),
		       c->st == RPC_SUCCESS ? (c->data_ok ? ", data ok" : ", WRONG DATA") : "",
		       c->note, c->expect, good ? "" : c->vers_ok ? " FAIL" : " WRONG VERSIONS FAIL");
		ok = ok && good;
	}
	return check_kept() && ok;
}

static void print_info(CLIENT *cl)
{
	struct rpcrdma_conn_info info = RPCRDMA_CONN_INFO_INIT;

	if (clnt_rdma_getinfo(cl, &info))
		return;
	printf("victim: connected: inline send %u recv %u, remote invalidation %s, %s\n",
	       info.inline_send, info.inline_recv, info.remote_invalidate ? "yes" : "no",
	       info.registration == RPCRDMA_REG_MEMORY_WINDOW ? "memory windows"
							      : "per-call regions");
}

int main(int argc, char **argv)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	bool ok = true, auth_sys = false;
	int a = 1;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
		if (!strcmp(argv[a], "--no-ri"))
			o.remote_invalidate = false;
		else if (!strcmp(argv[a], "--auth-sys"))
			auth_sys = true;
		else
			break;
	}
	if (argc - a < 2 || !rdmatest_parse_addr(argv[a], (uint16_t)atoi(argv[a + 1]), &ss)) {
		fprintf(stderr, "usage: rpc_victim_client [--no-ri] [--auth-sys] ADDR PORT STEP...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rdmatest_raise_memlock();
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl) {
		clnt_pcreateerror("victim");
		return 3;
	}
	if (auth_sys) {
		AUTH *sys = authunix_create_default();

		if (!sys) {
			fprintf(stderr, "victim: authunix_create_default failed\n");
			return 3;
		}
		auth_destroy(cl->cl_auth);
		cl->cl_auth = sys;
	}
	print_info(cl);
	for (int i = a + 2; i < argc; i++)
		ok = run_step(cl, argv[i], (uint32_t)(i - a - 2)) && ok;
	ok = check_kept() && ok;
	for (uint32_t i = 0; i < nkept; i++)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&kept[i].res);
	if (auth_sys)
		auth_destroy(cl->cl_auth); /* as with libtirpc's clients, the caller's to destroy */
	clnt_destroy(cl);
	printf("victim: %s\n", ok ? "all calls as expected" : "FAIL");
	return ok ? 0 : 1;
}
