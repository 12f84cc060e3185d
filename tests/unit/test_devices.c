/*
 * The device watcher's list of users (rpcrdma/devices.c): who is told of
 * a removal, that a user being told is not unlisted under it nor a fork
 * made during its call, that the others are not held up meanwhile, and
 * that a forked child starts with none of its parent's users and closes
 * no file of the program's at the watcher's old fd number.  The watcher's
 * scans need a device and run in the test bed (fault_rdma_link.test,
 * scenario idle_client).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "rpcrdma/devices.h"
#include "thread_sleep.h"

#define TOLD_MAX 8

struct test_user {
	struct rpcrdma_device_user u; /* first: the callback casts back */
	char name;
};

static char told[TOLD_MAX + 1];
static unsigned int told_n;

static void record_told(struct rpcrdma_device_user *u)
{
	if (told_n < TOLD_MAX)
		told[told_n++] = ((struct test_user *)u)->name;
	told[told_n] = '\0';
}

static void tell_and_expect(const char *who)
{
	told_n = 0;
	told[0] = '\0';
	rpcrdma_device_users_tell_removed();
	cr_assert_str_eq(told, who);
}

Test(devices, every_listed_user_is_told_newest_first)
{
	struct test_user a = { .u.removed = record_told, .name = 'a' };
	struct test_user b = { .u.removed = record_told, .name = 'b' };
	struct test_user c = { .u.removed = record_told, .name = 'c' };

	tell_and_expect("");
	rpcrdma_device_user_add(&a.u);
	rpcrdma_device_user_add(&b.u);
	rpcrdma_device_user_add(&c.u);
	tell_and_expect("cba");
	rpcrdma_device_user_remove(&b.u);
	tell_and_expect("ca");
	rpcrdma_device_user_remove(&c.u);
	rpcrdma_device_user_remove(&c.u); /* twice: nothing more */
	tell_and_expect("a");
	rpcrdma_device_user_remove(&a.u);
	tell_and_expect("");
}

Test(devices, removing_a_user_never_added_does_nothing)
{
	struct test_user a = { .u.removed = record_told, .name = 'a' };
	struct test_user stray = { .u.removed = record_told, .name = 's' };

	rpcrdma_device_user_add(&a.u);
	rpcrdma_device_user_remove(&stray.u);
	tell_and_expect("a");
	rpcrdma_device_user_remove(&a.u);
}

/* A user whose call blocks until released, as a CLIENT's waits for its lock. */
struct blocking_user {
	struct rpcrdma_device_user u;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool entered, released, removed_returned, forked;
	pid_t remover_tid, forker_tid;
};

static void block_until_released(struct rpcrdma_device_user *u)
{
	struct blocking_user *b = (struct blocking_user *)u;

	pthread_mutex_lock(&b->lock);
	b->entered = true;
	pthread_cond_broadcast(&b->cv);
	while (!b->released)
		pthread_cond_wait(&b->cv, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

static void *tell_thread(void *arg)
{
	(void)arg;
	rpcrdma_device_users_tell_removed();
	return NULL;
}

static void *remove_thread(void *arg)
{
	struct blocking_user *b = arg;

	__atomic_store_n(&b->remover_tid, gettid(), __ATOMIC_RELEASE);
	rpcrdma_device_user_remove(&b->u);
	pthread_mutex_lock(&b->lock);
	b->removed_returned = true;
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* A fork waits for the pass: the call may hold librdmacm's lock, which the child would inherit. */
static void *fork_thread(void *arg)
{
	struct blocking_user *b = arg;
	pid_t pid;

	__atomic_store_n(&b->forker_tid, gettid(), __ATOMIC_RELEASE);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	pthread_mutex_lock(&b->lock);
	b->forked = pid > 0;
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static bool blocking_user_flag(struct blocking_user *b, const bool *flag)
{
	bool r;

	pthread_mutex_lock(&b->lock);
	r = *flag;
	pthread_mutex_unlock(&b->lock);
	return r;
}

static bool removed_returned(void *arg)
{
	struct blocking_user *b = arg;

	return blocking_user_flag(b, &b->removed_returned);
}

static bool forked(void *arg)
{
	struct blocking_user *b = arg;

	return blocking_user_flag(b, &b->forked);
}

Test(devices, a_user_being_told_holds_off_its_removal_and_forks_but_not_other_users, .timeout = 20)
{
	struct blocking_user b = { .u.removed = block_until_released };
	struct test_user other = { .u.removed = record_told, .name = 'o' };
	pthread_t teller, remover, forker;

	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cv, NULL);
	rpcrdma_device_user_add(&b.u);
	cr_assert_eq(pthread_create(&teller, NULL, tell_thread, NULL), 0);
	pthread_mutex_lock(&b.lock);
	while (!b.entered)
		pthread_cond_wait(&b.cv, &b.lock);
	pthread_mutex_unlock(&b.lock);

	/* the pass is inside b's call: another user comes and goes without waiting for it */
	rpcrdma_device_user_add(&other.u);
	rpcrdma_device_user_remove(&other.u);

	cr_assert_eq(pthread_create(&remover, NULL, remove_thread, &b), 0);
	cr_assert_eq(pthread_create(&forker, NULL, fork_thread, &b), 0);
	wait_asleep_or_done(&b.remover_tid, removed_returned, &b);
	wait_asleep_or_done(&b.forker_tid, forked, &b);
	cr_assert_not(blocking_user_flag(&b, &b.removed_returned), "b was unlisted while its call ran");
	cr_assert_not(blocking_user_flag(&b, &b.forked), "a fork went ahead while b's call ran");
	pthread_mutex_lock(&b.lock);
	b.released = true;
	pthread_cond_broadcast(&b.cv);
	pthread_mutex_unlock(&b.lock);
	pthread_join(teller, NULL);
	pthread_join(remover, NULL);
	pthread_join(forker, NULL);
	cr_assert(blocking_user_flag(&b, &b.removed_returned));
	cr_assert(blocking_user_flag(&b, &b.forked));
	tell_and_expect("");
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.lock);
}

/* The child's checks as its exit status: 0 when all held. */
static int child_checks(struct test_user *parents)
{
	struct test_user mine = { .u.removed = record_told, .name = 'm' };

	told_n = 0;
	rpcrdma_device_users_tell_removed();
	if (told_n != 0)
		return 1; /* a parent's user was told in the child */
	rpcrdma_device_user_remove(&parents->u);
	rpcrdma_device_user_add(&mine.u);
	rpcrdma_device_users_tell_removed();
	if (told_n != 1 || told[0] != 'm')
		return 2;
	rpcrdma_device_user_remove(&mine.u);
	told_n = 0;
	rpcrdma_device_users_tell_removed();
	return told_n == 0 ? 0 : 3;
}

Test(devices, a_forked_child_has_none_of_its_parents_users, .timeout = 20)
{
	struct test_user p = { .u.removed = record_told, .name = 'p' };
	int status;
	pid_t pid;

	rpcrdma_device_user_add(&p.u); /* no event channel yet: the watcher never started */
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		_exit(child_checks(&p));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "child check %d failed", WEXITSTATUS(status));
	tell_and_expect("p"); /* the parent's list is untouched */
	rpcrdma_device_user_remove(&p.u);
}

/* The watcher's inotify fd, found by its /proc/self/fd link; -1 if none. */
static int inotify_fd(void)
{
	char path[64], link[64];

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', !strcmp(link, "anon_inode:inotify")))
			return fd;
	}
	return -1;
}

/*
 * A program that closes every fd (a daemon) may reuse the watcher's fd
 * number for its own file before the watcher notices (it polls at most
 * every second here, without /dev/infiniband): a forked child must not
 * close that file.
 */
Test(devices, a_forked_child_leaves_a_reused_number_of_the_watchers_fd_open, .timeout = 20)
{
	int ifd, mine, status;
	pid_t pid;

	rpcrdma_device_watch_start();
	ifd = inotify_fd();
	cr_assert_geq(ifd, 0, "the watcher has no inotify fd");
	mine = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(mine, 0);
	cr_assert_eq(dup2(mine, ifd), ifd); /* the program's own file at the watcher's number */
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		_exit(fcntl(ifd, F_GETFD) == -1 ? 1 : 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "the child closed the program's file");
	close(mine);
}
