/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RESET -> INIT -> RTR -> RTS of an RC QP over RoCE v2 (port 1, P_Key
 * index 0, global route), shared by the verbs test programs.
 */
#ifndef SOFTRC_VERBS_RC_CONN_H
#define SOFTRC_VERBS_RC_CONN_H

#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

/* What differs between the programs' connections. */
struct rc_conn {
	int access;		/* INIT: qp_access_flags */
	enum ibv_mtu mtu;
	uint32_t dqpn;
	union ibv_gid dgid;
	uint8_t sgid_index;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint8_t rd_atomic;	/* max_dest_rd_atomic and max_rd_atomic */
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint32_t flow_label;	/* RTR: GRH flow label, as given */
};

/* 0, or the state whose transition failed (errno set by libibverbs). */
static __attribute__((unused))
int rc_qp_to_rts(struct ibv_qp *qp, const struct rc_conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = c->access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return IBV_QPS_INIT;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = c->dqpn;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c->dgid;
	a.ah_attr.grh.sgid_index = c->sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.flow_label = c->flow_label;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return IBV_QPS_RTR;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.sq_psn = c->sq_psn;
	a.max_rd_atomic = c->rd_atomic;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return IBV_QPS_RTS;
	return 0;
}

/*
 * The GID index to use: @idx if given (>= 0), else the first RoCE v2 GID
 * holding an IPv4-mapped address. Its GID in *@gid. Return: the index,
 * or -1 if there is none or it cannot be read.
 */
static __attribute__((unused))
int roce_gid_pick(struct ibv_context *ctx, int idx, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int i;

	for (i = 0; idx < 0 && i < 64; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
			idx = i;
	}
	if (idx < 0 || ibv_query_gid(ctx, 1, idx, gid))
		return -1;
	return idx;
}

#endif /* SOFTRC_VERBS_RC_CONN_H */
