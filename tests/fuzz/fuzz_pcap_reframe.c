/*
 * The capture rewrite of pcap_mpa_reframe (tests/integration/support/
 * pcap_reframe.c) on any input: what it writes is a pcap file of as
 * many records as it says, with the input's file header, and reads
 * back whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/support/pcap_reframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum pcap_reframe_result rewrite(const uint8_t *in, size_t len, char **out, size_t *out_len,
					struct pcap_reframe_stats *st)
{
	FILE *f = open_memstream(out, out_len);
	enum pcap_reframe_result r;

	if (!f)
		abort();
	r = pcap_reframe(in, len, f, st);
	if (fclose(f) != 0)
		abort();
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcap_reframe_stats st, again;
	char *out = NULL, *out2 = NULL;
	size_t len = 0, len2 = 0;

	if (rewrite(data, size, &out, &len, &st) == PCAP_REFRAME_OK) {
		if (len < 24 || memcmp(out, data, 24) || st.written < st.frames)
			abort();
		if (rewrite((const uint8_t *)out, len, &out2, &len2, &again) != PCAP_REFRAME_OK ||
		    again.frames != st.written || again.truncated_at || again.written < again.frames)
			abort();
	} else if (len != 0) {
		abort(); /* a rejected capture writes nothing */
	}
	free(out);
	free(out2);
	return 0;
}
