/*
 * pcap_reframe: rewrite a capture of soft-iWARP traffic into the
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
 * end means anything to TCP, so the rewrite
 *   - gives each MPA stream's data segments the capture slots of that
 *     stream in sequence-number order (a moved segment takes its new
 *     slot's timestamp);
 *   - cuts each segment at every FPDU start inside it (found by
 *     mpa_stream.c); the pieces keep the segment's headers, with the
 *     sequence number, IP length and IPv4 header checksum of their own
 *     octets.
 * Every payload octet is written once.  Other frames are copied
 * unchanged; so is the rest of a stream that cannot be followed (a gap
 * in the capture, an overlapping retransmission, MPA markers).
 *
 * No file I/O but the writes to @out: the capture comes in as memory,
 * so the unit tests (tests/unit/test_pcap_reframe.c) and the fuzz
 * target (tests/fuzz/fuzz_pcap_reframe.c) run it as the
 * pcap_mpa_reframe program does.
 */
#ifndef RDMATEST_PCAP_REFRAME_H
#define RDMATEST_PCAP_REFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pcap_reframe_result {
	PCAP_REFRAME_OK = 0,
	PCAP_REFRAME_SHORT,     /* shorter than a pcap file header */
	PCAP_REFRAME_NOT_PCAP,  /* no pcap magic number (pcapng is not read) */
	PCAP_REFRAME_LINK_TYPE, /* frames of another link type than Ethernet */
	PCAP_REFRAME_NO_MEMORY,
	PCAP_REFRAME_WRITE,     /* a write to the output failed (errno) */
};

struct pcap_reframe_stats {
	unsigned long frames;       /* records read */
	unsigned long moved;        /* segments moved back into sequence order */
	unsigned long cut;          /* segments cut at FPDU starts */
	unsigned long written;      /* records written */
	unsigned long mpa_streams;  /* connection directions that began with an MPA frame */
	unsigned long unfollowed;   /* of those, not followed to the end (gap, markers) */
	unsigned long truncated_at; /* 0, or the record, cut short, that the capture ends before */
	uint32_t link_type;         /* the capture's */
};

/*
 * pcap_reframe - rewrite the pcap capture @in (@len octets) to @out
 * @stats: filled in; meaningful as far as the result says (link_type
 *         from PCAP_REFRAME_LINK_TYPE on, the counts on PCAP_REFRAME_OK)
 *
 * A capture cut short in a record (tcpdump killed while writing) ends
 * before it, as tshark reads such a file: stats->truncated_at names it
 * and the result is still PCAP_REFRAME_OK.
 */
enum pcap_reframe_result pcap_reframe(const uint8_t *in, size_t len, FILE *out,
				      struct pcap_reframe_stats *stats);

/* A message for a result other than PCAP_REFRAME_OK (the write's lacks errno's text). */
const char *pcap_reframe_strerror(enum pcap_reframe_result r);

#endif
