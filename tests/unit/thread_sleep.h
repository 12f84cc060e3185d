/*
 * Negative checks across threads ("the call has not returned yet"): wait
 * until the thread under test is asleep in it, so such a check does not
 * pass only because the thread was never scheduled.
 */
#ifndef RPCRDMA_TESTS_THREAD_SLEEP_H
#define RPCRDMA_TESTS_THREAD_SLEEP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <criterion/criterion.h>

/* The scheduler state of thread @tid of this process ('R', 'S', ...), or 0 when it is gone. */
static inline char thread_state(pid_t tid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* "tid (comm) S ...": comm may hold spaces, not ')' here (no thread is named) */
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state;
}

/*
 * Wait until the thread that stores its id in @tid (atomically, just
 * before the call) is asleep (three looks 10 ms apart find it sleeping)
 * or @done(@arg) says its call returned.
 */
static inline void wait_asleep_or_done(const pid_t *tid, bool (*done)(void *), void *arg)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int asleep = 0;

	for (int i = 0; i < 1000 && asleep < 3; i++) {
		pid_t t = __atomic_load_n(tid, __ATOMIC_ACQUIRE);

		if (done(arg))
			return;
		asleep = t && thread_state(t) == 'S' ? asleep + 1 : 0;
		nanosleep(&tick, NULL);
	}
	cr_assert_eq(asleep, 3, "the thread neither slept nor finished in 10 s");
}

#endif
