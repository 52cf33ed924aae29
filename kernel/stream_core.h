/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stream scheduling around a deadline policy: the algorithm of the `stream`
 * elevator, without kernel headers.
 *
 * The same core runs in two places: inside the blk-mq elevator
 * (stream_elv.c, which owns locking, timers and struct request) and in
 * userspace, where headway's differential harness (crates/kcore) drives it
 * and headway's Rust `stream` scheduler through the same events and requires
 * the same decision at every step. The core never reads a clock, never
 * allocates and never sleeps: time comes in as an argument (nanoseconds),
 * decisions go out as values, and every request lives in memory its caller
 * owns.
 *
 * The algorithm and its defaults are described in stream_core.c.
 */
#ifndef HEADWAY_STREAM_CORE_H
#define HEADWAY_STREAM_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
typedef __UINT64_TYPE__ u64;
typedef __UINT32_TYPE__ u32;
typedef __UINT8_TYPE__ u8;
#endif

/* Defaults, with their units (headway's `stream` and `deadline`). */
#define SS_STREAM_THRESHOLD	4		/* requests */
#define SS_TOLERANCE_MILLI	500		/* thousandths: 0.500 */
#define SS_TIME_SLICE_NS	124000000ULL	/* 124 ms */
#define SS_READ_EXPIRE_NS	500000000ULL	/* 500 ms */
#define SS_WRITE_EXPIRE_NS	5000000000ULL	/* 5 s */
#define SS_FIFO_BATCH		16		/* requests per batch */
#define SS_WRITES_STARVED	2		/* read batches */
#ifndef SS_BACKWARD_PCT		/* the harness builds a mutant with another */
#define SS_BACKWARD_PCT		50	/* extra cost of a backward move, % */
#endif

/* Parents kept at once; when full, the one whose deadline is nearest goes. */
#define SS_MAX_PARENTS		128
/* Knots of a service-time table. */
#define SS_EST_MAX_KNOTS	96
/* Distance buckets of the learned estimator: 0, then one per power of two. */
#define SS_LEARN_BUCKETS	66

enum ss_dir { SS_READ = 0, SS_WRITE = 1 };

/* A node of the core's ordered index (a treap keyed by (key, id)). */
struct ss_node {
	struct ss_node *parent;
	struct ss_node *left;
	struct ss_node *right;
	u64 key;
	u64 id;
	u64 prio;
};

struct ss_tree {
	struct ss_node *root;
};

/*
 * A request as the core sees it. The caller fills id (unique and increasing
 * in arrival order), sector, len and dir before ss_arrive(); the core owns
 * the rest until the request completes.
 */
struct ss_rq {
	u64 id;
	u64 sector;		/* 512-byte sectors */
	u32 len;		/* sectors, > 0 */
	u8 dir;			/* enum ss_dir */
	u8 queued;		/* held by the policy */
	u64 arrival;		/* ns */
	u32 stream_size;	/* stream membership, decided at arrival */
	u64 stream;
	struct ss_node by_start;	/* (sector, id) */
	struct ss_node by_end;		/* (sector + len, id) */
	struct ss_node by_fifo;		/* (arrival + expire, id) */
};

/* Settings (each validated by the caller's sysfs store or harness). */
struct ss_params {
	u32 stream_threshold;		/* >= 1 */
	u32 tolerance_milli;		/* tolerance_factor x 1000 */
	u64 time_slice_ns;
	u64 read_expire_ns;
	u64 write_expire_ns;
	u32 fifo_batch;			/* >= 1 */
	u32 writes_starved;
	bool front_merges;
	u32 max_sectors;		/* bound of a merged request */
};

/*
 * Service-time table: est(from, to) interpolates linearly (integer
 * arithmetic) between knots of (forward distance in sectors, ns), clamped at
 * both ends; a backward move costs SS_BACKWARD_PCT percent more. Knots are
 * sorted by distance with non-decreasing times.
 */
struct ss_est {
	u32 n;
	u64 dist[SS_EST_MAX_KNOTS];
	u64 ns[SS_EST_MAX_KNOTS];
};

/* Samples of (distance, service time) learned from completions. */
struct ss_learn {
	u64 count[SS_LEARN_BUCKETS];
	u64 sum_dist[SS_LEARN_BUCKETS];
	u64 sum_ns[SS_LEARN_BUCKETS];
	u64 since_fit;
};

struct ss_parent {
	u64 key;
	u64 pos;
	u64 completion;
	u64 service;
	u64 deadline;
	u32 size;
	u64 stream;
};

/* Read-only counters (sysfs). */
struct ss_stats {
	u64 inserted;
	u64 merged;
	u64 dispatched;
	u64 completed;
	u64 waits;
	u64 waits_caught;
	u64 waits_expired;
	u64 second_chances;
	u64 streams;
	u64 slice_expiries;
	u64 urgent_preemptions;
	u64 parents_dropped;
};

struct ss_core {
	struct ss_params p;
	struct ss_est est;
	u64 capacity;			/* sectors */

	/* The deadline policy, per direction. */
	struct ss_tree sorted[2];
	struct ss_tree ends[2];
	struct ss_tree fifo[2];
	u64 nr_queued;
	u8 last_dir;
	u32 batching;
	u32 starved;
	u64 latest_pos[2];

	/* Stream scheduling. */
	struct ss_parent parents[SS_MAX_PARENTS];	/* by deadline */
	u32 nr_parents;
	bool waiting;
	u64 wait_parent;
	u64 wait_until;
	struct ss_rq *child_ready;
	bool slice_on;
	u64 slice_stream;
	u64 slice_start;
	u64 next_stream;
	u64 next_key;
	bool tail_mode;
	bool hold_on;
	u64 hold_id;
	u64 hold_stream;
	bool last_on;
	u64 last_id;

	struct ss_stats stats;
};

enum ss_verdict { SS_IDLE = 0, SS_DISPATCH = 1, SS_WAIT = 2 };

struct ss_decision {
	enum ss_verdict verdict;
	struct ss_rq *rq;	/* SS_DISPATCH */
	u64 until;		/* SS_WAIT: ask again at this time (ns) */
};

void ss_params_default(struct ss_params *p);
void ss_init(struct ss_core *c, const struct ss_params *p, u64 capacity);

/* Tables. */
void ss_est_flat(struct ss_est *e, u64 ns);
void ss_est_rotational(struct ss_est *e);
int ss_est_set(struct ss_est *e, const u64 *dist, const u64 *ns, u32 n);
u64 ss_est_forward(const struct ss_est *e, u64 dist);
u64 ss_est(const struct ss_est *e, u64 from, u64 to);
void ss_learn_sample(struct ss_learn *l, u64 dist, u64 ns);
bool ss_learn_fit(struct ss_learn *l, struct ss_est *e);

/*
 * Events. ss_arrive() queues rq (or, with try_merge, merges it into a queued
 * request and returns that one); ss_decide() is asked whenever the device
 * can take a request; ss_completed() reports a dispatched request done.
 */
struct ss_rq *ss_arrive(struct ss_core *c, u64 now, struct ss_rq *rq,
			bool try_merge);
void ss_decide(struct ss_core *c, u64 now, struct ss_decision *d);
void ss_completed(struct ss_core *c, u64 now, struct ss_rq *rq);
void ss_set_queue_depth(struct ss_core *c, u32 depth);

/* Merges made outside the core (the kernel's merge hooks). */
void ss_resize(struct ss_core *c, struct ss_rq *rq, u64 sector, u32 len);
void ss_absorb(struct ss_core *c, struct ss_rq *into, struct ss_rq *gone);
void ss_forget(struct ss_core *c, struct ss_rq *rq);
struct ss_rq *ss_front_merge_candidate(struct ss_core *c, u8 dir, u64 end);

bool ss_has_queued(const struct ss_core *c);
bool ss_is_waiting(const struct ss_core *c);

/* Ordered index, exported for the harness's own checks. */
void ss_tree_insert(struct ss_tree *t, struct ss_node *n, u64 key, u64 id);
void ss_tree_erase(struct ss_tree *t, struct ss_node *n);
struct ss_node *ss_tree_lower_bound(const struct ss_tree *t, u64 key, u64 id);
struct ss_node *ss_tree_next(struct ss_node *n);

#endif /* HEADWAY_STREAM_CORE_H */
