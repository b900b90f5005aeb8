// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc-resraw: decode softrc's raw restrack records.
 *
 *   rdma -j -r resource show qp | softrc-resraw
 *   rdma -j -r resource show cq | softrc-resraw
 *   rdma -j -r resource show mr | softrc-resraw
 *   softrc-resraw --self-test          (KTAP)
 *
 * iproute2 prints a raw record as a JSON array of byte values,
 * "data":[16,3,...], next to the device and port; this program finds
 * every such array in its input and prints one line per record:
 *
 *   qp qpn=17 state=RTS req_state=READY ... rnr_naks_rcvd=0
 *   cq cqn=2 ring_slots=128 ring_used=0 notify=next overrun=0 user=1
 *   mr mrn=4 kind=user mr_state=valid access=0x7 key=0x1a2b iova=0x...
 *
 * Field names are those of `rdma resource show -dd` (Documentation/
 * softrc.rst). The layout is include/softrc/resraw.h, whose lists also
 * name the CQ notify and MR kind/state values; QP state names come from
 * the protocol core's tables, linked in. Input is untrusted: every
 * length is checked before a field is read.
 *
 * Exit status: 0 when every record decoded, 1 when one did not (a line
 * "softrc-resraw: record N: ..." on stderr says why), 2 on a usage or
 * input error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <softrc/resraw.h>

#include "engine.h"

#define MAX_INPUT	(16u << 20)	/* bytes of JSON read from stdin */
#define MAX_RECORD	4096u		/* bytes in one record */

static const char *name_of(const char *const *names, unsigned int nr,
			   unsigned int v)
{
	return v < nr && names[v] ? names[v] : "unknown";
}

#define NAME(table, v) name_of(table, ARRAY_SIZE(table), v)

static u16 get16(const u8 *p, size_t off)
{
	u16 v;

	memcpy(&v, p + off, sizeof(v));
	return le16_to_cpu(v);
}

static u32 get32(const u8 *p, size_t off)
{
	u32 v;

	memcpy(&v, p + off, sizeof(v));
	return le32_to_cpu(v);
}

static u64 get64(const u8 *p, size_t off)
{
	u64 v;

	memcpy(&v, p + off, sizeof(v));
	return le64_to_cpu(v);
}

#define F32(s, f) get32(rec, offsetof(struct s, f))
#define F64(s, f) get64(rec, offsetof(struct s, f))
#define F8(s, f) rec[offsetof(struct s, f)]

/* the module's names (restrack.c), from resraw.h's lists */
static const char *const notify_names[] = {
	SOFTRC_RESRAW_NOTIFY_LIST(SOFTRC_RESRAW_NAME)
};

static const char *const mr_kind_names[] = {
	SOFTRC_RESRAW_MR_KIND_LIST(SOFTRC_RESRAW_NAME)
};

static const char *const mr_state_names[] = {
	SOFTRC_RESRAW_MR_STATE_LIST(SOFTRC_RESRAW_NAME)
};

static const char *timer_name(u8 timers)
{
	static const char *const names[] = {
		"off", "retry", "rnr", "retry+rnr",
	};

	return names[timers & 3];
}

static void print_qp(FILE *out, const u8 *rec)
{
	fprintf(out, "qp qpn=%" PRIu32 " type=%u ib_state=%u state=%s req_state=%s resp_state=%s",
		F32(softrc_resraw_qp, qpn), F8(softrc_resraw_qp, qp_type),
		F8(softrc_resraw_qp, ib_state),
		NAME(softrc_eng_state_names, F8(softrc_resraw_qp, state)),
		NAME(softrc_eng_req_state_names, F8(softrc_resraw_qp, req_state)),
		NAME(softrc_eng_resp_state_names, F8(softrc_resraw_qp, resp_state)));
	fprintf(out, " sq_psn=%" PRIu32 " rq_psn=%" PRIu32 " unacked_psn_first=%" PRIu32
		" unacked_psns=%" PRIu32,
		F32(softrc_resraw_qp, sq_psn), F32(softrc_resraw_qp, rq_psn),
		F32(softrc_resraw_qp, una), F32(softrc_resraw_qp, unacked_psns));
	fprintf(out, " retry_left=%u rnr_retry_left=%u rd_atomic_outstanding=%" PRIu32
		" rd_atomic_max=%" PRIu32 " responder_resources_live=%" PRIu32,
		F8(softrc_resraw_qp, retry_left), F8(softrc_resraw_qp, rnr_left),
		F32(softrc_resraw_qp, rd_out), F32(softrc_resraw_qp, rd_max),
		F32(softrc_resraw_qp, res_live));
	fprintf(out, " timer=%s retry_timer_ns=%" PRIu64 " rnr_timer_ns=%" PRIu64,
		timer_name(F8(softrc_resraw_qp, timers)),
		F64(softrc_resraw_qp, retry_ns), F64(softrc_resraw_qp, rnr_ns));
	fprintf(out, " retransmits=%" PRIu64 " timeouts=%" PRIu64 " seq_naks_rcvd=%" PRIu64
		" rnr_naks_rcvd=%" PRIu64 " pending_completions=%" PRIu32 " pmtu=%" PRIu32 "\n",
		F64(softrc_resraw_qp, retransmits), F64(softrc_resraw_qp, timeouts),
		F64(softrc_resraw_qp, seq_naks_rcvd), F64(softrc_resraw_qp, rnr_naks_rcvd),
		F32(softrc_resraw_qp, pending), F32(softrc_resraw_qp, pmtu));
}

static void print_cq(FILE *out, const u8 *rec)
{
	fprintf(out, "cq cqn=%" PRIu32 " ring_slots=%" PRIu32 " ring_used=%" PRIu32
		" notify=%s overrun=%u user=%u\n",
		F32(softrc_resraw_cq, cqn), F32(softrc_resraw_cq, slots),
		F32(softrc_resraw_cq, used),
		NAME(notify_names, F8(softrc_resraw_cq, notify)),
		F8(softrc_resraw_cq, overrun), F8(softrc_resraw_cq, user));
}

static void print_mr(FILE *out, const u8 *rec, u32 flags)
{
	fprintf(out, "mr mrn=%" PRIu32 " kind=%s mr_state=%s access=0x%" PRIx32,
		F32(softrc_resraw_mr, mrn),
		NAME(mr_kind_names, F8(softrc_resraw_mr, mr_kind)),
		NAME(mr_state_names, F8(softrc_resraw_mr, mr_state)),
		F32(softrc_resraw_mr, access));
	if (flags & SOFTRC_RESRAW_F_KEYS)
		fprintf(out, " key=0x%" PRIx32 " iova=0x%" PRIx64,
			F32(softrc_resraw_mr, key), F64(softrc_resraw_mr, iova));
	fprintf(out, " length=%" PRIu64 " pages=%" PRIu64 " users=%" PRIu32
		" mws_bound=%" PRIu32 "\n",
		F64(softrc_resraw_mr, length), F64(softrc_resraw_mr, pages),
		F32(softrc_resraw_mr, users), F32(softrc_resraw_mr, mws_bound));
}

/* where bad() reports: stderr, or the self-test's KTAP as diagnostics */
static FILE *report;
static const char *report_prefix = "";

/* report what is wrong with record @recno (from 1); returns -1 */
static int bad(unsigned int recno, const char *fmt, ...)
{
	FILE *f = report ? report : stderr;
	va_list ap;

	fprintf(f, "%ssoftrc-resraw: record %u: ", report_prefix, recno);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	return -1;
}

/*
 * Decode record @recno of @n bytes: the whole RDMA_NLDEV_ATTR_RES_RAW
 * payload. Return 0, or -1 with the reason on stderr.
 */
static int decode_record(FILE *out, unsigned int recno, const u8 *rec, size_t n)
{
	static const size_t need[] = {
		[SOFTRC_RESRAW_QP] = sizeof(struct softrc_resraw_qp),
		[SOFTRC_RESRAW_CQ] = sizeof(struct softrc_resraw_cq),
		[SOFTRC_RESRAW_MR] = sizeof(struct softrc_resraw_mr),
	};
	u32 magic, len, flags;
	u16 version, kind;

	if (n < sizeof(struct softrc_resraw_hdr))
		return bad(recno, "%zu bytes, no header", n);
	magic = F32(softrc_resraw_hdr, magic);
	version = get16(rec, offsetof(struct softrc_resraw_hdr, version));
	kind = get16(rec, offsetof(struct softrc_resraw_hdr, kind));
	len = F32(softrc_resraw_hdr, len);
	flags = F32(softrc_resraw_hdr, flags);
	if (magic != SOFTRC_RESRAW_MAGIC)
		return bad(recno, "magic 0x%08" PRIx32 ", not a softrc record", magic);
	if (version < 1)
		return bad(recno, "version %u", version);
	if (len != n)
		return bad(recno, "header says %" PRIu32 " bytes, record has %zu", len, n);
	if (kind >= ARRAY_SIZE(need) || !need[kind])
		return bad(recno, "unknown kind %u", kind);
	if (len < need[kind])
		return bad(recno, "kind %u needs %zu bytes, record has %" PRIu32,
			   kind, need[kind], len);
	if (version > SOFTRC_RESRAW_VERSION)
		fprintf(out, "# version %u record: fields of version %d shown\n",
			version, SOFTRC_RESRAW_VERSION);
	if (kind == SOFTRC_RESRAW_QP)
		print_qp(out, rec);
	else if (kind == SOFTRC_RESRAW_CQ)
		print_cq(out, rec);
	else
		print_mr(out, rec, flags);
	return 0;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/*
 * Find every "data":[ ... ] array (-p adds spaces) in the NUL-terminated
 * @text and decode
 * it. Return the number of records that failed, or -1 if the text is
 * not iproute2's JSON (an array that does not close, a value > 255, a
 * record over MAX_RECORD bytes). @nrec counts the records seen.
 */
static int decode_text(FILE *out, const char *text, unsigned int *nrec)
{
	static const char tag[] = "\"data\"";
	static u8 rec[MAX_RECORD];
	const char *p = text;
	int nbad = 0;

	*nrec = 0;
	while ((p = strstr(p, tag))) {
		size_t n = 0;

		p = skip_space(p + sizeof(tag) - 1);
		if (*p != ':')
			continue;
		p = skip_space(p + 1);
		if (*p != '[')
			continue;
		p++;
		for (;;) {
			unsigned long v;
			char *end;

			p = skip_space(p);
			if (*p == ']')
				break;
			if (*p < '0' || *p > '9')
				return bad(*nrec + 1, "not a byte value at '%.10s'", p);
			errno = 0;
			v = strtoul(p, &end, 10);
			if (errno || v > 255)
				return bad(*nrec + 1, "byte value over 255");
			if (n == MAX_RECORD)
				return bad(*nrec + 1, "over %u bytes", MAX_RECORD);
			rec[n++] = v;
			p = skip_space(end);
			if (*p == ',')
				p++;
		}
		p++;
		++*nrec;
		if (decode_record(out, *nrec, rec, n))
			nbad++;
	}
	return nbad;
}

/* --self-test: records built byte by byte at resraw.h's offsets */

static int ntest, nfail;

static void ok(bool cond, const char *name)
{
	ntest++;
	if (!cond)
		nfail++;
	printf("%sok %d %s\n", cond ? "" : "not ", ntest, name);
}

static void put16(u8 *b, size_t off, u16 v)
{
	b[off] = v;
	b[off + 1] = v >> 8;
}

static void put32(u8 *b, size_t off, u32 v)
{
	put16(b, off, v);
	put16(b, off + 2, v >> 16);
}

static void put64(u8 *b, size_t off, u64 v)
{
	put32(b, off, v);
	put32(b, off + 4, v >> 32);
}

static void hdr(u8 *b, u16 version, u16 kind, u32 len, u32 flags)
{
	put32(b, 0, 0x57525253);
	put16(b, 4, version);
	put16(b, 6, kind);
	put32(b, 8, len);
	put32(b, 12, flags);
}

/* a QP record: every field a different value, at its documented offset */
static size_t make_qp(u8 *b)
{
	memset(b, 0, 112);
	hdr(b, 1, 1, 112, 0);
	put32(b, 16, 17);		/* qpn */
	b[20] = 2;			/* qp_type RC */
	b[21] = 3;			/* ib_state RTS */
	b[22] = 0;			/* state RTS */
	b[23] = 1;			/* req_state RNR_WAIT */
	b[24] = 2;			/* resp_state IN_WRITE */
	b[25] = 3;			/* timers retry+rnr */
	b[26] = 6;			/* retry_left */
	b[27] = 7;			/* rnr_left */
	put32(b, 28, 0xabcdef);		/* sq_psn */
	put32(b, 32, 1000);		/* rq_psn */
	put32(b, 36, 0xabcde0);		/* una */
	put32(b, 40, 15);		/* unacked_psns */
	put32(b, 44, 2);		/* rd_out */
	put32(b, 48, 16);		/* rd_max */
	put32(b, 52, 1);		/* res_live */
	put32(b, 56, 4);		/* pending */
	put32(b, 60, 1024);		/* pmtu */
	put64(b, 64, 5000000000ull);	/* retry_ns */
	put64(b, 72, 655360);		/* rnr_ns */
	put64(b, 80, 1ull << 40);	/* retransmits */
	put64(b, 88, 9);		/* timeouts */
	put64(b, 96, 10);		/* seq_naks_rcvd */
	put64(b, 104, 11);		/* rnr_naks_rcvd */
	return 112;
}

static size_t make_cq(u8 *b)
{
	memset(b, 0, 32);
	hdr(b, 1, 2, 32, 0);
	put32(b, 16, 5);		/* cqn */
	put32(b, 20, 256);		/* slots */
	put32(b, 24, 3);		/* used */
	b[28] = 2;			/* notify solicited */
	b[29] = 1;			/* overrun */
	b[30] = 1;			/* user */
	return 32;
}

static size_t make_mr(u8 *b, u32 flags)
{
	memset(b, 0, 72);
	hdr(b, 1, 3, 72, flags);
	put32(b, 16, 4);		/* mrn */
	put32(b, 20, 0x7);		/* access */
	b[24] = 1;			/* mr_kind user */
	b[25] = 1;			/* mr_state valid */
	if (flags) {
		put32(b, 28, 0x1a2b);	/* key */
		put64(b, 48, 0x7f0012345000ull); /* iova */
	}
	put32(b, 32, 3);		/* users */
	put32(b, 36, 1);		/* mws_bound */
	put64(b, 56, 65536);		/* length */
	put64(b, 64, 16);		/* pages */
	return 72;
}

/* @b as iproute2 prints it: {"ifindex":3,"ifname":"s0","port":1,"data":[...]} */
static char *to_json(char *s, size_t cap, const u8 *b, size_t n)
{
	size_t off, i;

	off = snprintf(s, cap, "[{\"ifindex\":3,\"ifname\":\"srx0\",\"port\":1,\"data\":[");
	for (i = 0; i < n && off < cap; i++)
		off += snprintf(s + off, cap - off, "%s%u", i ? "," : "", b[i]);
	if (off < cap)
		snprintf(s + off, cap - off, "]}]\n");
	return s;
}

/* decode @json; true if the status is @want_bad and the output is @want */
static bool expect(const char *json, int want_bad, const char *want)
{
	static char got[4096];
	unsigned int nrec;
	FILE *f;
	int nbad;

	memset(got, 0, sizeof(got));
	f = fmemopen(got, sizeof(got) - 1, "w");
	if (!f)
		return false;
	nbad = decode_text(f, json, &nrec);
	fclose(f);
	if (nbad != want_bad || (want && strcmp(got, want))) {
		printf("# status %d (want %d), output:\n# %s", nbad, want_bad, got);
		return false;
	}
	return true;
}

static int self_test(void)
{
	static char json[32768];
	u8 b[512], two[512];
	size_t n;

	printf("TAP version 13\n1..12\n");
	report = stdout;
	report_prefix = "# ";

	n = make_qp(b);
	ok(expect(to_json(json, sizeof(json), b, n), 0,
		  "qp qpn=17 type=2 ib_state=3 state=RTS req_state=RNR_WAIT resp_state=IN_WRITE"
		  " sq_psn=11259375 rq_psn=1000 unacked_psn_first=11259360 unacked_psns=15"
		  " retry_left=6 rnr_retry_left=7 rd_atomic_outstanding=2 rd_atomic_max=16"
		  " responder_resources_live=1 timer=retry+rnr retry_timer_ns=5000000000"
		  " rnr_timer_ns=655360 retransmits=1099511627776 timeouts=9 seq_naks_rcvd=10"
		  " rnr_naks_rcvd=11 pending_completions=4 pmtu=1024\n"),
	   "qp record: every field at its offset, states named by the core");

	n = make_cq(b);
	ok(expect(to_json(json, sizeof(json), b, n), 0,
		  "cq cqn=5 ring_slots=256 ring_used=3 notify=solicited overrun=1 user=1\n"),
	   "cq record");

	n = make_mr(b, SOFTRC_RESRAW_F_KEYS);
	ok(expect(to_json(json, sizeof(json), b, n), 0,
		  "mr mrn=4 kind=user mr_state=valid access=0x7 key=0x1a2b iova=0x7f0012345000"
		  " length=65536 pages=16 users=3 mws_bound=1\n"),
	   "mr record with F_KEYS shows key and iova");

	n = make_mr(b, 0);
	ok(expect(to_json(json, sizeof(json), b, n), 0,
		  "mr mrn=4 kind=user mr_state=valid access=0x7 length=65536 pages=16"
		  " users=3 mws_bound=1\n"),
	   "mr record without F_KEYS shows neither key nor iova");

	/* two records in one dump, pretty-printed with spaces and newlines */
	n = make_cq(b);
	make_cq(two);
	put32(two, 16, 6);
	snprintf(json, sizeof(json), "[ {\n \"data\": [ ");
	{
		size_t i, off = strlen(json);

		for (i = 0; i < n; i++)
			off += snprintf(json + off, sizeof(json) - off, "%u,\n ", b[i]);
		off -= 3;
		off += snprintf(json + off, sizeof(json) - off, " ]\n}, {\"data\":[");
		for (i = 0; i < n; i++)
			off += snprintf(json + off, sizeof(json) - off, "%s%u", i ? ", " : "",
					two[i]);
		snprintf(json + off, sizeof(json) - off, "]} ]\n");
	}
	ok(expect(json, 0,
		  "cq cqn=5 ring_slots=256 ring_used=3 notify=solicited overrun=1 user=1\n"
		  "cq cqn=6 ring_slots=256 ring_used=3 notify=solicited overrun=1 user=1\n"),
	   "two records, one pretty-printed (-p), both decode in order");

	n = make_qp(b);
	b[0] ^= 1;
	ok(expect(to_json(json, sizeof(json), b, n), 1, ""), "bad magic is an error");

	n = make_qp(b);
	put32(b, 8, 111);
	ok(expect(to_json(json, sizeof(json), b, n), 1, ""),
	   "header length other than the record's is an error");

	n = make_qp(b);
	ok(expect(to_json(json, sizeof(json), b, 100), 1, ""),
	   "truncated record is an error");

	n = make_cq(b);
	put16(b, 6, 9);
	ok(expect(to_json(json, sizeof(json), b, n), 1, ""), "unknown kind is an error");

	/* a later version appends fields: the known ones still decode */
	n = make_cq(b);
	memset(b + n, 0xee, 8);
	put16(b, 4, 2);
	put32(b, 8, n + 8);
	ok(expect(to_json(json, sizeof(json), b, n + 8), 0,
		  "# version 2 record: fields of version 1 shown\n"
		  "cq cqn=5 ring_slots=256 ring_used=3 notify=solicited overrun=1 user=1\n"),
	   "version 2 record with appended fields decodes its version 1 fields");

	ok(expect("[{\"data\":[16,256]}]", -1, ""), "byte value over 255 is refused");
	ok(expect("[{\"data\":[16,3", -1, ""), "unterminated array is refused");

	printf("# totals: pass:%d fail:%d\n", ntest - nfail, nfail);
	return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int nrec;
	size_t n = 0;
	char *text;
	int nbad;

	if (argc == 2 && !strcmp(argv[1], "--self-test"))
		return self_test();
	if (argc != 1) {
		fprintf(stderr, "usage: rdma -j -r resource show qp|cq|mr | %s\n"
			"       %s --self-test\n", argv[0], argv[0]);
		return 2;
	}
	text = malloc(MAX_INPUT + 1);
	if (!text)
		return 2;
	while (n < MAX_INPUT) {
		size_t got = fread(text + n, 1, MAX_INPUT - n, stdin);

		if (!got)
			break;
		n += got;
	}
	if (n == MAX_INPUT && fgetc(stdin) != EOF) {
		fprintf(stderr, "error: input over %u bytes\n", MAX_INPUT);
		free(text);
		return 2;
	}
	text[n] = '\0';
	nbad = decode_text(stdout, text, &nrec);
	free(text);
	if (nbad < 0)
		return 2;
	return nbad ? 1 : 0;
}
