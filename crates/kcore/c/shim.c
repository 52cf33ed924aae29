// SPDX-License-Identifier: GPL-2.0
/*
 * The harness's handle on kernel/stream_core.c: requests by id, memory that
 * never moves (the core links requests into its indexes), scalars across the
 * FFI boundary.
 */
#include <stdlib.h>
#include "stream_core.h"

struct kc {
	struct ss_core core;
	struct ss_rq **rqs;	/* by id */
	u64 cap;
};

struct kc *kc_new(u32 threshold, u32 tolerance_milli, u64 slice_ns,
		  u64 read_expire_ns, u64 write_expire_ns, u32 fifo_batch,
		  u32 writes_starved, int front_merges, u32 max_sectors,
		  u64 capacity, u32 depth)
{
	struct ss_params p;
	struct kc *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	ss_params_default(&p);
	p.stream_threshold = threshold;
	p.tolerance_milli = tolerance_milli;
	p.time_slice_ns = slice_ns;
	p.read_expire_ns = read_expire_ns;
	p.write_expire_ns = write_expire_ns;
	p.fifo_batch = fifo_batch;
	p.writes_starved = writes_starved;
	p.front_merges = front_merges != 0;
	p.max_sectors = max_sectors;
	ss_init(&h->core, &p, capacity);
	ss_set_queue_depth(&h->core, depth);
	return h;
}

void kc_free(struct kc *h)
{
	u64 i;

	for (i = 0; i < h->cap; i++)
		free(h->rqs[i]);
	free(h->rqs);
	free(h);
}

int kc_set_est(struct kc *h, const u64 *dist, const u64 *ns, u32 n)
{
	return ss_est_set(&h->core.est, dist, ns, n);
}

u64 kc_est(struct kc *h, u64 from, u64 to)
{
	return ss_est(&h->core.est, from, to);
}

/* Queue request id; returns the id it merged into, or 0; -1 on no memory. */
long long kc_arrive(struct kc *h, u64 now, u64 id, u64 sector, u32 len,
		    u32 dir, int try_merge)
{
	struct ss_rq *rq, *into;

	if (id >= h->cap) {
		u64 cap = h->cap ? h->cap * 2 : 1024, i;
		struct ss_rq **n;

		while (cap <= id)
			cap *= 2;
		n = realloc(h->rqs, cap * sizeof(*n));
		if (!n)
			return -1;
		for (i = h->cap; i < cap; i++)
			n[i] = NULL;
		h->rqs = n;
		h->cap = cap;
	}
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -1;
	rq->id = id;
	rq->sector = sector;
	rq->len = len;
	rq->dir = (u8)dir;
	into = ss_arrive(&h->core, now, rq, try_merge != 0);
	if (into) {
		free(rq);
		return (long long)into->id;
	}
	h->rqs[id] = rq;
	return 0;
}

/* verdict: 0 idle, 1 dispatch (id, sector, len), 2 wait (until). */
u32 kc_decide(struct kc *h, u64 now, u64 *id, u64 *until, u64 *sector,
	      u32 *len)
{
	struct ss_decision d;

	ss_decide(&h->core, now, &d);
	if (d.verdict == SS_DISPATCH) {
		*id = d.rq->id;
		*sector = d.rq->sector;
		*len = d.rq->len;
	}
	*until = d.until;
	return d.verdict;
}

int kc_completed(struct kc *h, u64 now, u64 id)
{
	if (id >= h->cap || !h->rqs[id] || h->rqs[id]->queued)
		return -1;
	ss_completed(&h->core, now, h->rqs[id]);
	free(h->rqs[id]);
	h->rqs[id] = NULL;
	return 0;
}

u64 kc_queued(struct kc *h)
{
	return h->core.nr_queued;
}

/* The counters, in struct ss_stats order. */
void kc_stats(struct kc *h, u64 *out, u32 n)
{
	const u64 *s = (const u64 *)&h->core.stats;
	u32 i;

	for (i = 0; i < n && i < sizeof(h->core.stats) / sizeof(u64); i++)
		out[i] = s[i];
}

/* The learned estimator on its own: samples in, the fitted table's estimate out. */
struct kc_learn {
	struct ss_learn l;
	struct ss_est e;
};

struct kc_learn *kc_learn_new(void)
{
	struct kc_learn *k = calloc(1, sizeof(*k));

	if (k)
		ss_est_rotational(&k->e);
	return k;
}

void kc_learn_sample(struct kc_learn *k, u64 dist, u64 ns)
{
	ss_learn_sample(&k->l, dist, ns);
}

int kc_learn_fit(struct kc_learn *k)
{
	return ss_learn_fit(&k->l, &k->e);
}

u64 kc_learn_est(struct kc_learn *k, u64 dist)
{
	return ss_est_forward(&k->e, dist);
}

void kc_learn_free(struct kc_learn *k)
{
	free(k);
}
