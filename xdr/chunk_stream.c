/*
 * x_ops of the chunk-aware XDR stream.  Every operation either succeeds
 * or records why it failed in stream->status and returns FALSE, which
 * the xdr routine above passes up unchanged.
 */
#include "xdr/chunk_stream.h"

#include <string.h>

#include "xdr/bytes.h"
#include "xdr/names.h"

static const char *const status_names[] = {
	[RPCRDMA_XDR_OK] = "ok",
	[RPCRDMA_XDR_NO_SPACE] = "inline buffer full",
	[RPCRDMA_XDR_SHORT] = "inline data exhausted",
	[RPCRDMA_XDR_CHUNK_MISMATCH] = "item length differs from its chunk",
	[RPCRDMA_XDR_BAD_SETPOS] = "cannot reposition across an opaque item",
};

const char *rpcrdma_xdr_status_str(enum rpcrdma_xdr_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown XDR stream status");
}

static struct rpcrdma_xdr_stream *stream_of(XDR *xdrs)
{
	return (struct rpcrdma_xdr_stream *)xdrs->x_private;
}

static bool_t fail(struct rpcrdma_xdr_stream *s, enum rpcrdma_xdr_status status)
{
	s->status = status;
	return FALSE;
}

static uint32_t roundup_of(uint32_t len)
{
	return (uint32_t)rpcrdma_xdr_roundup(len) - len;
}

static bool is_eligible(const struct rpcrdma_xdr_stream *s)
{
	return s->ordinal <= 32 && (s->ddp_mask >> (s->ordinal - 1)) & 1;
}

/*
 * Classify a byte run: the roundup of the item just seen, or a new item
 * (counted).  Returns true for padding that belongs to a chunked item.
 */
static bool external_pad(struct rpcrdma_xdr_stream *s, u_int len, bool *is_pad)
{
	*is_pad = s->pad_expected && len == s->pad_expected;
	s->pad_expected = 0;
	if (*is_pad)
		return s->pad_external;
	if (len)
		s->ordinal++;
	return false;
}

/* ---- inline byte movement ------------------------------------------------- */

static void advance(struct rpcrdma_xdr_stream *s, u_int len)
{
	s->off += len;
	s->pos += len;
	if (s->pos > s->top)
		s->top = s->pos;
}

static bool_t put_inline(struct rpcrdma_xdr_stream *s, const void *src, u_int len)
{
	if (len > s->cap - s->off)
		return fail(s, RPCRDMA_XDR_NO_SPACE);
	memcpy(s->buf + s->off, src, len);
	advance(s, len);
	return TRUE;
}

static bool_t get_inline(struct rpcrdma_xdr_stream *s, void *dst, u_int len)
{
	if (len > s->cap - s->off)
		return fail(s, RPCRDMA_XDR_SHORT);
	memcpy(dst, s->buf + s->off, len);
	advance(s, len);
	return TRUE;
}

static bool_t x_putlong(XDR *xdrs, const long *lp)
{
	struct rpcrdma_xdr_stream *s = stream_of(xdrs);
	uint8_t w[4];

	s->pad_expected = 0;
	rpcrdma_store_be32(w, (uint32_t)*lp);
	return put_inline(s, w, 4);
}

static bool_t x_getlong(XDR *xdrs, long *lp)
{
	struct rpcrdma_xdr_stream *s = stream_of(xdrs);
	uint8_t w[4];

	s->pad_expected = 0;
	if (!get_inline(s, w, 4))
		return FALSE;
	*lp = (long)(int32_t)rpcrdma_load_be32(w);
	return TRUE;
}

/* ---- opaque data ---------------------------------------------------------------- */

static void item_seen(struct rpcrdma_xdr_stream *s, u_int len, bool external)
{
	s->pad_expected = roundup_of(len);
	s->pad_external = external;
}

/*
 * An opaque item (or a chunked item's roundup) is behind us: a setpos
 * back across it would count it again (its ordinal, its chunk) and,
 * for a chunked one, move the inline offset over bytes never inline.
 * Between floor and top inline offset and position move together.
 */
static bool_t item_done(struct rpcrdma_xdr_stream *s)
{
	s->floor = s->top = s->pos;
	return TRUE;
}

static bool_t x_putbytes(XDR *xdrs, const char *src, u_int len)
{
	struct rpcrdma_xdr_stream *s = stream_of(xdrs);
	bool is_pad;

	if (external_pad(s, len, &is_pad)) {
		s->pos += len;
		return item_done(s);
	}
	if (is_pad || !len)
		return put_inline(s, src, len);
	/* past RPCRDMA_XDR_MAX_ITEMS chunks an eligible item travels inline, as the decoder takes it */
	if (!is_eligible(s) || len < s->ddp_min || s->nitems == RPCRDMA_XDR_MAX_ITEMS) {
		item_seen(s, len, false);
		return put_inline(s, src, len) && item_done(s);
	}
	s->items[s->nitems++] = (struct rpcrdma_xdr_item){ s->pos, len, (const uint8_t *)src };
	s->pos += len;
	item_seen(s, len, true);
	return item_done(s);
}

/*
 * The next chunk for an eligible item of @len bytes; NULL: read it
 * inline.  A responder of RFC 5666 may count the item's roundup in the
 * chunk's length (its section 3.7): the item's bytes are taken all the same.
 */
static const struct rpcrdma_xdr_item *chunk_for(struct rpcrdma_xdr_stream *s, u_int len,
						bool *mismatch)
{
	const struct rpcrdma_xdr_item *c;

	*mismatch = false;
	if (!is_eligible(s) || s->next_item == s->nitems)
		return NULL;
	c = &s->items[s->next_item++];
	if (c->length == len || (len % 4 && c->length == rpcrdma_xdr_roundup(len)))
		return c;
	*mismatch = c->length != 0;
	return NULL;
}

static bool_t x_getbytes(XDR *xdrs, char *dst, u_int len)
{
	struct rpcrdma_xdr_stream *s = stream_of(xdrs);
	const struct rpcrdma_xdr_item *c;
	bool is_pad, mismatch;

	if (external_pad(s, len, &is_pad)) {
		memset(dst, 0, len);
		s->pos += len;
		return item_done(s);
	}
	if (is_pad || !len)
		return get_inline(s, dst, len);
	c = chunk_for(s, len, &mismatch);
	if (mismatch)
		return fail(s, RPCRDMA_XDR_CHUNK_MISMATCH);
	if (!c) {
		item_seen(s, len, false);
		return get_inline(s, dst, len) && item_done(s);
	}
	if ((const uint8_t *)dst != c->data)
		memcpy(dst, c->data, len);
	s->pos += len;
	item_seen(s, len, true);
	return item_done(s);
}

/* ---- position ---------------------------------------------------------------- */

static u_int x_getpostn(XDR *xdrs)
{
	return stream_of(xdrs)->pos;
}

/*
 * Back to a length word to fill in, and forward again to where the
 * stream had reached, as with xdrmem; never back across an opaque item
 * (item_done) nor beyond bytes already written or read.
 */
static bool_t x_setpostn(XDR *xdrs, u_int pos)
{
	struct rpcrdma_xdr_stream *s = stream_of(xdrs);

	if (pos > s->top || pos < s->floor)
		return fail(s, RPCRDMA_XDR_BAD_SETPOS);
	s->off = s->off - s->pos + pos; /* off - pos is constant in [floor, top] */
	s->pos = pos;
	s->pad_expected = 0;
	return TRUE;
}

static int32_t *x_inline(XDR *xdrs, u_int len)
{
	(void)xdrs;
	(void)len;
	return NULL; /* callers fall back to x_getlong/x_putlong */
}

static void x_destroy(XDR *xdrs)
{
	(void)xdrs;
}

static bool_t x_control(XDR *xdrs, int request, void *info)
{
	(void)xdrs;
	(void)request;
	(void)info;
	return FALSE;
}

static const struct xdr_ops encode_ops = {
	.x_getlong = x_getlong,
	.x_putlong = x_putlong,
	.x_getbytes = x_getbytes,
	.x_putbytes = x_putbytes,
	.x_getpostn = x_getpostn,
	.x_setpostn = x_setpostn,
	.x_inline = x_inline,
	.x_destroy = x_destroy,
	.x_control = x_control,
};

static void stream_init(struct rpcrdma_xdr_stream *s, enum xdr_op op, uint8_t *buf,
			uint32_t cap, uint32_t start, uint32_t ddp_mask)
{
	memset(s, 0, sizeof(*s));
	s->xdr.x_op = op;
	s->xdr.x_ops = &encode_ops;
	s->xdr.x_private = (char *)s;
	s->buf = buf;
	s->cap = cap;
	s->off = start <= cap ? start : cap;
	s->pos = s->off;
	s->floor = s->top = s->off;
	s->ddp_mask = ddp_mask;
}

void rpcrdma_xdr_encode_init(struct rpcrdma_xdr_stream *s, uint8_t *buf, uint32_t cap,
			     uint32_t start, uint32_t ddp_mask, uint32_t ddp_min)
{
	stream_init(s, XDR_ENCODE, buf, cap, start, ddp_mask);
	s->ddp_min = ddp_min ? ddp_min : 1;
}

void rpcrdma_xdr_decode_init(struct rpcrdma_xdr_stream *s, const uint8_t *buf, uint32_t len,
			     uint32_t start, uint32_t ddp_mask,
			     const struct rpcrdma_xdr_item *chunks, uint32_t nchunks)
{
	stream_init(s, XDR_DECODE, (uint8_t *)(uintptr_t)buf, len, start, ddp_mask);
	if (nchunks > RPCRDMA_XDR_MAX_ITEMS)
		nchunks = RPCRDMA_XDR_MAX_ITEMS;
	for (uint32_t i = 0; i < nchunks; i++)
		s->items[i] = chunks[i];
	s->nitems = nchunks;
}
