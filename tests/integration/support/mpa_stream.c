/*
 * mpa_stream: FPDU boundaries in a captured MPA byte stream (see
 * mpa_stream.h).  The first data octets are the MPA request or reply
 * frame (cm-private/mpa.h decodes it); FPDUs follow back to back, each
 * mpa_stream_fpdu_len(ULPDU_Length) octets.  Markers are not followed.
 */
#include "mpa_stream.h"

#include "cm-private/mpa.h"

uint32_t mpa_stream_fpdu_len(uint16_t ulpdu_len)
{
	uint32_t n = 2u + ulpdu_len;

	return n + (4 - n % 4) % 4 + 4;
}

static int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static void stream_start(struct mpa_stream *st, uint32_t seq, const uint8_t *p, size_t len)
{
	struct rpcrdma_mpa_frame f;

	if (rpcrdma_mpa_frame_decode(p, len, &f) != RPCRDMA_MPA_OK) {
		st->state = MPA_STREAM_NOT_MPA;
		return;
	}
	st->state = f.markers ? MPA_STREAM_MARKERS : MPA_STREAM_FOLLOWING;
	st->next = seq + (uint32_t)f.frame_len;
	st->high = seq;
}

/* Walks the FPDU starts of an in-order segment that begins at st->high. */
static size_t stream_walk(struct mpa_stream *st, uint32_t seq, const uint8_t *p, size_t len,
			  size_t *cuts, size_t max)
{
	size_t n = 0, o;

	if (st->half_length) {
		st->next = st->boundary + mpa_stream_fpdu_len((uint16_t)(st->length_hi << 8 | p[0]));
		st->half_length = false;
	}
	for (o = (uint32_t)(st->next - seq); o < len; o = (uint32_t)(st->next - seq)) {
		if (o > 0 && n < max)
			cuts[n++] = o;
		if (o + 2 > len) {
			st->half_length = true;
			st->length_hi = p[o];
			st->boundary = st->next;
			break;
		}
		st->next += mpa_stream_fpdu_len((uint16_t)(p[o] << 8 | p[o + 1]));
	}
	st->high = seq + (uint32_t)len;
	return n;
}

size_t mpa_stream_segment(struct mpa_stream *st, uint32_t seq, const uint8_t *p, size_t len,
			  size_t *cuts, size_t max)
{
	if (len == 0)
		return 0;
	if (st->state == MPA_STREAM_NEW)
		stream_start(st, seq, p, len);
	if (st->state != MPA_STREAM_FOLLOWING)
		return 0;
	if (seq_diff(seq + (uint32_t)len, st->high) <= 0)
		return 0;
	if (seq != st->high || (!st->half_length && seq_diff(st->next, seq) < 0)) {
		st->state = MPA_STREAM_GAP;
		return 0;
	}
	return stream_walk(st, seq, p, len, cuts, max);
}
