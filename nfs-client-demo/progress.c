/*
 * progress: draws and erases the transfer bar.  Redraws at most five
 * times a second; the line is erased at the end so that what follows
 * (an error, the shell prompt) starts on a clean line.
 */
#include "progress.h"

#include <time.h>

#define BAR_WIDTH 78

double progress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_format(char *buf, size_t len, const char *label, uint64_t done, uint64_t total,
		     double elapsed)
{
	double mib = 1024.0 * 1024.0, rate = elapsed > 0 ? (double)done / elapsed : 0;
	unsigned int pct = total ? (unsigned int)(done * 100 / total) : 100;
	char eta[32] = "--:--";

	if (rate > 0 && done <= total) {
		unsigned long s = (unsigned long)((double)(total - done) / rate + 0.5);

		snprintf(eta, sizeof(eta), "%lu:%02lu", s / 60, s % 60);
	}
	snprintf(buf, len, "%s %3u%% %.1f/%.1f MiB  %.1f MB/s  ETA %s", label, pct,
		 (double)done / mib, (double)total / mib, rate / 1e6, eta);
}

void progress_start(struct progress *p, FILE *out, bool tty, const char *label, uint64_t total,
		    double now)
{
	p->out = tty && total > PROGRESS_MIN_BYTES ? out : NULL;
	p->label = label;
	p->total = total;
	p->start = now;
	p->last_draw = 0;
}

void progress_update(struct progress *p, uint64_t done, double now)
{
	char line[BAR_WIDTH + 1];

	if (!p->out || now - p->last_draw < 0.2)
		return;
	p->last_draw = now;
	progress_format(line, sizeof(line), p->label, done, p->total, now - p->start);
	fprintf(p->out, "\r%-*s", BAR_WIDTH, line);
	fflush(p->out);
}

void progress_end(struct progress *p)
{
	if (!p->out)
		return;
	fprintf(p->out, "\r%*s\r", BAR_WIDTH, "");
	fflush(p->out);
}
