/*
 * mpa_stream: where the MPA FPDUs (RFC 5044 section 4) of one direction
 * of a captured iWARP connection start, followed segment by segment by
 * TCP sequence number.  No I/O: the caller hands in each TCP segment's
 * sequence number and payload in capture order.  Used by
 * pcap_mpa_reframe; unit-tested in tests/unit/test_mpa_stream.c.
 */
#ifndef RDMATEST_MPA_STREAM_H
#define RDMATEST_MPA_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mpa_stream_state {
	MPA_STREAM_NEW = 0,  /* no data seen yet */
	MPA_STREAM_FOLLOWING, /* the MPA frame was seen; FPDU starts known */
	MPA_STREAM_NOT_MPA,  /* the first segment holds no whole MPA request or reply frame */
	MPA_STREAM_MARKERS,  /* the MPA frame asks for markers: not followed */
	MPA_STREAM_GAP,      /* octets missing or overlapping: no longer followed */
};

struct mpa_stream {
	enum mpa_stream_state state;
	bool half_length;  /* the last octet seen began a ULPDU_Length */
	uint8_t length_hi; /* that octet */
	uint32_t boundary; /* sequence number of the FPDU it begins */
	uint32_t next;     /* sequence number of the next FPDU start */
	uint32_t high;     /* sequence number after the last octet seen */
};

/* The octets of an FPDU with ULPDU_Length @ulpdu_len: length, ULPDU, pad, CRC. */
uint32_t mpa_stream_fpdu_len(uint16_t ulpdu_len);

/*
 * mpa_stream_segment - take the next captured segment of the stream
 * @st: zeroed before the first segment
 * @seq, @p, @len: the segment's sequence number and payload (len 0: ignored)
 * @cuts: receives the offsets in (0, len) where an FPDU (or the first
 *        FPDU after the MPA frame) starts, in increasing order
 * @max: room in @cuts; a segment of len octets has fewer than len / 8
 *
 * A retransmission of octets already seen gives no cuts and changes
 * nothing.  Returns the number of offsets stored.
 */
size_t mpa_stream_segment(struct mpa_stream *st, uint32_t seq, const uint8_t *p, size_t len,
			  size_t *cuts, size_t max);

#endif
