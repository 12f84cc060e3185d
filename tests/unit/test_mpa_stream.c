/* FPDU starts in a captured MPA stream (tests/integration/support/mpa_stream.c). */
#include <criterion/criterion.h>

#include "tests/integration/support/mpa_stream.h"

#define MAX_OCTETS 2048u
#define MAX_STARTS 16u

/* An MPA request frame with 8 octets of private data, then FPDUs. */
struct stream {
	uint8_t b[MAX_OCTETS];
	size_t len;
	size_t starts[MAX_STARTS]; /* offsets of the FPDUs, the first right after the frame */
	size_t nstarts;
};

static const uint16_t ulpdu_lens[] = { 26, 1, 3, 300, 0, 1000, 7 };

static void stream_build(struct stream *s, uint8_t flags)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->b, "MPA ID Req Frame", 16);
	s->b[16] = flags;
	s->b[17] = 1;
	s->b[19] = 8;
	s->len = 28;
	for (size_t i = 0; i < sizeof(ulpdu_lens) / sizeof(ulpdu_lens[0]); i++) {
		uint16_t ul = ulpdu_lens[i];

		s->starts[s->nstarts++] = s->len;
		s->b[s->len] = (uint8_t)(ul >> 8);
		s->b[s->len + 1] = (uint8_t)ul;
		memset(s->b + s->len + 2, 0xa5, ul); /* ULPDU octets: never read as lengths */
		s->len += mpa_stream_fpdu_len(ul);
	}
}

/* An FPDU start at @off is cut unless a segment starts there. */
static bool expected_cut(const size_t *seg_starts, size_t nseg, size_t off)
{
	for (size_t i = 0; i < nseg; i++)
		if (seg_starts[i] == off)
			return false;
	return true;
}

/*
 * Feeds the stream cut into segments starting at @seg_starts (first 0,
 * the MPA frame whole in the first segment, as one send puts it) from
 * sequence number @isn; checks the cuts against the FPDU starts.
 */
static void feed_and_check(const struct stream *s, const size_t *seg_starts, size_t nseg,
			   uint32_t isn)
{
	struct mpa_stream st = { 0 };
	size_t want = 0, got = 0;

	for (size_t i = 0; i < s->nstarts; i++)
		want += expected_cut(seg_starts, nseg, s->starts[i]);
	for (size_t i = 0; i < nseg; i++) {
		size_t from = seg_starts[i], to = i + 1 < nseg ? seg_starts[i + 1] : s->len;
		size_t cuts[MAX_STARTS], n;

		n = mpa_stream_segment(&st, isn + (uint32_t)from, s->b + from, to - from, cuts,
				       MAX_STARTS);
		for (size_t k = 0; k < n; k++) {
			size_t off = from + cuts[k];
			bool is_start = false;

			cr_assert(cuts[k] > 0 && cuts[k] < to - from);
			cr_assert(k == 0 || cuts[k] > cuts[k - 1]);
			for (size_t j = 0; j < s->nstarts; j++)
				is_start |= s->starts[j] == off;
			cr_assert(is_start, "cut at %zu is no FPDU start (segments from %zu)", off,
				  from);
		}
		got += n;
	}
	cr_assert_eq(got, want, "%zu cuts, want %zu (%zu segments)", got, want, nseg);
	cr_assert_eq(st.state, MPA_STREAM_FOLLOWING);
	cr_assert_eq(st.next, isn + (uint32_t)s->len);
}

Test(mpa_stream, fpdu_length_pads_to_four_and_adds_the_crc)
{
	cr_assert_eq(mpa_stream_fpdu_len(0), 8);
	cr_assert_eq(mpa_stream_fpdu_len(1), 8);
	cr_assert_eq(mpa_stream_fpdu_len(2), 8);
	cr_assert_eq(mpa_stream_fpdu_len(3), 12);
	cr_assert_eq(mpa_stream_fpdu_len(7), 16);
	cr_assert_eq(mpa_stream_fpdu_len(65535), 65544);
}

Test(mpa_stream, segment_per_fpdu_needs_no_cut)
{
	struct stream s;
	size_t seg[MAX_STARTS + 1] = { 0 };

	stream_build(&s, 0);
	for (size_t i = 0; i < s.nstarts; i++)
		seg[i + 1] = s.starts[i];
	feed_and_check(&s, seg, s.nstarts + 1, 1000);
}

Test(mpa_stream, one_segment_is_cut_at_every_start)
{
	struct stream s;
	size_t seg[1] = { 0 };

	stream_build(&s, 0);
	feed_and_check(&s, seg, 1, 1000);
}

Test(mpa_stream, every_two_way_split)
{
	struct stream s;

	stream_build(&s, 0);
	for (size_t k = s.starts[0]; k < s.len; k++) {
		size_t seg[2] = { 0, k };

		feed_and_check(&s, seg, 2, 7);
		feed_and_check(&s, seg, 2, 0xffffffffu - (uint32_t)k); /* sequence numbers wrap */
	}
}

Test(mpa_stream, every_three_way_split)
{
	struct stream s;

	stream_build(&s, 0);
	for (size_t a = s.starts[0]; a < s.len; a += 3)
		for (size_t b = a + 1; b < s.len; b += 5) {
			size_t seg[3] = { 0, a, b };

			feed_and_check(&s, seg, 3, 0x7ffffff0u);
		}
}

Test(mpa_stream, two_octet_segments)
{
	struct stream s;
	size_t seg[MAX_OCTETS];
	size_t n = 0;

	stream_build(&s, 0);
	seg[n++] = 0;
	for (size_t o = s.starts[0]; o < s.len; o += 2)
		seg[n++] = o;
	feed_and_check(&s, seg, n, 99);
}

Test(mpa_stream, retransmission_changes_nothing)
{
	struct stream s;
	struct mpa_stream st = { 0 };
	size_t cuts[MAX_STARTS], a;

	stream_build(&s, 0);
	a = s.starts[1] + 1;
	cr_assert_eq(mpa_stream_segment(&st, 0, s.b, a, cuts, MAX_STARTS), 2);
	cr_assert_eq(mpa_stream_segment(&st, 0, s.b, a, cuts, MAX_STARTS), 0);
	cr_assert_eq(mpa_stream_segment(&st, 10, s.b + 10, a - 10, cuts, MAX_STARTS), 0);
	cr_assert_eq(st.state, MPA_STREAM_FOLLOWING);
	cr_assert_eq(mpa_stream_segment(&st, (uint32_t)a, s.b + a, s.len - a, cuts, MAX_STARTS),
		     s.nstarts - 2);
	cr_assert_eq(cuts[0], s.starts[2] - a);
	cr_assert_eq(st.next, (uint32_t)s.len);
}

Test(mpa_stream, gap_or_overlap_stops_following)
{
	struct stream s;
	struct mpa_stream gap = { 0 }, overlap = { 0 };
	size_t cuts[MAX_STARTS];

	stream_build(&s, 0);
	mpa_stream_segment(&gap, 0, s.b, 100, cuts, MAX_STARTS);
	cr_assert_eq(mpa_stream_segment(&gap, 120, s.b + 120, 200, cuts, MAX_STARTS), 0);
	cr_assert_eq(gap.state, MPA_STREAM_GAP);
	cr_assert_eq(mpa_stream_segment(&gap, 100, s.b + 100, s.len - 100, cuts, MAX_STARTS), 0);
	mpa_stream_segment(&overlap, 0, s.b, 100, cuts, MAX_STARTS);
	cr_assert_eq(mpa_stream_segment(&overlap, 50, s.b + 50, s.len - 50, cuts, MAX_STARTS), 0);
	cr_assert_eq(overlap.state, MPA_STREAM_GAP);
}

Test(mpa_stream, only_mpa_streams_without_markers_are_followed)
{
	static const uint8_t http[] = "GET / HTTP/1.1\r\nHost: 192.0.2.1\r\n\r\n";
	struct stream s;
	struct mpa_stream st = { 0 }, m = { 0 }, rep = { 0 };
	size_t cuts[MAX_STARTS];

	cr_assert_eq(mpa_stream_segment(&st, 0, http, sizeof(http) - 1, cuts, MAX_STARTS), 0);
	cr_assert_eq(st.state, MPA_STREAM_NOT_MPA);
	stream_build(&s, 0x80);
	cr_assert_eq(mpa_stream_segment(&m, 0, s.b, s.len, cuts, MAX_STARTS), 0);
	cr_assert_eq(m.state, MPA_STREAM_MARKERS);
	stream_build(&s, 0);
	memcpy(s.b, "MPA ID Rep Frame", 16);
	cr_assert_eq(mpa_stream_segment(&rep, 0, s.b, s.len, cuts, MAX_STARTS), s.nstarts);
	cr_assert_eq(rep.state, MPA_STREAM_FOLLOWING);
}

Test(mpa_stream, short_frame_or_empty_segment)
{
	struct stream s;
	struct mpa_stream st = { 0 }, e = { 0 };
	size_t cuts[MAX_STARTS];

	stream_build(&s, 0);
	cr_assert_eq(mpa_stream_segment(&e, 0, s.b, 0, cuts, MAX_STARTS), 0);
	cr_assert_eq(e.state, MPA_STREAM_NEW);
	cr_assert_eq(mpa_stream_segment(&st, 0, s.b, 27, cuts, MAX_STARTS), 0);
	cr_assert_eq(st.state, MPA_STREAM_NOT_MPA, "private data cut short");
}

Test(mpa_stream, full_cut_array_keeps_following)
{
	struct stream s;
	struct mpa_stream st = { 0 };
	size_t cuts[2], a;

	stream_build(&s, 0);
	a = s.starts[5] + 3;
	cr_assert_eq(mpa_stream_segment(&st, 0, s.b, a, cuts, 2), 2);
	cr_assert_eq(cuts[1], s.starts[1]);
	cr_assert_eq(mpa_stream_segment(&st, (uint32_t)a, s.b + a, s.len - a, cuts, 2), 1);
	cr_assert_eq(cuts[0], s.starts[6] - a);
}
