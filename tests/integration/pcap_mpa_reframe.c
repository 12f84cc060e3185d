/*
 * pcap_mpa_reframe: rewrite a capture of soft-iWARP traffic into the
 * framing tshark 4.0 decodes whole: each MPA stream's TCP segments in
 * sequence order, each holding at most one FPDU start.
 *
 * tshark 4.0 decodes the RPC-over-RDMA message of only the first FPDU
 * it dissects in a frame.  Two FPDUs meet in one frame in two ways: TCP
 * coalesces two Sends posted back to back into one segment, or tcpdump
 * on lo records a segment before an earlier one of its stream (calls
 * of two threads, sent from two CPUs), which tshark holds until the gap
 * closes and then dissects with it.  Either way a call vanishes from
 * the decode (nfs_demo_capture failed in CI with a READ call missing).
 * Neither the order lo's packets are recorded in nor where segments
 * end means anything to TCP, so this tool
 *   - gives each stream's data segments the capture slots of that
 *     stream in sequence-number order (a moved segment takes its new
 *     slot's timestamp);
 *   - cuts each segment at every FPDU start inside it (found by
 *     support/mpa_stream.c); the pieces keep the segment's headers, with
 *     the sequence number, IP length and IPv4 header checksum of their
 *     own octets.
 * Every payload octet is written once.  Other frames are copied
 * unchanged; so is the rest of a stream that cannot be followed (a gap
 * in the capture, an overlapping retransmission, MPA markers).
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_stream.h"

#define PROG         "pcap_mpa_reframe"
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
	uint8_t *buf;
	size_t len;
	bool swapped; /* record header fields are big-endian */
	struct flow flows[MAX_FLOWS];
	size_t nflows;
	struct seg_ref *segs;
	size_t nsegs, segs_cap;
	size_t *cuts;
	size_t ncuts, cuts_cap;
	size_t *slot_rec; /* record offset of each slot (capture order) */
	unsigned long frames, cut, written, moved;
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
static bool record_len(struct capture *c, const char *path, size_t off, size_t *incl)
{
	if (c->len - off >= REC_HDR && (*incl = rec32(c, c->buf + off + 8)) <= c->len - off - REC_HDR)
		return true;
	fprintf(stderr, "%s: warning: '%s': record %lu is cut short; the capture ends before it\n",
		PROG, path, c->frames + 1);
	c->len = off;
	return false;
}

/* Pass 1: every record checked, every TCP segment with data listed. */
static bool capture_index(const char *path, struct capture *c)
{
	for (size_t off = PCAP_HDR, incl; off < c->len; off += REC_HDR + incl) {
		const uint8_t *rec = c->buf + off;
		struct segment s;
		struct flow *old;
		size_t fl;

		if (!record_len(c, path, off, &incl))
			break;
		c->frames++;
		/* A frame captured short of its length is copied as it is. */
		if (incl != rec32(c, rec + 12) || !segment_parse(rec + REC_HDR, incl, &s))
			continue;
		if (s.syn && (old = flow_find(c, &s)))
			old->closed = true;
		if (s.len == 0 || (fl = flow_index(c, &s)) == MAX_FLOWS)
			continue;
		if (!grow((void **)&c->segs, &c->segs_cap, c->nsegs + 1, sizeof(*c->segs))) {
			fprintf(stderr, "%s: out of memory\n", PROG);
			return false;
		}
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
		fprintf(stderr, "%s: out of memory\n", PROG);
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
			c->moved += c->segs[k].slot != c->segs[k].order;
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
	static size_t cuts[MAX_CUTS];

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
		if (!grow((void **)&c->cuts, &c->cuts_cap, c->ncuts + n, sizeof(*c->cuts))) {
			fprintf(stderr, "%s: out of memory\n", PROG);
			return false;
		}
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
	c->written++;
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
		c->written++;
		return fwrite(ts_rec, 1, 8, out) == 8 && fwrite(rec + 8, 1, 8 + incl, out) == 8 + incl;
	}
	segment_parse(f, incl, &s);
	c->cut++;
	for (size_t i = 0; i <= r->ncuts; i++) {
		size_t to = i < r->ncuts ? c->cuts[r->first_cut + i] : s.len;

		if (!piece_write(c, out, ts_rec, f, &s, from, to))
			return false;
		from = to;
	}
	return true;
}

/* Pass 3: every record, the segments in their slots, the cut ones in pieces. */
static bool capture_write(const char *path, struct capture *c)
{
	FILE *out = fopen(path, "wb");
	size_t off = PCAP_HDR, j = 0;
	bool ok;

	if (!out) {
		fprintf(stderr, "%s: cannot create '%s': %s\n", PROG, path, strerror(errno));
		return false;
	}
	ok = fwrite(c->buf, 1, PCAP_HDR, out) == PCAP_HDR;
	while (ok && off < c->len) {
		size_t incl = rec32(c, c->buf + off + 8);

		if (j < c->nsegs && c->slot_rec[j] == off) {
			ok = segment_write(c, out, &c->segs[j], c->buf + off);
			j++;
		} else {
			ok = fwrite(c->buf + off, 1, REC_HDR + incl, out) == REC_HDR + incl;
			c->written++;
		}
		off += REC_HDR + incl;
	}
	if (fclose(out) != 0 || !ok) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
		return false;
	}
	return true;
}

static bool capture_read(const char *path, struct capture *c)
{
	FILE *in = fopen(path, "rb");
	size_t cap = 1 << 20, n;

	if (!in) {
		fprintf(stderr, "%s: cannot open '%s': %s\n", PROG, path, strerror(errno));
		return false;
	}
	c->buf = malloc(cap);
	c->len = 0;
	while (c->buf && (n = fread(c->buf + c->len, 1, cap - c->len, in)) > 0) {
		c->len += n;
		if (c->len == cap) {
			uint8_t *bigger = realloc(c->buf, cap *= 2);

			if (!bigger)
				free(c->buf);
			c->buf = bigger;
		}
	}
	if (!c->buf || ferror(in)) {
		fprintf(stderr, "%s: cannot read '%s': %s\n", PROG, path,
			c->buf ? strerror(errno) : "out of memory");
		fclose(in);
		return false;
	}
	fclose(in);
	return true;
}

static bool header_check(const char *path, struct capture *c)
{
	const uint8_t *h = c->buf;

	if (c->len < PCAP_HDR) {
		fprintf(stderr, "%s: '%s': shorter than a pcap file header\n", PROG, path);
		return false;
	}
	if (be32(h) == 0xd4c3b2a1 || be32(h) == 0x4d3cb2a1) {
		c->swapped = false;
	} else if (be32(h) == 0xa1b2c3d4 || be32(h) == 0xa1b23c4d) {
		c->swapped = true;
	} else {
		fprintf(stderr, "%s: '%s': not a pcap file (pcapng is not read)\n", PROG, path);
		return false;
	}
	if (rec32(c, h + 20) != LINKTYPE_ETH) {
		fprintf(stderr, "%s: '%s': link type %u, want Ethernet (1)\n", PROG, path,
			rec32(c, h + 20));
		return false;
	}
	return true;
}

/* MPA streams (connection directions) seen, and how many were not followed to the end. */
static void flows_count(const struct capture *c, unsigned long *mpa, unsigned long *unsplit)
{
	*mpa = *unsplit = 0;
	for (size_t i = 0; i < c->nflows; i++) {
		enum mpa_stream_state st = c->flows[i].stream.state;

		*mpa += st != MPA_STREAM_NEW && st != MPA_STREAM_NOT_MPA;
		*unsplit += st == MPA_STREAM_MARKERS || st == MPA_STREAM_GAP;
	}
}

int main(int argc, char **argv)
{
	static struct capture c;
	unsigned long mpa, unsplit;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IN OUT\n", PROG);
		return 2;
	}
	if (!capture_read(argv[1], &c) || !header_check(argv[1], &c) ||
	    !capture_index(argv[1], &c) || !capture_follow(&c) || !capture_write(argv[2], &c))
		return 1;
	flows_count(&c, &mpa, &unsplit);
	printf("%s: %lu frames, %lu segments moved back into sequence order, %lu cut at FPDU "
	       "starts, %lu frames written; %lu MPA streams (connection directions), "
	       "%lu not followed to the end\n",
	       PROG, c.frames, c.moved, c.cut, c.written, mpa, unsplit);
	free(c.buf);
	free(c.segs);
	free(c.cuts);
	free(c.slot_rec);
	return 0;
}
