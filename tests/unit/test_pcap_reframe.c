/*
 * The capture rewrite behind pcap_mpa_reframe
 * (tests/integration/support/pcap_reframe.c), on captures built here:
 * MPA streams over IPv4 and IPv6 TCP in pcap files of either byte order.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/support/mpa_stream.h"
#include "tests/integration/support/pcap_reframe.h"

#define CAP_MAX   16384u
#define MAX_RECS  32u
#define REC_HDR   16u
#define ETH_HDR   14u

struct cap {
	uint8_t b[CAP_MAX];
	size_t len;
	bool big_endian;
	size_t rec[MAX_RECS]; /* offsets of the records */
	size_t nrec;
};

/* One direction of a TCP connection. */
struct tcp_dir {
	bool v6;
	uint16_t sport, dport;
	uint32_t seq; /* of the next octet sent */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static void cap_put32(const struct cap *c, uint8_t *p, uint32_t v)
{
	if (c->big_endian) {
		put32(p, v);
		return;
	}
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t cap_get32(const struct cap *c, const uint8_t *p)
{
	if (c->big_endian)
		return get32(p);
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void cap_init(struct cap *c, bool big_endian, uint32_t link_type)
{
	memset(c, 0, sizeof(*c));
	c->big_endian = big_endian;
	cap_put32(c, c->b, 0xa1b2c3d4);
	cap_put32(c, c->b + 4, big_endian ? 2u << 16 | 4 : 4u << 16 | 2); /* version 2.4 */
	cap_put32(c, c->b + 16, 65535);
	cap_put32(c, c->b + 20, link_type);
	c->len = 24;
}

static void cap_record(struct cap *c, uint32_t ts, const uint8_t *frame, size_t len)
{
	uint8_t *r = c->b + c->len;

	cr_assert_leq(c->len + REC_HDR + len, CAP_MAX);
	cr_assert_lt(c->nrec, MAX_RECS);
	cap_put32(c, r, ts);
	cap_put32(c, r + 4, 0);
	cap_put32(c, r + 8, (uint32_t)len);
	cap_put32(c, r + 12, (uint32_t)len);
	memcpy(r + REC_HDR, frame, len);
	c->rec[c->nrec++] = c->len;
	c->len += REC_HDR + len;
}

static uint16_t ipv4_sum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < 20; i += 2)
		sum += get16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* An Ethernet frame with one TCP segment of @d carrying @p; advances d->seq. */
static void cap_segment(struct cap *c, uint32_t ts, struct tcp_dir *d, uint8_t flags,
			const uint8_t *p, size_t len)
{
	uint8_t f[ETH_HDR + 40 + 20 + 4096] = { 0 };
	size_t ip = ETH_HDR, tcp = ip + (d->v6 ? 40 : 20);

	cr_assert_leq(len, 4096);
	put16(f + 12, d->v6 ? 0x86dd : 0x0800);
	if (d->v6) {
		f[ip] = 0x60;
		put16(f + ip + 4, (uint16_t)(20 + len));
		f[ip + 6] = 6;
		f[ip + 7] = 64;
		f[ip + 8 + 15] = 1; /* ::1 to ::1 */
		f[ip + 24 + 15] = 1;
	} else {
		f[ip] = 0x45;
		put16(f + ip + 2, (uint16_t)(20 + 20 + len));
		put16(f + ip + 6, 0x4000); /* don't fragment */
		f[ip + 8] = 64;
		f[ip + 9] = 6;
		put32(f + ip + 12, 0x7f000001);
		put32(f + ip + 16, 0x7f000001);
		put16(f + ip + 10, (uint16_t)~ipv4_sum(f + ip));
	}
	put16(f + tcp, d->sport);
	put16(f + tcp + 2, d->dport);
	put32(f + tcp + 4, d->seq);
	f[tcp + 12] = 5 << 4;
	f[tcp + 13] = flags;
	if (len)
		memcpy(f + tcp + 20, p, len);
	cap_record(c, ts, f, tcp + 20 + len);
	d->seq += (uint32_t)len + ((flags & 0x02) ? 1 : 0);
}

/* A byte stream of one direction: an MPA request frame, then FPDUs. */
struct mpa_bytes {
	uint8_t b[4096];
	size_t len;
	size_t fpdu[16]; /* where each FPDU starts */
	size_t nfpdu;
};

static void mpa_frame(struct mpa_bytes *m)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->b, "MPA ID Req Frame", 16);
	m->b[17] = 1; /* revision 1, no markers, no CRC */
	m->b[19] = 8; /* 8 octets of private data */
	m->len = 28;
}

static void mpa_fpdu(struct mpa_bytes *m, uint16_t ulpdu_len)
{
	m->fpdu[m->nfpdu++] = m->len;
	put16(m->b + m->len, ulpdu_len);
	memset(m->b + m->len + 2, (int)(0x40 + m->nfpdu), ulpdu_len);
	m->len += mpa_stream_fpdu_len(ulpdu_len);
}

static enum pcap_reframe_result reframe(const struct cap *in, struct cap *out,
					struct pcap_reframe_stats *st)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	enum pcap_reframe_result r;

	cr_assert_not_null(f);
	r = pcap_reframe(in->b, in->len, f, st);
	cr_assert_eq(fclose(f), 0);
	cr_assert_leq(size, CAP_MAX);
	memset(out, 0, sizeof(*out));
	out->big_endian = in->big_endian;
	memcpy(out->b, text, size);
	out->len = size;
	free(text);
	for (size_t off = 24; off + REC_HDR <= out->len && out->nrec < MAX_RECS;) {
		out->rec[out->nrec++] = off;
		off += REC_HDR + cap_get32(out, out->b + off + 8);
	}
	return r;
}

/* The record's TCP sequence number, payload and its length. */
static uint32_t rec_seq(const struct cap *c, size_t i, const uint8_t **payload, size_t *len)
{
	const uint8_t *f = c->b + c->rec[i] + REC_HDR;
	bool v6 = get16(f + 12) == 0x86dd;
	size_t tcp = ETH_HDR + (v6 ? 40 : 20);
	size_t ip_len = v6 ? 40u + get16(f + ETH_HDR + 4) : get16(f + ETH_HDR + 2);

	cr_assert_eq(cap_get32(c, c->b + c->rec[i] + 8), ETH_HDR + ip_len,
		     "record %zu: frame length and IP length disagree", i);
	if (!v6)
		cr_assert_eq(ipv4_sum(f + ETH_HDR), 0xffff, "record %zu: IPv4 checksum", i);
	*payload = f + tcp + 20;
	*len = ETH_HDR + ip_len - tcp - 20;
	return get32(f + tcp + 4);
}

static uint32_t rec_ts(const struct cap *c, size_t i)
{
	return cap_get32(c, c->b + c->rec[i]);
}

Test(pcap_reframe, rejects_what_is_no_pcap_of_ethernet)
{
	struct pcap_reframe_stats st;
	struct cap c, out;

	cap_init(&c, false, 1);
	for (size_t len = 0; len < 24; len++) {
		struct cap shorter = c;

		shorter.len = len;
		cr_assert_eq(reframe(&shorter, &out, &st), PCAP_REFRAME_SHORT, "%zu octets", len);
		cr_assert_eq(out.len, 0);
	}
	c.b[0] ^= 0xff;
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_NOT_PCAP);
	cap_init(&c, true, 113); /* Linux cooked capture */
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_LINK_TYPE);
	cr_assert_eq(st.link_type, 113);
	cr_assert_eq(out.len, 0);
}

Test(pcap_reframe, leaves_a_capture_with_one_fpdu_per_segment_as_it_is)
{
	for (int be = 0; be < 2; be++) {
		struct tcp_dir d = { .v6 = be, .sport = 40000, .dport = 20049, .seq = 1000 };
		static const uint8_t arp[60] = { [12] = 0x08, [13] = 0x06 };
		struct pcap_reframe_stats st;
		struct mpa_bytes m;
		struct cap c, out;

		mpa_frame(&m);
		for (int i = 0; i < 3; i++)
			mpa_fpdu(&m, (uint16_t)(100 + i));
		cap_init(&c, be, 1);
		cap_segment(&c, 1, &d, 0x02, NULL, 0);
		cap_record(&c, 2, arp, sizeof(arp));
		cap_segment(&c, 3, &d, 0x18, m.b, m.fpdu[0]);
		for (int i = 0; i < 3; i++) {
			size_t end = i < 2 ? m.fpdu[i + 1] : m.len;

			cap_segment(&c, (uint32_t)(4 + i), &d, 0x18, m.b + m.fpdu[i], end - m.fpdu[i]);
		}
		cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
		cr_assert_eq(out.len, c.len);
		cr_assert_arr_eq(out.b, c.b, c.len);
		cr_assert_eq(st.frames, 6);
		cr_assert_eq(st.written, 6);
		cr_assert_eq(st.moved + st.cut + st.unfollowed + st.truncated_at, 0);
		cr_assert_eq(st.mpa_streams, 1);
	}
}

/* The stream's payload in output order, checked to follow on by sequence number. */
static size_t stream_of(const struct cap *out, size_t first, uint32_t isn, uint8_t *b)
{
	size_t n = 0;

	for (size_t i = first; i < out->nrec; i++) {
		const uint8_t *p;
		size_t len;
		uint32_t seq = rec_seq(out, i, &p, &len);

		cr_assert_eq(seq, (uint32_t)(isn + n), "record %zu: sequence number %u, want %u", i,
			     seq, (uint32_t)(isn + n));
		memcpy(b + n, p, len);
		n += len;
	}
	return n;
}

Test(pcap_reframe, cuts_a_segment_at_each_fpdu_start)
{
	for (int be = 0; be < 2; be++) {
		struct tcp_dir d = { .v6 = !be, .sport = 40001, .dport = 20049, .seq = 0xfffffff0 };
		struct pcap_reframe_stats st;
		uint8_t again[4096];
		struct mpa_bytes m;
		struct cap c, out;

		mpa_frame(&m);
		mpa_fpdu(&m, 26);
		mpa_fpdu(&m, 1);
		mpa_fpdu(&m, 300);
		cap_init(&c, be, 1);
		cap_segment(&c, 7, &d, 0x18, m.b, m.fpdu[0]);
		cap_segment(&c, 8, &d, 0x18, m.b + m.fpdu[0], m.len - m.fpdu[0]);
		cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
		cr_assert_eq(st.cut, 1);
		cr_assert_eq(st.frames, 2);
		cr_assert_eq(st.written, 4);
		cr_assert_eq(out.nrec, 4);
		cr_assert_eq(stream_of(&out, 0, 0xfffffff0, again), m.len);
		cr_assert_arr_eq(again, m.b, m.len);
		for (size_t i = 1; i < 4; i++) {
			const uint8_t *p;
			size_t len;

			cr_assert_eq(rec_seq(&out, i, &p, &len), 0xfffffff0 + (uint32_t)m.fpdu[i - 1]);
			cr_assert_eq(rec_ts(&out, i), 8, "a piece keeps its segment's time");
		}
	}
}

Test(pcap_reframe, puts_an_mpa_streams_segments_back_in_sequence_order)
{
	struct tcp_dir d = { .sport = 40002, .dport = 20049, .seq = 5000 };
	static const uint32_t want_ts[] = { 10, 11, 12, 13, 13 };
	struct pcap_reframe_stats st;
	struct mpa_bytes m;
	struct cap c, out;
	uint8_t again[4096];

	mpa_frame(&m);
	for (int i = 0; i < 4; i++)
		mpa_fpdu(&m, (uint16_t)(40 + i));
	cap_init(&c, false, 1);
	cap_segment(&c, 10, &d, 0x18, m.b, m.fpdu[0]);
	cap_segment(&c, 11, &d, 0x18, m.b + m.fpdu[0], m.fpdu[1] - m.fpdu[0]);
	/* the third and fourth FPDU, in one segment, recorded before the second */
	d.seq += (uint32_t)(m.fpdu[2] - m.fpdu[1]);
	cap_segment(&c, 12, &d, 0x18, m.b + m.fpdu[2], m.len - m.fpdu[2]);
	d.seq = 5000 + (uint32_t)m.fpdu[1];
	cap_segment(&c, 13, &d, 0x18, m.b + m.fpdu[1], m.fpdu[2] - m.fpdu[1]);
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
	cr_assert_eq(st.moved, 2);
	cr_assert_eq(st.cut, 1);
	cr_assert_eq(out.nrec, 5);
	cr_assert_eq(stream_of(&out, 0, 5000, again), m.len);
	cr_assert_arr_eq(again, m.b, m.len);
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(rec_ts(&out, i), want_ts[i], "record %zu: a segment takes its slot's time", i);
}

Test(pcap_reframe, leaves_a_stream_that_is_no_mpa_in_capture_order)
{
	struct tcp_dir d = { .sport = 40003, .dport = 2049, .seq = 1 };
	static const uint8_t data[300] = { 1, 2, 3 };
	struct pcap_reframe_stats st;
	struct cap c, out;

	cap_init(&c, false, 1);
	cap_segment(&c, 1, &d, 0x18, data, 100);
	d.seq += 100;
	cap_segment(&c, 2, &d, 0x18, data, 100);
	d.seq = 101;
	cap_segment(&c, 3, &d, 0x18, data, 100);
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
	cr_assert_eq(out.len, c.len);
	cr_assert_arr_eq(out.b, c.b, c.len);
	cr_assert_eq(st.mpa_streams + st.moved + st.cut, 0);
}

Test(pcap_reframe, follows_a_new_connection_on_a_reused_port_after_its_syn)
{
	struct tcp_dir d = { .sport = 40004, .dport = 20049, .seq = 100 };
	struct pcap_reframe_stats st;
	struct mpa_bytes m;
	struct cap c, out;

	mpa_frame(&m);
	mpa_fpdu(&m, 20);
	mpa_fpdu(&m, 20);
	cap_init(&c, false, 1);
	for (int conn = 0; conn < 2; conn++) {
		d.seq = conn ? 900000 : 100; /* the new connection's ISN is far from the old one's */
		cap_segment(&c, 1, &d, 0x02, NULL, 0);
		cap_segment(&c, 2, &d, 0x18, m.b, m.fpdu[0]);
		cap_segment(&c, 3, &d, 0x18, m.b + m.fpdu[0], m.len - m.fpdu[0]);
	}
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
	cr_assert_eq(st.mpa_streams, 2);
	cr_assert_eq(st.unfollowed, 0);
	cr_assert_eq(st.cut, 2, "both connections' coalesced FPDUs cut");
	cr_assert_eq(st.written, 8);
}

Test(pcap_reframe, stops_following_a_stream_with_a_gap)
{
	struct tcp_dir d = { .sport = 40005, .dport = 20049, .seq = 7 };
	struct pcap_reframe_stats st;
	struct mpa_bytes m;
	struct cap c, out;

	mpa_frame(&m);
	for (int i = 0; i < 4; i++)
		mpa_fpdu(&m, 12);
	cap_init(&c, false, 1);
	cap_segment(&c, 1, &d, 0x18, m.b, m.fpdu[1]);
	d.seq += (uint32_t)(m.fpdu[2] - m.fpdu[1]); /* the second FPDU was not captured */
	cap_segment(&c, 2, &d, 0x18, m.b + m.fpdu[2], m.len - m.fpdu[2]);
	cr_assert_eq(reframe(&c, &out, &st), PCAP_REFRAME_OK);
	cr_assert_eq(st.mpa_streams, 1);
	cr_assert_eq(st.unfollowed, 1);
	cr_assert_eq(st.cut, 1, "the octets before the gap are still cut");
	cr_assert_eq(st.written, 3);
}

Test(pcap_reframe, ends_a_capture_cut_short_before_the_cut_record)
{
	struct tcp_dir d = { .sport = 40006, .dport = 20049, .seq = 3 };
	struct mpa_bytes m;
	struct cap c;

	mpa_frame(&m);
	mpa_fpdu(&m, 30);
	mpa_fpdu(&m, 31);
	cap_init(&c, false, 1);
	cap_segment(&c, 1, &d, 0x18, m.b, m.fpdu[0]);
	cap_segment(&c, 2, &d, 0x18, m.b + m.fpdu[0], m.len - m.fpdu[0]);
	for (size_t len = 24; len <= c.len; len++) {
		struct pcap_reframe_stats st;
		struct cap shorter = c, out;
		size_t whole = 0;

		shorter.len = len;
		while (whole < c.nrec && c.rec[whole] + REC_HDR +
						cap_get32(&c, c.b + c.rec[whole] + 8) <= len)
			whole++;
		cr_assert_eq(reframe(&shorter, &out, &st), PCAP_REFRAME_OK, "%zu octets", len);
		cr_assert_eq(st.frames, whole, "%zu octets", len);
		if (whole < c.nrec && len > c.rec[whole])
			cr_assert_eq(st.truncated_at, whole + 1, "%zu octets", len);
		else
			cr_assert_eq(st.truncated_at, 0, "%zu octets", len);
		cr_assert_eq(st.written, whole == 2 ? 3 : whole, "%zu octets", len);
	}
}
