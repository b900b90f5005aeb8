/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A single engine QP with every action recorded, for unit tests that
 * drive the requester, responder and completer by hand: packets in are
 * struct softrc_pkt built by the test, packets out, placements,
 * completions, timers and atomics are captured in arrays.
 *
 * Context: host user space only.
 */
#ifndef SOFTRC_SELFTEST_CORETEST_H
#define SOFTRC_SELFTEST_CORETEST_H

#include "internal.h"

#define CT_MAX	512

/*
 * TIMEOUT_FIXTURE(name): an empty fixture, there only so that tests can
 * be TEST_F_TIMEOUT(name, ...): a run of many packets (a PSN cycle is
 * 2^24) takes longer under ASan on a loaded host than the harness's 30 s
 * default. Use after kselftest_harness.h.
 */
#define TIMEOUT_FIXTURE(name)	\
	FIXTURE(name) {		\
		int unused;	\
	};			\
	FIXTURE_SETUP(name) {}	\
	FIXTURE_TEARDOWN(name) {}

/* ct_place.pkt_off of a UD receive's GRH slot (ops->place_grh) */
#define CT_GRH_OFF	0xffffffffu

struct ct_place {
	struct softrc_eng_buf dst;
	u32 pkt_off;
};

/* A pin ops->mr_check handed out: what the engine must put exactly once. */
struct ct_pin {
	u32 rkey;
	bool held;		/* not yet put */
	bool gone;		/* the memory behind it went away */
};

struct ct {
	struct softrc_eng_qp qp;
	struct softrc_eng_send_wqe sq[64];
	struct softrc_eng_recv_wqe rq[64];
	struct softrc_eng_rd_res res[4];
	struct softrc_pkt tx[CT_MAX];
	struct softrc_eng_buf txpl[CT_MAX];
	int ntx;
	struct softrc_eng_cqe cqe[CT_MAX];
	int ncqe;
	struct ct_place place[CT_MAX];
	int nplace;
	u64 deadline[SOFTRC_TIMER_NR];
	int timer_calls;
	int mr_checks;
	int mr_fail;		/* mr_check answers error while set */
	u32 last_check_len;
	u32 last_check_access;	/* SOFTRC_ACCESS_* the last check asked for */
	u64 mem;		/* the 8-byte cell atomics work on */
	int natomic;
	u64 atomic_result;
	int nresult;
	int natomic_write;	/* ops->atomic_write stores ... */
	u64 aw_va;		/* ... the last one's VA and packet offset */
	u32 aw_off;
	int nflush;		/* ops->flush runs ... */
	u8 flush_type;		/* ... the last one's placement type */
	u32 inval[16];
	int ninval;
	u32 local_slot[16];	/* send slots ops->local ran, in order */
	int nlocal;
	u8 local_fail;		/* status ops->local returns */
	bool errored;
	struct ct_pin pin[CT_MAX];
	int npin;		/* pins handed out */
	int pins;		/* ... not yet put (0 after every scenario) */
	int bad_puts;		/* puts of a pin not held (must stay 0) */
	bool place_fail;	/* ops->place fails (SOFTRC_E_MEM) while set */
	bool atomic_fail;	/* ops->atomic, atomic_write and flush fail */
	bool result_fail;	/* ops->atomic_result fails while set */
	bool gather_fail;	/* xmit of send WQE payload fails while set */
	int xmit_fails;		/* xmit calls answered SOFTRC_E_MEM */
	u32 retx_psn[16];	/* ops->retransmit: PSNs gone back to ... */
	u8 retx_why[16];	/* ... and why, in order */
	int nretx;
	u32 rnr_psn;		/* ops->rnr_wait: the last RNR NAK's PSN */
	u64 rnr_wait_ns;	/* ... and its wait */
	int nrnr;
	int nexpired[SOFTRC_TIMER_NR];	/* ops->timer_expired, per timer */
};

/* The memory of every pin handed out so far goes away (dereg, invalidate). */
void ct_pins_gone(struct ct *t);

/* Defaults: pmtu 1024, sq_psn 1000, rq_psn 5000, timeout 10, retry 7,
 * rnr_retry 7, min_rnr_timer 5, max_rd_atomic 4, 4 responder resources.
 */
void ct_attr_default(struct softrc_eng_attr *attr);
void ct_init(struct ct *t, const struct softrc_eng_attr *attr);
/* ct_init with the defaults but for the path MTU. */
void ct_init_pmtu(struct ct *t, u32 pmtu);
/* ct_init with the defaults on a QP that denies @remote_deny (ACCESS_*). */
void ct_init_deny(struct ct *t, u32 remote_deny);
/* A request packet as the peer would send it. */
struct softrc_pkt ct_req(u8 opcode, u32 psn, u32 payload_len, bool ackreq);
/* An ACKNOWLEDGE with @syndrome. */
struct softrc_pkt ct_ack(u32 psn, u8 syndrome, u32 msn);
/* A READ response packet or ATOMIC ACK. */
struct softrc_pkt ct_resp(u8 opcode, u32 psn, u32 payload_len, u32 msn);
void ct_rx(struct ct *t, const struct softrc_pkt *pkt, u64 now);
/* ct_req of @op with DMA length @dma (RETH), received at time 0. */
void ct_rx_req(struct ct *t, u8 op, u32 psn, u32 len, bool ackreq, u32 dma);
/* The WR ct_post posts, but for its atomic operands (0 here). */
struct softrc_eng_send_wr ct_wr(const struct ct *t, u8 opcode, u32 len, u8 flags);
int ct_post(struct ct *t, u8 opcode, u32 len, u8 flags);
/* Count transmitted packets with this opcode. */
int ct_count_tx(const struct ct *t, u8 opcode);
/* The last packet sent is a NAK with @code at @psn. */
bool ct_last_is_nak(const struct ct *t, u8 code, u32 psn);
/* @p is a READ RESPONSE ONLY without payload at @psn: the answer to an
 * ATOMIC WRITE or a FLUSH.
 */
bool ct_is_rd_reply(const struct softrc_pkt *p, u32 psn);

#endif /* SOFTRC_SELFTEST_CORETEST_H */
