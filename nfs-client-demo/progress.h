/*
 * progress: the one-line progress bar of get and put (percent, bytes,
 * rate, ETA) on a terminal.  Time comes in as an argument, so the
 * formatting is testable.
 */
#ifndef NFS_CLIENT_DEMO_PROGRESS_H
#define NFS_CLIENT_DEMO_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Transfers at most this long draw no bar. */
#define PROGRESS_MIN_BYTES (1u << 20)

struct progress {
	FILE *out;          /* NULL: disabled */
	const char *label;
	uint64_t total;
	double start;
	double last_draw;
};

/*
 * progress_format - "LABEL  45% 28.8/64.0 MiB  12.3 MB/s  ETA 0:03" for
 * @done of @total bytes after @elapsed seconds, cut to @len - 1 chars.
 */
void progress_format(char *buf, size_t len, const char *label, uint64_t done, uint64_t total,
		     double elapsed);

/* progress_start - enable drawing on @out when @tty and @total > PROGRESS_MIN_BYTES. */
void progress_start(struct progress *p, FILE *out, bool tty, const char *label, uint64_t total,
		    double now);
void progress_update(struct progress *p, uint64_t done, double now);
/* progress_end - erase the bar. */
void progress_end(struct progress *p);

/* Seconds on a monotonic clock. */
double progress_now(void);

#endif
