/*
 * pcap_mpa_reframe: rewrite a capture of soft-iWARP traffic so that
 * tshark 4.0 decodes every RPC-over-RDMA message in it: each MPA
 * stream's segments in sequence order, cut at FPDU starts (what and
 * why: support/pcap_reframe.h).
 *
 *   pcap_mpa_reframe IN OUT
 *
 * IN is a pcap file (not pcapng) of Ethernet frames, as tcpdump -w
 * writes on lo.  Prints one line: frames read, segments moved and cut,
 * frames written, MPA streams and how many were not followed to the
 * end.  Exit status 0 (a capture cut short in a record ends before it,
 * with a warning); 1 when IN is unreadable or no pcap file of Ethernet
 * frames, or OUT cannot be written (a message on stderr); 2 on a usage
 * error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_reframe.h"

#define PROG "pcap_mpa_reframe"

static uint8_t *file_read(const char *path, size_t *len)
{
	FILE *in = fopen(path, "rb");
	size_t cap = 1 << 20, n;
	uint8_t *buf;

	if (!in) {
		fprintf(stderr, "%s: cannot open '%s': %s\n", PROG, path, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	*len = 0;
	while (buf && (n = fread(buf + *len, 1, cap - *len, in)) > 0) {
		*len += n;
		if (*len == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);

			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	if (!buf || ferror(in)) {
		fprintf(stderr, "%s: cannot read '%s': %s\n", PROG, path,
			buf ? strerror(errno) : "out of memory");
		free(buf);
		buf = NULL;
	}
	fclose(in);
	return buf;
}

int main(int argc, char **argv)
{
	struct pcap_reframe_stats st;
	enum pcap_reframe_result r;
	uint8_t *buf;
	size_t len;
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IN OUT\n", PROG);
		return 2;
	}
	buf = file_read(argv[1], &len);
	if (!buf)
		return 1;
	out = fopen(argv[2], "wb");
	if (!out) {
		fprintf(stderr, "%s: cannot create '%s': %s\n", PROG, argv[2], strerror(errno));
		free(buf);
		return 1;
	}
	r = pcap_reframe(buf, len, out, &st);
	free(buf);
	if (fclose(out) != 0 && r == PCAP_REFRAME_OK)
		r = PCAP_REFRAME_WRITE;
	if (r != PCAP_REFRAME_OK)
		remove(argv[2]);
	if (r == PCAP_REFRAME_WRITE) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, argv[2], strerror(errno));
		return 1;
	}
	if (r == PCAP_REFRAME_LINK_TYPE) {
		fprintf(stderr, "%s: '%s': link type %u, want Ethernet (1)\n", PROG, argv[1],
			st.link_type);
		return 1;
	}
	if (r != PCAP_REFRAME_OK) {
		fprintf(stderr, "%s: '%s': %s\n", PROG, argv[1], pcap_reframe_strerror(r));
		return 1;
	}
	if (st.truncated_at)
		fprintf(stderr, "%s: warning: '%s': record %lu is cut short; the capture ends "
			"before it\n", PROG, argv[1], st.truncated_at);
	printf("%s: %lu frames, %lu segments moved back into sequence order, %lu cut at FPDU "
	       "starts, %lu frames written; %lu MPA streams (connection directions), "
	       "%lu not followed to the end\n",
	       PROG, st.frames, st.moved, st.cut, st.written, st.mpa_streams, st.unfollowed);
	return 0;
}
