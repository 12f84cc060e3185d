/*
 * pcap_reframe: a capture of soft-iWARP traffic rewritten so that tshark
 * 4.0 decodes every RPC-over-RDMA message in it (why and how:
 * pcap_reframe.h).  Three passes over the capture in memory: index
 * every record and TCP segment, follow each stream in sequence order
 * (mpa_stream.c) and give the segments their slots, write.
 */
#include "pcap_reframe.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_stream.h"

#define PCAP_HDR     24u
#define REC_HDR      16u
#define ETH_HDR      14u
#define MAX_FLOWS    1024u
#define MAX_CUTS     8192u /* a segment of 65535 octets holds fewer FPDUs (8 or more octets each) */
#define LINKTYPE_ETH 1u

struct flow {
	uint8_t key[36]; /* source, destination address (16 each), ports */
	uint32_t isn;    /* sequence number of its first data segment captured */
	bool closed;     /* a SYN since: the key's next segment is a new connection's */
	struct mpa_stream stream;
};

struct segment {
	size_t ip;      /* offsets into the frame */
	size_t payload;
	size_t len;     /* payload octets */
	bool v4;
	bool syn;
	uint32_t seq;
	uint8_t key[36];
};

/* A captured TCP segment with data, and where to cut it. */
struct seg_ref {
	size_t rec;   /* offset of its record in the capture */
	size_t order; /* capture order among the segments */
	size_t slot;  /* where it is written: its stream's slots in sequence order */
	size_t flow;
	int32_t rel;  /* sequence number relative to the flow's isn */
	size_t first_cut, ncuts;
};

struct capture {
	const uint8_t *buf;
	size_t len;
	bool swapped; /* record header fields are big-endian */
	struct flow flows[MAX_FLOWS];
	size_t nflows;
	struct seg_ref *segs;
	size_t nsegs, segs_cap;
	size_t *cuts;
	size_t ncuts, cuts_cap;
	size_t *slot_rec; /* record offset of each slot (capture order) */
	size_t seg_cuts[MAX_CUTS]; /* one segment's, from mpa_stream_segment */
	struct pcap_reframe_stats *st;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

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

static uint32_t rec32(const struct capture *c, const uint8_t *p)
{
	if (c->swapped)
		return be32(p);
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void rec_put32(const struct capture *c, uint8_t *p, uint32_t v)
{
	if (c->swapped) {
		put32(p, v);
		return;
	}
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The IPv4 or IPv6 TCP segment in an Ethernet frame, checked whole. */
static bool segment_parse(const uint8_t *f, size_t len, struct segment *s)
{
	size_t tcp, ip_end;

	if (len < ETH_HDR + 40)
		return false;
	s->ip = ETH_HDR;
	memset(s->key, 0, sizeof(s->key));
	if (be16(f + 12) == 0x0800) {
		const uint8_t *ip = f + s->ip;
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

		if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != 6 || (be16(ip + 6) & 0x3fff))
			return false;
		s->v4 = true;
		ip_end = s->ip + be16(ip + 2);
		tcp = s->ip + ihl;
		memcpy(s->key, ip + 12, 4);
		memcpy(s->key + 16, ip + 16, 4);
	} else if (be16(f + 12) == 0x86dd) {
		const uint8_t *ip = f + s->ip;

		if ((ip[0] >> 4) != 6 || ip[6] != 6)
			return false;
		s->v4 = false;
		ip_end = s->ip + 40 + be16(ip + 4);
		tcp = s->ip + 40;
		memcpy(s->key, ip + 8, 32);
	} else {
		return false;
	}
	if (ip_end > len || tcp + 20 > ip_end)
		return false;
	s->payload = tcp + (size_t)(f[tcp + 12] >> 4) * 4;
	if (s->payload < tcp + 20 || s->payload > ip_end)
		return false;
	s->len = ip_end - s->payload;
	s->seq = be32(f + tcp + 4);
	s->syn = f[tcp + 13] & 0x02;
	memcpy(s->key + 32, f + tcp, 4);
	return true;
}

/* The flow of this key's current connection, or NULL. */
static struct flow *flow_find(struct capture *c, const struct segment *s)
{
	for (size_t i = c->nflows; i-- > 0;)
		if (!memcmp(c->flows[i].key, s->key, 36))
			return c->flows[i].closed ? NULL : &c->flows[i];
	return NULL;
}

/*
 * The flow's index, a new one for a new connection (a key reused after a
 * SYN is one); MAX_FLOWS when the table is full.
 */
static size_t flow_index(struct capture *c, const struct segment *s)
{
	struct flow *fl = flow_find(c, s);

	if (fl)
		return (size_t)(fl - c->flows);
	if (c->nflows == MAX_FLOWS)
		return MAX_FLOWS;
	memset(&c->flows[c->nflows], 0, sizeof(c->flows[0]));
	memcpy(c->flows[c->nflows].key, s->key, 36);
	c->flows[c->nflows].isn = s->seq;
	return c->nflows++;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *bigger;

	if (need <= *cap)
		return true;
	bigger = realloc(*p, (need * 2) * size);
	if (!bigger)
		return false;
	*p = bigger;
	*cap = need * 2;
	return true;
}

/*
 * The frame length of the record at @off.  A capture cut short in a
 * record (tcpdump killed while writing) ends before it, with a warning:
 * tshark reads such a file up to there too.
 */
static bool record_len(struct capture *c, size_t off, size_t *incl)
{
	if (c->len - off >= REC_HDR && (*incl = rec32(c, c->buf + off + 8)) <= c->len - off - REC_HDR)
		return true;
	c->st->truncated_at = c->st->frames + 1;
	c->len = off;
	return false;
}

/* Pass 1: every record checked, every TCP segment with data listed. */
static bool capture_index(struct capture *c)
{
	for (size_t off = PCAP_HDR, incl; off < c->len; off += REC_HDR + incl) {
		const uint8_t *rec = c->buf + off;
		struct segment s;
		struct flow *old;
		size_t fl;

		if (!record_len(c, off, &incl))
			break;
		c->st->frames++;
		/* A frame captured short of its length is copied as it is. */
		if (incl != rec32(c, rec + 12) || !segment_parse(rec + REC_HDR, incl, &s))
			continue;
		if (s.syn && (old = flow_find(c, &s)))
			old->closed = true;
		if (s.len == 0 || (fl = flow_index(c, &s)) == MAX_FLOWS)
			continue;
		if (!grow((void **)&c->segs, &c->segs_cap, c->nsegs + 1, sizeof(*c->segs)))
			return false;
		c->segs[c->nsegs] = (struct seg_ref){
			.rec = off,
			.order = c->nsegs,
			.flow = fl,
			.rel = (int32_t)(s.seq - c->flows[fl].isn),
		};
		c->nsegs++;
	}
	return true;
}

static int by_stream_position(const void *a, const void *b)
{
	const struct seg_ref *x = a, *y = b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	if (x->rel != y->rel)
		return x->rel < y->rel ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_slot(const void *a, const void *b)
{
	const struct seg_ref *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int by_size(const void *a, const void *b)
{
	const size_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * The segments of each MPA stream, sorted by sequence number, take that
 * stream's capture slots in order: a segment tcpdump recorded before an
 * earlier one of its stream (two threads' Sends, sent from two CPUs)
 * moves back.  tshark 4.0 holds such a segment until the gap closes
 * and then decodes the RPC-over-RDMA message of only one of the two.
 * Other streams keep their capture order.
 */
static bool slots_assign(struct capture *c)
{
	size_t *orders = malloc(c->nsegs * sizeof(*orders));

	c->slot_rec = malloc(c->nsegs * sizeof(*c->slot_rec));
	if (!orders || !c->slot_rec) {
		free(orders);
		return false;
	}
	for (size_t i = 0; i < c->nsegs; i++)
		c->slot_rec[c->segs[i].order] = c->segs[i].rec;
	for (size_t g = 0, e; g < c->nsegs; g = e) {
		enum mpa_stream_state st = c->flows[c->segs[g].flow].stream.state;

		for (e = g; e < c->nsegs && c->segs[e].flow == c->segs[g].flow; e++)
			orders[e - g] = c->segs[e].order;
		if (st != MPA_STREAM_NEW && st != MPA_STREAM_NOT_MPA)
			qsort(orders, e - g, sizeof(*orders), by_size);
		for (size_t k = g; k < e; k++) {
			c->segs[k].slot = orders[k - g];
			c->st->moved += c->segs[k].slot != c->segs[k].order;
		}
	}
	free(orders);
	return true;
}

/*
 * Pass 2: each stream's segments followed in sequence order (tcpdump on
 * lo may record them out of order), so a reordered capture is no gap.
 */
static bool capture_follow(struct capture *c)
{
	size_t *cuts = c->seg_cuts;

	if (c->nsegs == 0)
		return true;
	qsort(c->segs, c->nsegs, sizeof(*c->segs), by_stream_position);
	for (size_t i = 0; i < c->nsegs; i++) {
		struct seg_ref *r = &c->segs[i];
		struct segment s;
		size_t incl = rec32(c, c->buf + r->rec + 8), n;

		segment_parse(c->buf + r->rec + REC_HDR, incl, &s);
		n = mpa_stream_segment(&c->flows[r->flow].stream, s.seq,
				       c->buf + r->rec + REC_HDR + s.payload, s.len, cuts, MAX_CUTS);
		/* A cut frame must be all headers and payload: no Ethernet trailer. */
		if (n == 0 || s.payload + s.len != incl)
			continue;
		if (!grow((void **)&c->cuts, &c->cuts_cap, c->ncuts + n, sizeof(*c->cuts)))
			return false;
		memcpy(c->cuts + c->ncuts, cuts, n * sizeof(*cuts));
		r->first_cut = c->ncuts;
		r->ncuts = n;
		c->ncuts += n;
	}
	if (!slots_assign(c))
		return false;
	qsort(c->segs, c->nsegs, sizeof(*c->segs), by_slot);
	return true;
}

static uint16_t ipv4_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		if (i != 10)
			sum += be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * One piece: the frame's headers with the payload octets [from, to),
 * with the timestamp of the slot's record @ts_rec.
 */
static bool piece_write(struct capture *c, FILE *out, const uint8_t *ts_rec, const uint8_t *f,
			const struct segment *s, size_t from, size_t to)
{
	size_t hdr = s->payload, n = hdr + (to - from);
	uint8_t *b = malloc(REC_HDR + n);
	bool ok;

	if (!b)
		return false;
	memcpy(b, ts_rec, 8);
	rec_put32(c, b + 8, (uint32_t)n);
	rec_put32(c, b + 12, (uint32_t)n);
	memcpy(b + REC_HDR, f, hdr);
	memcpy(b + REC_HDR + hdr, f + s->payload + from, to - from);

	uint8_t *ip = b + REC_HDR + s->ip;
	size_t tcp = s->v4 ? (size_t)(ip[0] & 0x0f) * 4 : 40;

	put32(ip + tcp + 4, s->seq + (uint32_t)from);
	if (s->v4) {
		put16(ip + 2, (uint16_t)(n - s->ip));
		put16(ip + 10, ipv4_checksum(ip, tcp));
	} else {
		put16(ip + 4, (uint16_t)(n - s->ip - 40));
	}
	ok = fwrite(b, 1, REC_HDR + n, out) == REC_HDR + n;
	free(b);
	c->st->written++;
	return ok;
}

/* A segment in its slot, whole or in pieces; @ts_rec is the slot's record. */
static bool segment_write(struct capture *c, FILE *out, const struct seg_ref *r,
			  const uint8_t *ts_rec)
{
	const uint8_t *rec = c->buf + r->rec, *f = rec + REC_HDR;
	size_t incl = rec32(c, rec + 8), from = 0;
	struct segment s;

	if (r->ncuts == 0) {
		c->st->written++;
		return fwrite(ts_rec, 1, 8, out) == 8 && fwrite(rec + 8, 1, 8 + incl, out) == 8 + incl;
	}
	segment_parse(f, incl, &s);
	c->st->cut++;
	for (size_t i = 0; i <= r->ncuts; i++) {
		size_t to = i < r->ncuts ? c->cuts[r->first_cut + i] : s.len;

		if (!piece_write(c, out, ts_rec, f, &s, from, to))
			return false;
		from = to;
	}
	return true;
}

/* Pass 3: every record, the segments in their slots, the cut ones in pieces. */
static bool capture_write(struct capture *c, FILE *out)
{
	size_t off = PCAP_HDR, j = 0;
	bool ok;

	ok = fwrite(c->buf, 1, PCAP_HDR, out) == PCAP_HDR;
	while (ok && off < c->len) {
		size_t incl = rec32(c, c->buf + off + 8);

		if (j < c->nsegs && c->slot_rec[j] == off) {
			ok = segment_write(c, out, &c->segs[j], c->buf + off);
			j++;
		} else {
			ok = fwrite(c->buf + off, 1, REC_HDR + incl, out) == REC_HDR + incl;
			c->st->written++;
		}
		off += REC_HDR + incl;
	}
	return ok && fflush(out) == 0;
}

static enum pcap_reframe_result header_check(struct capture *c)
{
	const uint8_t *h = c->buf;

	if (c->len < PCAP_HDR)
		return PCAP_REFRAME_SHORT;
	if (be32(h) == 0xd4c3b2a1 || be32(h) == 0x4d3cb2a1)
		c->swapped = false;
	else if (be32(h) == 0xa1b2c3d4 || be32(h) == 0xa1b23c4d)
		c->swapped = true;
	else
		return PCAP_REFRAME_NOT_PCAP;
	c->st->link_type = rec32(c, h + 20);
	return c->st->link_type == LINKTYPE_ETH ? PCAP_REFRAME_OK : PCAP_REFRAME_LINK_TYPE;
}

/* MPA streams (connection directions) seen, and how many were not followed to the end. */
static void flows_count(const struct capture *c, unsigned long *mpa, unsigned long *unsplit)
{
	for (size_t i = 0; i < c->nflows; i++) {
		enum mpa_stream_state st = c->flows[i].stream.state;

		*mpa += st != MPA_STREAM_NEW && st != MPA_STREAM_NOT_MPA;
		*unsplit += st == MPA_STREAM_MARKERS || st == MPA_STREAM_GAP;
	}
}

enum pcap_reframe_result pcap_reframe(const uint8_t *in, size_t len, FILE *out,
				      struct pcap_reframe_stats *stats)
{
	struct capture *c = calloc(1, sizeof(*c));
	enum pcap_reframe_result r;

	memset(stats, 0, sizeof(*stats));
	if (!c)
		return PCAP_REFRAME_NO_MEMORY;
	c->buf = in;
	c->len = len;
	c->st = stats;
	r = header_check(c);
	if (r == PCAP_REFRAME_OK && (!capture_index(c) || !capture_follow(c)))
		r = PCAP_REFRAME_NO_MEMORY;
	if (r == PCAP_REFRAME_OK && !capture_write(c, out))
		r = PCAP_REFRAME_WRITE;
	if (r == PCAP_REFRAME_OK)
		flows_count(c, &stats->mpa_streams, &stats->unfollowed);
	free(c->segs);
	free(c->cuts);
	free(c->slot_rec);
	free(c);
	return r;
}

const char *pcap_reframe_strerror(enum pcap_reframe_result r)
{
	switch (r) {
	case PCAP_REFRAME_OK:
		return "no error";
	case PCAP_REFRAME_SHORT:
		return "shorter than a pcap file header";
	case PCAP_REFRAME_NOT_PCAP:
		return "not a pcap file (pcapng is not read)";
	case PCAP_REFRAME_LINK_TYPE:
		return "not a capture of Ethernet frames (link type 1)";
	case PCAP_REFRAME_NO_MEMORY:
		return "out of memory";
	case PCAP_REFRAME_WRITE:
		return "write error";
	}
	return "unknown error";
}
