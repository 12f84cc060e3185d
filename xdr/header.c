/*
 * Transport header codec (RFC 5666 section 4.3).  The decoder checks
 * each item's full extent before reading it, caps every list, and
 * validates the read list against the message it describes: positions
 * are offsets in the complete XDR stream, counting the XDR roundup of
 * each read chunk that precedes them (RFC 5666 section 3.7).
 */
#include "xdr/header.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

#include "xdr/bytes.h"

const struct rpcrdma_header_limits rpcrdma_header_default_limits = {
	.max_reads = RPCRDMA_MAX_READ_SEGS,
	.max_write_chunks = RPCRDMA_MAX_WRITE_CHUNKS,
	.max_chunk_segs = RPCRDMA_MAX_SEGS,
	.max_segs = RPCRDMA_MAX_SEGS,
};

static const char *const status_names[] = {
	[RPCRDMA_HDR_OK] = "ok",
	[RPCRDMA_HDR_SHORT] = "header truncated",
	[RPCRDMA_HDR_BAD_VERSION] = "unsupported RPC-over-RDMA version",
	[RPCRDMA_HDR_BAD_TYPE] = "unknown message type",
	[RPCRDMA_HDR_BAD_DISCRIMINATOR] = "list discriminator is neither 0 nor 1",
	[RPCRDMA_HDR_TOO_MANY_READS] = "too many read segments",
	[RPCRDMA_HDR_TOO_MANY_WRITE_CHUNKS] = "too many write chunks",
	[RPCRDMA_HDR_TOO_MANY_SEGMENTS] = "too many segments",
	[RPCRDMA_HDR_LENGTH_OVERFLOW] = "chunk length exceeds 2^32 - 1",
	[RPCRDMA_HDR_SEGMENT_WRAPS] = "segment wraps past the end of the address space",
	[RPCRDMA_HDR_MISALIGNED_POSITION] = "read chunk position not a multiple of 4",
	[RPCRDMA_HDR_POSITION_ORDER] = "read chunks unsorted or overlapping",
	[RPCRDMA_HDR_POSITION_BEYOND] = "read chunk position beyond the message",
	[RPCRDMA_HDR_POSITION_ZERO_INLINE] = "position-zero read chunk with an inline message",
	[RPCRDMA_HDR_BAD_ALIGN] = "RDMA_MSGP alignment is not a power of two",
	[RPCRDMA_HDR_NO_MESSAGE] = "no RPC message after an RDMA_MSG header",
	[RPCRDMA_HDR_XID_MISMATCH] = "RPC message XID differs from the header's",
	[RPCRDMA_HDR_TRAILING_BYTES] = "bytes after a header that carries no message",
	[RPCRDMA_HDR_NO_SPACE] = "output buffer too small",
	[RPCRDMA_HDR_FULL] = "header capacity reached",
};

const char *rpcrdma_hdr_status_str(enum rpcrdma_hdr_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown header status");
}

static struct rpcrdma_header_limits clamp_limits(const struct rpcrdma_header_limits *l)
{
	struct rpcrdma_header_limits out = {
		.max_reads = min_u32(l->max_reads, RPCRDMA_MAX_READ_SEGS),
		.max_write_chunks = min_u32(l->max_write_chunks, RPCRDMA_MAX_WRITE_CHUNKS),
		.max_chunk_segs = min_u32(l->max_chunk_segs, RPCRDMA_MAX_SEGS),
		.max_segs = min_u32(l->max_segs, RPCRDMA_MAX_SEGS),
	};
	return out;
}

static void header_reset(struct rpcrdma_header *h)
{
	h->xid = h->vers = h->credit = h->type = 0;
	h->align = h->thresh = 0;
	h->err = h->vers_low = h->vers_high = 0;
	for (uint32_t i = 0; i < RPCRDMA_ERROR_EXTRA_WORDS; i++)
		h->err_extra[i] = 0;
	h->nreads = h->nwrites = h->nsegs = 0;
	h->has_reply = false;
	h->reply.first = h->reply.nsegs = 0;
}

/* ---- decoding ---------------------------------------------------------- */

/* Caller has checked RPCRDMA_SEGMENT_BYTES are available. */
static enum rpcrdma_hdr_status decode_segment(struct rpcrdma_cursor *c,
					      struct rpcrdma_segment *s)
{
	s->handle = rpcrdma_cursor_u32(c);
	s->length = rpcrdma_cursor_u32(c);
	s->offset = rpcrdma_cursor_u64(c);
	if (s->length && s->offset > UINT64_MAX - (s->length - 1))
		return RPCRDMA_HDR_SEGMENT_WRAPS;
	return RPCRDMA_HDR_OK;
}

static enum rpcrdma_hdr_status decode_present(struct rpcrdma_cursor *c, bool *present)
{
	uint32_t d;

	if (!rpcrdma_cursor_has(c, 4))
		return RPCRDMA_HDR_SHORT;
	d = rpcrdma_cursor_u32(c);
	if (d > 1)
		return RPCRDMA_HDR_BAD_DISCRIMINATOR;
	*present = d == 1;
	return RPCRDMA_HDR_OK;
}

static enum rpcrdma_hdr_status decode_read_list(struct rpcrdma_header *h,
						struct rpcrdma_cursor *c,
						const struct rpcrdma_header_limits *lim)
{
	for (;;) {
		struct rpcrdma_read_segment *r;
		enum rpcrdma_hdr_status st;
		bool more;

		st = decode_present(c, &more);
		if (st != RPCRDMA_HDR_OK || !more)
			return st;
		if (h->nreads == lim->max_reads)
			return RPCRDMA_HDR_TOO_MANY_READS;
		if (!rpcrdma_cursor_has(c, 4 + RPCRDMA_SEGMENT_BYTES))
			return RPCRDMA_HDR_SHORT;
		r = &h->reads[h->nreads++];
		r->position = rpcrdma_cursor_u32(c);
		st = decode_segment(c, &r->seg);
		if (st != RPCRDMA_HDR_OK)
			return st;
		if (r->position & 3)
			return RPCRDMA_HDR_MISALIGNED_POSITION;
	}
}

static enum rpcrdma_hdr_status decode_chunk(struct rpcrdma_header *h,
					    struct rpcrdma_cursor *c,
					    const struct rpcrdma_header_limits *lim,
					    struct rpcrdma_chunk *chunk)
{
	uint64_t total = 0;
	uint32_t n;

	if (!rpcrdma_cursor_has(c, 4))
		return RPCRDMA_HDR_SHORT;
	n = rpcrdma_cursor_u32(c);
	if (n > lim->max_chunk_segs || n > lim->max_segs - h->nsegs)
		return RPCRDMA_HDR_TOO_MANY_SEGMENTS;
	if (!rpcrdma_cursor_has(c, (size_t)n * RPCRDMA_SEGMENT_BYTES))
		return RPCRDMA_HDR_SHORT;
	chunk->first = h->nsegs;
	chunk->nsegs = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpcrdma_segment *s = &h->segs[h->nsegs++];
		enum rpcrdma_hdr_status st = decode_segment(c, s);

		if (st != RPCRDMA_HDR_OK)
			return st;
		total += s->length;
	}
	return total > UINT32_MAX ? RPCRDMA_HDR_LENGTH_OVERFLOW : RPCRDMA_HDR_OK;
}

static enum rpcrdma_hdr_status decode_write_list(struct rpcrdma_header *h,
						 struct rpcrdma_cursor *c,
						 const struct rpcrdma_header_limits *lim)
{
	for (;;) {
		enum rpcrdma_hdr_status st;
		bool more;

		st = decode_present(c, &more);
		if (st != RPCRDMA_HDR_OK || !more)
			return st;
		if (h->nwrites == lim->max_write_chunks)
			return RPCRDMA_HDR_TOO_MANY_WRITE_CHUNKS;
		st = decode_chunk(h, c, lim, &h->writes[h->nwrites++]);
		if (st != RPCRDMA_HDR_OK)
			return st;
	}
}

static enum rpcrdma_hdr_status decode_reply_chunk(struct rpcrdma_header *h,
						  struct rpcrdma_cursor *c,
						  const struct rpcrdma_header_limits *lim)
{
	enum rpcrdma_hdr_status st = decode_present(c, &h->has_reply);

	if (st != RPCRDMA_HDR_OK || !h->has_reply)
		return st;
	return decode_chunk(h, c, lim, &h->reply);
}

/*
 * Read segments sharing a position form one chunk.  @msg_len is the
 * length of the XDR stream the data chunks are inserted into: the inline
 * message, or for RDMA_NOMSG the position-zero chunk.
 */
static enum rpcrdma_hdr_status check_read_chunks(const struct rpcrdma_header *h,
						 uint64_t msg_len)
{
	uint64_t removed = 0, prev_end = 0;
	uint32_t i = 0;

	while (i < h->nreads) {
		bool first = i == 0;
		struct rpcrdma_read_chunk rc = rpcrdma_read_chunk_next(h, &i);

		if (rc.length > UINT32_MAX)
			return RPCRDMA_HDR_LENGTH_OVERFLOW;
		if (rc.position == 0 && first) { /* later, it is out of order */
			if (h->type != RDMA_NOMSG)
				return RPCRDMA_HDR_POSITION_ZERO_INLINE;
			msg_len = rc.length;
			continue;
		}
		if (rc.position < prev_end)
			return RPCRDMA_HDR_POSITION_ORDER;
		if (rc.position - removed > msg_len)
			return RPCRDMA_HDR_POSITION_BEYOND;
		removed += rpcrdma_xdr_roundup(rc.length);
		prev_end = rc.position + rpcrdma_xdr_roundup(rc.length);
	}
	return RPCRDMA_HDR_OK;
}

static enum rpcrdma_hdr_status decode_chunk_lists(struct rpcrdma_header *h,
						  struct rpcrdma_cursor *c,
						  const struct rpcrdma_header_limits *lim)
{
	enum rpcrdma_hdr_status st;

	st = decode_read_list(h, c, lim);
	if (st == RPCRDMA_HDR_OK)
		st = decode_write_list(h, c, lim);
	if (st == RPCRDMA_HDR_OK)
		st = decode_reply_chunk(h, c, lim);
	return st;
}

static enum rpcrdma_hdr_status decode_error_body(struct rpcrdma_header *h,
						 struct rpcrdma_cursor *c)
{
	if (!rpcrdma_cursor_has(c, 4))
		return RPCRDMA_HDR_SHORT;
	h->err = rpcrdma_cursor_u32(c);
	switch (h->err) {
	case ERR_VERS:
		if (!rpcrdma_cursor_has(c, 8))
			return RPCRDMA_HDR_SHORT;
		h->vers_low = rpcrdma_cursor_u32(c);
		h->vers_high = rpcrdma_cursor_u32(c);
		return RPCRDMA_HDR_OK;
	case ERR_CHUNK:
		return RPCRDMA_HDR_OK;
	default:
		if (!rpcrdma_cursor_has(c, 4 * RPCRDMA_ERROR_EXTRA_WORDS))
			return RPCRDMA_HDR_SHORT;
		for (uint32_t i = 0; i < RPCRDMA_ERROR_EXTRA_WORDS; i++)
			h->err_extra[i] = rpcrdma_cursor_u32(c);
		return RPCRDMA_HDR_OK;
	}
}

static bool is_power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

static enum rpcrdma_hdr_status decode_body(struct rpcrdma_header *h,
					   struct rpcrdma_cursor *c,
					   const struct rpcrdma_header_limits *lim)
{
	switch (h->type) {
	case RDMA_MSGP:
		if (!rpcrdma_cursor_has(c, 8))
			return RPCRDMA_HDR_SHORT;
		h->align = rpcrdma_cursor_u32(c);
		h->thresh = rpcrdma_cursor_u32(c);
		if (h->align && !is_power_of_two(h->align))
			return RPCRDMA_HDR_BAD_ALIGN;
		return decode_chunk_lists(h, c, lim);
	case RDMA_MSG:
	case RDMA_NOMSG:
		return decode_chunk_lists(h, c, lim);
	case RDMA_DONE:
		return RPCRDMA_HDR_OK;
	case RDMA_ERROR:
		return decode_error_body(h, c);
	default:
		return RPCRDMA_HDR_BAD_TYPE;
	}
}

/* What may follow the header, given its type. */
static enum rpcrdma_hdr_status check_message(const struct rpcrdma_header *h,
					     const struct rpcrdma_cursor *c)
{
	if (h->type == RDMA_MSG || h->type == RDMA_MSGP) {
		if (!rpcrdma_cursor_has(c, 4))
			return RPCRDMA_HDR_NO_MESSAGE;
		if (rpcrdma_load_be32(c->pos) != h->xid)
			return RPCRDMA_HDR_XID_MISMATCH;
		return check_read_chunks(h, c->left);
	}
	if (c->left)
		return RPCRDMA_HDR_TRAILING_BYTES;
	return h->type == RDMA_NOMSG ? check_read_chunks(h, 0) : RPCRDMA_HDR_OK;
}

/*
 * The fixed fields and an ERR_VERS body read the same in every version
 * (RFC 8166 section 4.2): a peer that answers with its own rdma_vers
 * still says which versions it takes.
 */
static void decode_foreign_err_vers(struct rpcrdma_header *h, struct rpcrdma_cursor *c)
{
	if (h->type != RDMA_ERROR || !rpcrdma_cursor_has(c, 12) ||
	    rpcrdma_load_be32(c->pos) != ERR_VERS)
		return;
	h->err = rpcrdma_cursor_u32(c);
	h->vers_low = rpcrdma_cursor_u32(c);
	h->vers_high = rpcrdma_cursor_u32(c);
}

enum rpcrdma_hdr_status rpcrdma_header_decode(struct rpcrdma_header *h,
					      const uint8_t *buf, size_t len,
					      const struct rpcrdma_header_limits *limits,
					      size_t *hdr_len)
{
	struct rpcrdma_cursor c = { .pos = buf, .left = len };
	struct rpcrdma_header_limits lim =
		clamp_limits(limits ? limits : &rpcrdma_header_default_limits);
	enum rpcrdma_hdr_status st;

	header_reset(h);
	*hdr_len = 0;
	if (!rpcrdma_cursor_has(&c, RPCRDMA_HDR_FIXED_BYTES))
		return RPCRDMA_HDR_SHORT;
	h->xid = rpcrdma_cursor_u32(&c);
	h->vers = rpcrdma_cursor_u32(&c);
	h->credit = rpcrdma_cursor_u32(&c);
	h->type = rpcrdma_cursor_u32(&c);
	if (h->vers != RPCRDMA_VERSION) {
		decode_foreign_err_vers(h, &c);
		return RPCRDMA_HDR_BAD_VERSION;
	}
	st = decode_body(h, &c, &lim);
	if (st != RPCRDMA_HDR_OK)
		return st;
	*hdr_len = len - c.left;
	return check_message(h, &c);
}

/* ---- encoding ---------------------------------------------------------- */

static bool chunk_valid(const struct rpcrdma_header *h, const struct rpcrdma_chunk *c)
{
	return c->first <= h->nsegs && c->nsegs <= h->nsegs - c->first;
}

static bool lists_valid(const struct rpcrdma_header *h)
{
	if (h->nreads > RPCRDMA_MAX_READ_SEGS || h->nwrites > RPCRDMA_MAX_WRITE_CHUNKS ||
	    h->nsegs > RPCRDMA_MAX_SEGS)
		return false;
	for (uint32_t i = 0; i < h->nwrites; i++)
		if (!chunk_valid(h, &h->writes[i]))
			return false;
	return !h->has_reply || chunk_valid(h, &h->reply);
}

static size_t chunk_lists_size(const struct rpcrdma_header *h)
{
	size_t n = (size_t)h->nreads * RPCRDMA_READ_SEG_BYTES + 4;

	for (uint32_t i = 0; i < h->nwrites; i++)
		n += 8 + (size_t)h->writes[i].nsegs * RPCRDMA_SEGMENT_BYTES;
	n += 4;
	if (h->has_reply)
		n += 4 + (size_t)h->reply.nsegs * RPCRDMA_SEGMENT_BYTES;
	return n + 4;
}

size_t rpcrdma_header_encoded_size(const struct rpcrdma_header *h)
{
	switch (h->type) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		return RPCRDMA_HDR_FIXED_BYTES + chunk_lists_size(h);
	case RDMA_MSGP:
		return RPCRDMA_HDR_FIXED_BYTES + 8 + chunk_lists_size(h);
	case RDMA_ERROR:
		if (h->err == ERR_VERS)
			return RPCRDMA_HDR_FIXED_BYTES + 12;
		if (h->err == ERR_CHUNK)
			return RPCRDMA_HDR_FIXED_BYTES + 4;
		return RPCRDMA_HDR_FIXED_BYTES + 4 + 4 * RPCRDMA_ERROR_EXTRA_WORDS;
	default:
		return RPCRDMA_HDR_FIXED_BYTES;
	}
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	rpcrdma_store_be32(p, v);
	return p + 4;
}

static uint8_t *put_segment(uint8_t *p, const struct rpcrdma_segment *s)
{
	p = put32(p, s->handle);
	p = put32(p, s->length);
	rpcrdma_store_be64(p, s->offset);
	return p + 8;
}

static uint8_t *put_chunk(uint8_t *p, const struct rpcrdma_header *h,
			  const struct rpcrdma_chunk *c)
{
	p = put32(p, c->nsegs);
	for (uint32_t i = 0; i < c->nsegs; i++)
		p = put_segment(p, &h->segs[c->first + i]);
	return p;
}

static uint8_t *put_chunk_lists(uint8_t *p, const struct rpcrdma_header *h)
{
	for (uint32_t i = 0; i < h->nreads; i++) {
		p = put32(p, 1);
		p = put32(p, h->reads[i].position);
		p = put_segment(p, &h->reads[i].seg);
	}
	p = put32(p, 0);
	for (uint32_t i = 0; i < h->nwrites; i++) {
		p = put32(p, 1);
		p = put_chunk(p, h, &h->writes[i]);
	}
	p = put32(p, 0);
	p = put32(p, h->has_reply);
	return h->has_reply ? put_chunk(p, h, &h->reply) : p;
}

static uint8_t *put_error(uint8_t *p, const struct rpcrdma_header *h)
{
	p = put32(p, h->err);
	if (h->err == ERR_VERS) {
		p = put32(p, h->vers_low);
		return put32(p, h->vers_high);
	}
	if (h->err == ERR_CHUNK)
		return p;
	for (uint32_t i = 0; i < RPCRDMA_ERROR_EXTRA_WORDS; i++)
		p = put32(p, h->err_extra[i]);
	return p;
}

enum rpcrdma_hdr_status rpcrdma_header_encode(const struct rpcrdma_header *h,
					      uint8_t *buf, size_t cap,
					      size_t *len)
{
	size_t need;
	uint8_t *p = buf;

	*len = 0;
	if (h->type > RDMA_ERROR)
		return RPCRDMA_HDR_BAD_TYPE;
	if (!lists_valid(h))
		return RPCRDMA_HDR_TOO_MANY_SEGMENTS;
	need = rpcrdma_header_encoded_size(h);
	if (need > cap)
		return RPCRDMA_HDR_NO_SPACE;
	p = put32(p, h->xid);
	p = put32(p, h->vers);
	p = put32(p, h->credit);
	p = put32(p, h->type);
	if (h->type == RDMA_MSGP) {
		p = put32(p, h->align);
		p = put32(p, h->thresh);
	}
	if (h->type <= RDMA_MSGP)
		p = put_chunk_lists(p, h);
	else if (h->type == RDMA_ERROR)
		p = put_error(p, h);
	*len = (size_t)(p - buf);
	return RPCRDMA_HDR_OK;
}

/* ---- builders ------------------------------------------------------------ */

void rpcrdma_header_init(struct rpcrdma_header *h, uint32_t xid,
			 uint32_t credit, enum rpcrdma_msg_type type)
{
	header_reset(h);
	h->xid = xid;
	h->vers = RPCRDMA_VERSION;
	h->credit = credit;
	h->type = type;
}

enum rpcrdma_hdr_status rpcrdma_header_add_read(struct rpcrdma_header *h,
						uint32_t position,
						const struct rpcrdma_segment *seg)
{
	if (h->nreads == RPCRDMA_MAX_READ_SEGS)
		return RPCRDMA_HDR_FULL;
	h->reads[h->nreads].position = position;
	h->reads[h->nreads].seg = *seg;
	h->nreads++;
	return RPCRDMA_HDR_OK;
}

static enum rpcrdma_hdr_status add_chunk(struct rpcrdma_header *h,
					 const struct rpcrdma_segment *segs,
					 uint32_t nsegs, struct rpcrdma_chunk *c)
{
	if (nsegs > RPCRDMA_MAX_SEGS - h->nsegs)
		return RPCRDMA_HDR_FULL;
	c->first = h->nsegs;
	c->nsegs = nsegs;
	for (uint32_t i = 0; i < nsegs; i++)
		h->segs[h->nsegs++] = segs[i];
	return RPCRDMA_HDR_OK;
}

enum rpcrdma_hdr_status rpcrdma_header_add_write_chunk(struct rpcrdma_header *h,
						       const struct rpcrdma_segment *segs,
						       uint32_t nsegs)
{
	enum rpcrdma_hdr_status st;

	if (h->nwrites == RPCRDMA_MAX_WRITE_CHUNKS)
		return RPCRDMA_HDR_FULL;
	st = add_chunk(h, segs, nsegs, &h->writes[h->nwrites]);
	if (st == RPCRDMA_HDR_OK)
		h->nwrites++;
	return st;
}

enum rpcrdma_hdr_status rpcrdma_header_set_reply_chunk(struct rpcrdma_header *h,
						       const struct rpcrdma_segment *segs,
						       uint32_t nsegs)
{
	enum rpcrdma_hdr_status st;

	if (h->has_reply)
		return RPCRDMA_HDR_FULL;
	st = add_chunk(h, segs, nsegs, &h->reply);
	if (st == RPCRDMA_HDR_OK)
		h->has_reply = true;
	return st;
}

void rpcrdma_header_init_err_vers(struct rpcrdma_header *h, uint32_t xid, uint32_t vers,
				  uint32_t credit)
{
	rpcrdma_header_init(h, xid, credit, RDMA_ERROR);
	h->vers = vers;
	h->err = ERR_VERS;
	h->vers_low = RPCRDMA_VERSION;
	h->vers_high = RPCRDMA_VERSION;
}

void rpcrdma_header_init_err_chunk(struct rpcrdma_header *h, uint32_t xid,
				   uint32_t credit)
{
	rpcrdma_header_init(h, xid, credit, RDMA_ERROR);
	h->err = ERR_CHUNK;
}

uint32_t rpcrdma_chunk_length(const struct rpcrdma_header *h,
			      const struct rpcrdma_chunk *c)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < c->nsegs; i++)
		total += h->segs[c->first + i].length;
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

struct rpcrdma_read_chunk rpcrdma_read_chunk_next(const struct rpcrdma_header *h, uint32_t *i)
{
	struct rpcrdma_read_chunk rc = { .position = h->reads[*i].position, .length = 0 };

	while (*i < h->nreads && h->reads[*i].position == rc.position)
		rc.length += h->reads[(*i)++].seg.length;
	return rc;
}

bool rpcrdma_chunk_echo_fits(const struct rpcrdma_header *h, const struct rpcrdma_chunk *got,
			     const struct rpcrdma_header *sent,
			     const struct rpcrdma_chunk *offered)
{
	bool short_seen = false;

	if (got->nsegs > offered->nsegs)
		return false;
	for (uint32_t i = 0; i < got->nsegs; i++) {
		uint32_t len = h->segs[got->first + i].length;
		uint32_t room = sent->segs[offered->first + i].length;

		if (len > room || (short_seen && len))
			return false;
		short_seen = len < room;
	}
	return true;
}
