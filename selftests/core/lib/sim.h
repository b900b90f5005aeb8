/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A deterministic host simulator for the RC engine: two endpoints, each a
 * softrc_eng_qp with its own memory (a byte array with R_Keys, bounds
 * and permissions), joined by a simulated link with seeded loss,
 * duplication, reordering, corruption, delay and ACK loss, and a virtual
 * clock that fires the engine's timers.
 *
 * Context: host user space only (libc, malloc). Packets cross the link as
 * real bytes: softrc_eng_build_hdrs() + payload + pad + ICRC over a fake
 * IPv4/UDP header; the receiving side checks the ICRC (a bad one is
 * dropped and counted) and runs softrc_parse() before softrc_eng_rx().
 */
#ifndef SOFTRC_SELFTEST_SIM_H
#define SOFTRC_SELFTEST_SIM_H

#include <stdio.h>
#include "internal.h"

#define SIM_SQ_DEPTH	128
#define SIM_RQ_DEPTH	256
#define SIM_NRES	16
#define SIM_MAX_MR	8
#define SIM_MAX_FLUSH	64	/* FLUSHes whose placement state is kept */
#define SIM_L3_BYTES	28	/* fake IPv4 + UDP in front of the BTH */

struct sim;

struct sim_mr {
	u32 rkey;
	u64 va;		/* VA of mem[off] */
	u64 off;
	u32 len;
	u32 access;
	bool valid;
};

/* One completion as the simulated CQ saw it. */
struct sim_cqe {
	struct softrc_eng_cqe c;
	u64 t;
};

/* One packet as it crossed (or failed to cross) the link. */
struct sim_trace {
	u64 t;
	int src;
	struct softrc_pkt pkt;	/* fields as the engine built them */
	bool dropped;		/* by the link or a test filter */
	bool corrupted;
};

struct sim_ep {
	struct sim *sim;
	int id;
	struct softrc_eng_qp qp;
	struct softrc_eng_send_wqe sq[SIM_SQ_DEPTH];
	struct softrc_eng_recv_wqe rq[SIM_RQ_DEPTH];
	struct softrc_eng_rd_res res[SIM_NRES];
	u64 sq_local[SIM_SQ_DEPTH];	/* mem offset of each send slot's buffer */
	u64 rq_local[SIM_RQ_DEPTH];
	u8 *mem;
	u8 *touch;			/* per byte: times written by a callback */
	u64 mem_len;
	struct sim_mr mr[SIM_MAX_MR];
	int nmr;
	u64 deadline[SOFTRC_TIMER_NR];
	struct sim_cqe *cqe;
	u32 ncqe, cqe_cap;
	u32 *inval;			/* R_Keys invalidated, in order */
	u32 ninval, inval_cap;
	u32 nrecv_posted;
	u64 atomics;			/* atomics executed */
	u64 atomic_writes;		/* ATOMIC WRITEs stored */
	u64 flushes;			/* FLUSHes executed */
	u64 flush_placed[SIM_MAX_FLUSH];	/* @placed when each one ran */
	u64 pins;			/* mr_check pins not yet put */
	u64 placed;			/* bytes placed into memory */
	bool errored;
	u32 last_msn;			/* last MSN this side sent */
	bool msn_seen;
	/* timer checks, on exact time (sim.now) */
	u64 armed[SOFTRC_TIMER_NR];	/* last deadline the engine asked for */
	u64 arm_min[SOFTRC_TIMER_NR];	/* its IBTA minimum: arm time + T */
	u8 rx_syndrome;			/* AETH syndrome of the packet in rx */
	u64 rnr_quiet_until;		/* no request before: RNR wait */
	u32 rnr_rounds;			/* RNR waits since una last moved */
	u64 malformed_naks;		/* NAK InvReq (sent or held) for a parser reject */
};

struct sim_link {
	double loss;		/* every packet */
	double ack_loss;	/* extra, for responses and ACKs */
	double dup;
	double reorder;		/* chance of extra delay */
	double corrupt;		/* flip one bit */
	u64 delay_ns;		/* base one-way delay */
	u64 jitter_ns;		/* extra delay of a reordered packet, max */
	double malform;		/* sent 2 bytes too long: a parser reject */
};

struct sim_pkt;

struct sim {
	struct sim_ep ep[2];
	struct sim_link link;
	u64 now;		/* exact time: the hrtimer's clock */
	/*
	 * The glue's packet-path clock (softrc_now()): 0 = exact, else
	 * coarse like ktime_get_coarse_ns(): it moves once a tick of
	 * @tick_ns, by whole intervals with a varying remainder, so it lags
	 * sim.now by less than 2 * @tick_ns (the glue's clock_slack_ns).
	 */
	u64 tick_ns;
	u64 rng;
	u64 seq;
	struct sim_pkt **heap;
	u32 nheap, heap_cap;
	/* deferred receive posts */
	struct sim_defer *defer;
	u32 ndefer, defer_cap;
	/* test hook: return true to drop this packet at transmit time */
	bool (*filter)(struct sim *sim, int src, const struct softrc_pkt *pkt,
		       void *arg);
	void *filter_arg;
	/* optional wire trace */
	u32 tx_budget;		/* softrc_eng_tx budget per call, 0 = ~0 */
	bool print;		/* log every packet and completion to stderr */
	bool fast_csum;		/* trailer = cheap linear checksum, not ICRC */
	bool trace_on;
	struct sim_trace *trace;
	u32 ntrace, trace_cap;
	/* link and checker counters */
	u64 wire_pkts, wire_drops, wire_dups, crc_drops, parse_drops;
	u64 malformed;		/* packets sent malformed */
	u64 timer_fires;	/* retry/RNR expiries checked against IBTA */
	u64 violations;
	char why[256];		/* first invariant violation */
};

struct sim_defer {
	u64 t;
	int ep;
	u64 wr_id;
	u32 len;
	u64 off;
};

/* Set up both endpoints with @attr (dqpn/psns mirrored) and @mem_len. */
void sim_init(struct sim *sim, const struct softrc_eng_attr *attr,
	      u64 mem_len, u64 seed);
void sim_free(struct sim *sim);
/* Register an MR on endpoint @ep: [off, off + len) at VA va_base + off. */
u32 sim_add_mr(struct sim *sim, int ep, u32 rkey, u64 off, u32 len,
	       u32 access);
u64 sim_va(struct sim *sim, int ep, u32 rkey, u64 off);
int sim_post_send(struct sim *sim, int ep, const struct softrc_eng_send_wr *wr,
		  u64 local_off);
int sim_post_recv(struct sim *sim, int ep, u64 wr_id, u32 len, u64 local_off);
void sim_post_recv_at(struct sim *sim, int ep, u64 t, u64 wr_id, u32 len,
		      u64 local_off);
/*
 * Let both endpoints transmit: softrc_eng_tx() with sim->tx_budget,
 * called again while it uses the whole budget (as the glue's tasklet);
 * checks that no call sends more than its budget and that nothing is
 * left pending.
 */
void sim_kick(struct sim *sim);
/* Advance one event time step; false when nothing is left to happen. */
bool sim_step(struct sim *sim);
/* Run until quiet or @max_ns of virtual time; returns true if quiet. */
bool sim_run(struct sim *sim, u64 max_ns);
/* Run until virtual time @t (events at exactly @t included). */
void sim_run_until(struct sim *sim, u64 t);
/* Deliver nothing, just let virtual time pass to @t firing timers. */
u64 sim_next_event(struct sim *sim);
/* The glue's clock now (see sim.tick_ns). */
u64 sim_glue_now(struct sim *sim);

u64 sim_rand(struct sim *sim);
double sim_randf(struct sim *sim);

/* One seeded random scenario with all invariant checks; 0 = pass. */
struct sim_scn_stats {
	u64 wrs, pkts, bytes, retry_exc, errors_injected;
	u64 rnr_exc, malformed, timer_fires;
};

int sim_random_scenario(u64 seed, bool verbose, struct sim_scn_stats *st,
			char *why, size_t why_len);

/*
 * Scenario parts that fail on responder bugs (review findings 1 and 2)
 * until the responder fixes are in; off by default (sim_scn_flags):
 *  SIM_SCN_PSN_CYCLE: a quarter of the runs stop halfway, fast-forward
 *	both QPs by a full 2^24 PSN cycle (as if 2^24 - n zero-length
 *	WRITEs had passed) with the READ/ATOMIC resources of the first half
 *	still saved, then post the rest on the same PSNs;
 *  SIM_SCN_HELD_NAK: on a clean link, every WR before an injected bad
 *	one must succeed (a fatal NAK may not overtake READ responses).
 */
#define SIM_SCN_PSN_CYCLE	BIT(0)
#define SIM_SCN_HELD_NAK	BIT(1)
extern u32 sim_scn_flags;

#endif /* SOFTRC_SELFTEST_SIM_H */
