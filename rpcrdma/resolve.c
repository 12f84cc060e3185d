/*
 * Host name resolution bounded by a deadline (resolve.h).  A numeric
 * address is resolved in the caller; a name gets a detached thread with
 * every signal blocked, and a job the caller and that thread share:
 * whichever lets go of it last frees it, so a caller that gave up at its
 * deadline leaves nothing behind once the resolver returns.  Lookups so
 * left are counted: once RPCRDMA_RESOLVE_LEFT_MAX of them run, a name
 * gets no thread until one returns (the DNS servers answer no one).
 */
#include "rpcrdma/resolve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct resolve_job {
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	unsigned int refs; /* the caller's and the thread's, under lock */
	bool done;
	bool left; /* its caller gave up: counted in resolve_left */
	int rc;  /* the resolver's result */
	int err; /* its errno, for EAI_SYSTEM */
	rpcrdma_getaddrinfo_fn *resolver;
	struct addrinfo hints;
	struct addrinfo *result;
	const char *service; /* NULL or in names */
	char names[];        /* the host, then the service */
};

/* Lookups whose callers gave up on them, still running (the fork child's are the parent's). */
static uint32_t resolve_left;

void rpcrdma_resolve_forked(void)
{
	resolve_left = 0;
}

static int gai_errno(int rc, int err)
{
	switch (rc) {
	case 0:
		return 0;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return err > 0 ? -err : -EIO;
	case EAI_BADFLAGS:
	case EAI_FAMILY:
	case EAI_SOCKTYPE:
		return -EINVAL;
	default: /* EAI_NONAME, EAI_NODATA, EAI_FAIL, EAI_SERVICE, EAI_ADDRFAMILY */
		return -EADDRNOTAVAIL;
	}
}

/* Drop a reference with job->lock held; the lock is released. */
static void job_put(struct resolve_job *job)
{
	bool last = --job->refs == 0;

	pthread_mutex_unlock(&job->lock);
	if (!last)
		return;
	if (job->result)
		freeaddrinfo(job->result);
	pthread_cond_destroy(&job->done_cv);
	pthread_mutex_destroy(&job->lock);
	free(job);
}

static void *job_run(void *arg)
{
	struct resolve_job *job = arg;
	struct addrinfo *result = NULL;
	int rc = job->resolver(job->names, job->service, &job->hints, &result);
	int err = errno;

	pthread_mutex_lock(&job->lock);
	job->rc = rc;
	job->err = err;
	job->result = rc ? NULL : result;
	job->done = true;
	if (job->left)
		__atomic_sub_fetch(&resolve_left, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&job->done_cv);
	job_put(job);
	return NULL;
}

static struct resolve_job *job_new(rpcrdma_getaddrinfo_fn *resolver, const char *host,
				   const char *service, const struct addrinfo *hints)
{
	size_t hlen = strlen(host) + 1, slen = service ? strlen(service) + 1 : 0;
	struct resolve_job *job = calloc(1, sizeof(*job) + hlen + slen);

	if (!job)
		return NULL;
	pthread_mutex_init(&job->lock, NULL);
	pthread_cond_init(&job->done_cv, NULL);
	job->refs = 1;
	job->resolver = resolver;
	job->hints.ai_flags = hints->ai_flags;
	job->hints.ai_family = hints->ai_family;
	job->hints.ai_socktype = hints->ai_socktype;
	job->hints.ai_protocol = hints->ai_protocol;
	memcpy(job->names, host, hlen);
	if (service)
		job->service = memcpy(job->names + hlen, service, slen);
	return job;
}

/* The thread takes a reference; it inherits a mask blocking every signal, the program's to handle. */
static int job_start(struct resolve_job *job)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	job->refs = 2;
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&thread, &attr, job_run, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		job->refs = 1;
	return rc ? -EAGAIN : 0;
}

/* Wait for the job until @deadline; the caller's reference is dropped. */
static int job_wait(struct resolve_job *job, int64_t deadline, struct addrinfo **out)
{
	struct timespec ts = {
		.tv_sec = deadline / 1000,
		.tv_nsec = (deadline % 1000) * 1000000,
	};
	int rc;

	pthread_mutex_lock(&job->lock);
	while (!job->done &&
	       pthread_cond_clockwait(&job->done_cv, &job->lock, CLOCK_MONOTONIC, &ts) != ETIMEDOUT)
		;
	rc = job->done ? gai_errno(job->rc, job->err) : -ETIMEDOUT;
	if (!job->done) {
		job->left = true;
		__atomic_add_fetch(&resolve_left, 1, __ATOMIC_RELAXED);
	}
	if (!rc) {
		*out = job->result;
		job->result = NULL;
	}
	job_put(job);
	return rc;
}

int rpcrdma_resolve_by(rpcrdma_getaddrinfo_fn *resolver, const char *host, const char *service,
		       const struct addrinfo *hints, int64_t deadline, struct addrinfo **out)
{
	struct addrinfo numeric = *hints;
	struct resolve_job *job;
	int rc, err;

	*out = NULL;
	if (!host)
		return -EINVAL;
	numeric.ai_flags |= AI_NUMERICHOST;
	rc = resolver(host, service, &numeric, out);
	err = errno;
	if (rc != EAI_NONAME) { /* a numeric address, or a failure no name changes */
		if (rc)
			*out = NULL;
		return gai_errno(rc, err);
	}
	*out = NULL;
	if (__atomic_load_n(&resolve_left, __ATOMIC_RELAXED) >= RPCRDMA_RESOLVE_LEFT_MAX)
		return -EAGAIN;
	job = job_new(resolver, host, service, hints);
	if (!job)
		return -ENOMEM;
	rc = job_start(job);
	if (rc) {
		pthread_mutex_lock(&job->lock);
		job_put(job);
		return rc;
	}
	return job_wait(job, deadline, out);
}

int rpcrdma_resolve(const char *host, const char *service, const struct addrinfo *hints,
		    int64_t deadline, struct addrinfo **out)
{
	return rpcrdma_resolve_by(getaddrinfo, host, service, hints, deadline, out);
}
