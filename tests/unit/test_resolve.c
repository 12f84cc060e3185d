/*
 * Host name resolution bounded by a deadline (rpcrdma/resolve.c), with
 * stand-in resolvers: a numeric address is resolved in the caller; a name
 * on a thread of its own with every signal blocked; a resolver that does
 * not answer costs the deadline and its thread ends once it returns; an
 * answer in time is the result; each resolver error maps to its errno.
 * One look at the real getaddrinfo: "localhost" from /etc/hosts.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/resolve.h"
#include "rpcrdma/verbs.h"
#include "thread_sleep.h"

static const struct addrinfo stream4 = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };

/* What the stand-in resolvers saw, and how they answer a name. */
static struct {
	atomic_int calls, name_calls;
	pthread_t name_thread;
	pid_t name_tid;
	bool all_blocked;
	struct addrinfo hints;
	int name_rc, name_errno; /* the answer to a name, when not 0 */
	int delay_ms;		 /* before answering a name */
	sem_t release;		 /* posted to let a held resolver answer */
	bool hold;
	atomic_bool returned;
} fake;

/* Numeric lookups go to getaddrinfo (no name is resolved: AI_NUMERICHOST); a name answers 127.0.0.1. */
static int fake_resolver(const char *host, const char *service, const struct addrinfo *hints,
			 struct addrinfo **res)
{
	struct addrinfo numeric = *hints;
	sigset_t mask;

	atomic_fetch_add(&fake.calls, 1);
	if (hints->ai_flags & AI_NUMERICHOST)
		return getaddrinfo(host, service, hints, res);
	atomic_fetch_add(&fake.name_calls, 1);
	fake.name_thread = pthread_self();
	__atomic_store_n(&fake.name_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	fake.hints = *hints;
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	fake.all_blocked = sigismember(&mask, SIGINT) == 1 && sigismember(&mask, SIGTERM) == 1 &&
			   sigismember(&mask, SIGUSR1) == 1 && sigismember(&mask, SIGALRM) == 1;
	if (fake.hold)
		sem_wait(&fake.release);
	if (fake.delay_ms)
		usleep((useconds_t)fake.delay_ms * 1000);
	if (fake.name_rc) {
		errno = fake.name_errno;
		atomic_store(&fake.returned, true);
		return fake.name_rc;
	}
	numeric.ai_flags |= AI_NUMERICHOST;
	int rc = getaddrinfo("127.0.0.1", service, &numeric, res);
	atomic_store(&fake.returned, true);
	return rc;
}

static void fake_init(void)
{
	memset(&fake, 0, sizeof(fake));
	sem_init(&fake.release, 0, 0);
}

TestSuite(resolve, .init = fake_init);

static void check_ipv4(const struct addrinfo *ai, const char *addr, uint16_t port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;
	char text[INET_ADDRSTRLEN];

	cr_assert_eq(ai->ai_family, AF_INET);
	cr_assert_not_null(inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)));
	cr_assert_str_eq(text, addr);
	cr_assert_eq(ntohs(sin->sin_port), port);
}

Test(resolve, a_numeric_address_is_resolved_in_the_caller_without_a_wait)
{
	struct addrinfo *ai = NULL;
	int64_t past = rpcrdma_now_ms() - 1000;

	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "192.0.2.7", "111", &stream4, past, &ai), 0);
	check_ipv4(ai, "192.0.2.7", 111);
	freeaddrinfo(ai);
	cr_assert_eq(atomic_load(&fake.calls), 1);
	cr_assert_eq(atomic_load(&fake.name_calls), 0);
}

Test(resolve, a_name_is_resolved_on_a_thread_of_its_own_with_every_signal_blocked)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *ai = NULL;

	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "server.test", "2049", &hints,
					rpcrdma_now_ms() + 10000, &ai), 0);
	check_ipv4(ai, "127.0.0.1", 2049);
	freeaddrinfo(ai);
	cr_assert_eq(atomic_load(&fake.name_calls), 1);
	cr_assert(!pthread_equal(fake.name_thread, pthread_self()));
	cr_assert(fake.all_blocked, "the resolver thread takes no signal of the program's");
	cr_assert_eq(fake.hints.ai_flags, AI_ADDRCONFIG, "the caller's hints, not the numeric try's");
	cr_assert_eq(fake.hints.ai_family, AF_INET);
	cr_assert_eq(fake.hints.ai_socktype, SOCK_STREAM);
}

Test(resolve, an_answer_within_the_deadline_is_the_result)
{
	struct addrinfo *ai = NULL;
	int64_t t0 = rpcrdma_now_ms();

	fake.delay_ms = 100;
	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "slow.test", "111", &stream4, t0 + 10000,
					&ai), 0);
	cr_assert_geq(rpcrdma_now_ms() - t0, 90, "it waited for the answer");
	check_ipv4(ai, "127.0.0.1", 111);
	freeaddrinfo(ai);
}

static bool resolver_returned(void *arg)
{
	(void)arg;
	return atomic_load(&fake.returned);
}

Test(resolve, a_resolver_that_does_not_answer_costs_the_deadline_and_its_thread_ends_later)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	struct addrinfo *ai = (struct addrinfo *)&stream4; /* must come back NULL */
	int64_t t0 = rpcrdma_now_ms();
	pid_t tid;
	int i;

	fake.hold = true;
	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "stalled.test", "111", &stream4, t0 + 200,
					&ai), -ETIMEDOUT);
	cr_assert_geq(rpcrdma_now_ms() - t0, 200);
	cr_assert_lt(rpcrdma_now_ms() - t0, 2000);
	cr_assert_null(ai);
	tid = __atomic_load_n(&fake.name_tid, __ATOMIC_ACQUIRE);
	cr_assert_neq(tid, 0);
	cr_assert_neq(thread_state(tid), 0, "the resolver is still at work");
	sem_post(&fake.release);
	wait_asleep_or_done(&fake.name_tid, resolver_returned, NULL);
	for (i = 0; i < 500 && thread_state(tid) != 0; i++)
		nanosleep(&tick, NULL);
	cr_assert_eq(thread_state(tid), 0, "the resolver thread ended once it had its answer");
}

/* RPCRDMA_RESOLVE_LEFT_MAX lookups given up on, their resolvers held. */
static void leave_the_most_lookups(void)
{
	struct addrinfo *ai = NULL;

	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int64_t end;

	fake.hold = true;
	for (unsigned int i = 0; i < RPCRDMA_RESOLVE_LEFT_MAX; i++)
		cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "stalled.test", "111", &stream4,
						rpcrdma_now_ms() + 20, &ai), -ETIMEDOUT);
	/* every thread at its resolver (a loaded machine may start one late) */
	end = rpcrdma_now_ms() + 5000;
	while (atomic_load(&fake.name_calls) < (int)RPCRDMA_RESOLVE_LEFT_MAX && rpcrdma_now_ms() < end)
		nanosleep(&tick, NULL);
	cr_assert_eq(atomic_load(&fake.name_calls), (int)RPCRDMA_RESOLVE_LEFT_MAX);
}

Test(resolve, past_the_most_lookups_left_running_a_name_gets_no_thread_until_one_returns)
{
	struct addrinfo *ai = NULL;
	int64_t t0, end;
	int rc;

	leave_the_most_lookups();
	t0 = rpcrdma_now_ms();
	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "another.test", "111", &stream4, t0 + 10000,
					&ai), -EAGAIN);
	cr_assert_lt(rpcrdma_now_ms() - t0, 1000, "refused at once, not at the deadline");
	cr_assert_eq(atomic_load(&fake.name_calls), (int)RPCRDMA_RESOLVE_LEFT_MAX, "no resolver ran");
	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, "192.0.2.7", "111", &stream4, t0, &ai), 0,
		     "a numeric address needs no thread");
	freeaddrinfo(ai);
	fake.hold = false;
	sem_post(&fake.release);
	end = rpcrdma_now_ms() + 5000;
	do /* until the released resolver's thread has counted itself out */
		rc = rpcrdma_resolve_by(fake_resolver, "another.test", "111", &stream4,
					rpcrdma_now_ms() + 10000, &ai);
	while (rc == -EAGAIN && rpcrdma_now_ms() < end);
	cr_assert_eq(rc, 0, "one returned: a name gets a thread again");
	check_ipv4(ai, "127.0.0.1", 111);
	freeaddrinfo(ai);
	for (unsigned int i = 1; i < RPCRDMA_RESOLVE_LEFT_MAX; i++)
		sem_post(&fake.release);
}

Test(resolve, a_fork_child_does_not_count_its_parents_lookups_left_running)
{
	struct addrinfo *ai = NULL;
	int status;
	pid_t pid;

	leave_the_most_lookups();
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		fake.hold = false;
		_exit(rpcrdma_resolve_by(fake_resolver, "child.test", "111", &stream4,
					 rpcrdma_now_ms() + 10000, &ai) == 0 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's lookup got a thread");
	for (unsigned int i = 0; i < RPCRDMA_RESOLVE_LEFT_MAX; i++)
		sem_post(&fake.release);
}

static int name_error(int rc, int err)
{
	struct addrinfo *ai = NULL;
	int ret;

	fake.name_rc = rc;
	fake.name_errno = err;
	ret = rpcrdma_resolve_by(fake_resolver, "host.test", NULL, &stream4,
				 rpcrdma_now_ms() + 10000, &ai);
	cr_assert_null(ai);
	return ret;
}

Test(resolve, each_resolver_error_has_its_errno)
{
	cr_assert_eq(name_error(EAI_NONAME, 0), -EADDRNOTAVAIL);
	cr_assert_eq(name_error(EAI_NODATA, 0), -EADDRNOTAVAIL);
	cr_assert_eq(name_error(EAI_FAIL, 0), -EADDRNOTAVAIL);
	cr_assert_eq(name_error(EAI_AGAIN, 0), -EAGAIN);
	cr_assert_eq(name_error(EAI_MEMORY, 0), -ENOMEM);
	cr_assert_eq(name_error(EAI_SYSTEM, EMFILE), -EMFILE, "errno of the resolver's thread");
	cr_assert_eq(name_error(EAI_SYSTEM, 0), -EIO);
	cr_assert_eq(name_error(EAI_FAMILY, 0), -EINVAL);
	cr_assert_eq(atomic_load(&fake.name_calls), 8);
}

/* A failure of the numeric try other than "not a number" is the result: no thread. */
static int numeric_fails(const char *host, const char *service, const struct addrinfo *hints,
			 struct addrinfo **res)
{
	(void)host, (void)service, (void)res;
	atomic_fetch_add(&fake.calls, 1);
	cr_assert(hints->ai_flags & AI_NUMERICHOST);
	errno = ENFILE;
	return EAI_SYSTEM;
}

Test(resolve, a_failed_numeric_try_is_the_result)
{
	struct addrinfo *ai = NULL;

	cr_assert_eq(rpcrdma_resolve_by(numeric_fails, "192.0.2.7", NULL, &stream4,
					rpcrdma_now_ms() + 1000, &ai), -ENFILE);
	cr_assert_null(ai);
	cr_assert_eq(atomic_load(&fake.calls), 1);
}

Test(resolve, no_host_is_refused)
{
	struct addrinfo *ai = NULL;

	cr_assert_eq(rpcrdma_resolve_by(fake_resolver, NULL, "111", &stream4,
					rpcrdma_now_ms() + 1000, &ai), -EINVAL);
	cr_assert_eq(atomic_load(&fake.calls), 0);
}

/* The real resolver, on a name /etc/hosts has (no DNS query leaves the machine). */
Test(resolve, localhost_resolves_from_etc_hosts)
{
	struct addrinfo *ai = NULL;

	cr_assert_eq(rpcrdma_resolve("localhost", "111", &stream4, rpcrdma_now_ms() + 10000, &ai),
		     0);
	check_ipv4(ai, "127.0.0.1", 111);
	freeaddrinfo(ai);
}
