// SPDX-License-Identifier: GPL-2.0
/*
 * The `stream` I/O scheduler: stream scheduling (paper 000, Section 2.1)
 * around a deadline policy, as a blk-mq elevator for Linux 6.1 and 6.12.
 *
 * Stream scheduling keeps a hard disk idle for a moment when the request
 * that would come next from a sequential stream is cheaper to wait for than
 * the long seek to whatever else is pending, and it does so without knowing
 * which process, thread or virtual machine issued what: streams are learnt
 * from arrival times and disk positions alone (stream_core.c says how). That
 * is the case of storage servers, NFS daemons and hypervisors, where the
 * issuer is a thread pool.
 *
 * This file is the glue between blk-mq and the algorithm in stream_core.c,
 * which has no kernel headers and is checked decision by decision against
 * headway's Rust model in userspace. Here:
 * - one scheduler per request queue (QUEUE_FLAG_SQ_SCHED), one spinlock,
 *   taken with interrupts off (completions may run in hard interrupt
 *   context);
 * - a wait is an hrtimer that runs the hardware queues when it expires; while
 *   the core waits, has_work() says no, so blk-mq does not poll;
 * - requests inserted at the head, requeued requests and requests the core
 *   could not be given memory for go to a FIFO dispatched before the core's
 *   choices; flushes never reach an elevator;
 * - bio and request merges come from blk-mq (elv_rqhash for back merges,
 *   the core's sector index for front merges); the core is told how a merged
 *   request grew;
 * - on a rotational device one request is in the device at a time, as in
 *   Figure 2 (device_depth = 1); more makes the core decide for the request
 *   last put into the device queue (tail mode, 000 Section 3.2);
 * - on a non-rotational device (rotational = 0) the service-time table is
 *   flat and nothing limits the device queue: no request is ever a child of
 *   another, so the scheduler never waits and behaves as deadline does.
 *
 * The estimator (est in Figure 2) is learnt from completions by default
 * (service time against seek distance, in power-of-two distance buckets);
 * writing a table to estimator_table fixes it (headway prints one for a
 * model or a measured device), writing "learn" returns to learning.
 */
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "elevator.h"
#include "blk.h"
#include "blk-mq.h"
#include "blk-mq-sched.h"

#include "stream_core.h"

/* Per-request state bits in rq->elv.priv[1]. */
#define SG_INSERTED	1UL	/* counted in inserted */
#define SG_DISPATCHED	2UL	/* counted in dispatched */

/* Largest accepted setting of a time, ms, and of the tolerance (x1000). */
#define SG_MAX_MS	(3600 * 1000)
#define SG_MAX_TOLERANCE	100000
/* Learned table: refit after this many samples. */
#define SG_FIT_EVERY	64
/*
 * Only requests up to this long teach the table (sectors, 64 KiB): the table
 * prices positioning, and a 1 MiB write-back request's transfer would make
 * every move of its distance look that dear (headway calibrate probes 4 KiB).
 */
#define SG_LEARN_MAX_SECTORS	128
/* A flat table's service time for non-rotational devices, ns. */
#define SG_FLAT_NS	100000

static struct kmem_cache *sg_rq_cache;

/* A request the core knows. */
struct sg_rq {
	struct ss_rq s;
	struct request *rq;
	u64 dispatch_ns;
	bool dispatched;
};

struct sg_data {
	spinlock_t lock;		/* everything below but has_work's */
	struct ss_core core;
	struct ss_learn learn;
	struct request_queue *q;
	struct hrtimer timer;
	struct list_head dispatch;	/* bypassing the core, FIFO */

	bool learning;			/* the table is learnt */
	u32 device_depth;		/* 0: as many as the device takes */
	u64 next_id;
	u64 last_end;			/* where the last completion ended */
	u64 last_complete_ns;

	/* Read without the lock by has_work(). */
	bool waiting;
	bool full;			/* device_depth requests in the device */
	u64 nr_queued;

	u64 inserted;
	u64 merged;
	u64 dispatched;
	u64 completed;
	u64 bypassed;
};

static u64 sg_now(void)
{
	return ktime_get_ns();
}

static void sg_publish(struct sg_data *sd)
{
	WRITE_ONCE(sd->nr_queued, sd->core.nr_queued);
}

static enum hrtimer_restart sg_timer_fn(struct hrtimer *t)
{
	struct sg_data *sd = container_of(t, struct sg_data, timer);

	WRITE_ONCE(sd->waiting, false);
	blk_mq_run_hw_queues(sd->q, true);
	return HRTIMER_NORESTART;
}

static int sg_init_sched(struct request_queue *q, struct elevator_type *e)
{
	struct elevator_queue *eq;
	struct ss_params p;
	struct sg_data *sd;

	eq = elevator_alloc(q, e);
	if (!eq)
		return -ENOMEM;
	sd = kzalloc_node(sizeof(*sd), GFP_KERNEL, q->node);
	if (!sd) {
		kobject_put(&eq->kobj);
		return -ENOMEM;
	}
	eq->elevator_data = sd;
	spin_lock_init(&sd->lock);
	INIT_LIST_HEAD(&sd->dispatch);
	hrtimer_init(&sd->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	sd->timer.function = sg_timer_fn;
	sd->q = q;

	ss_params_default(&p);
	p.max_sectors = queue_max_sectors(q);
	ss_init(&sd->core, &p, q->disk ? get_capacity(q->disk) : 0);
	if (blk_queue_nonrot(q)) {
		ss_est_flat(&sd->core.est, SG_FLAT_NS);
		sd->device_depth = 0;
	} else {
		sd->learning = true;
		sd->device_depth = 1;
	}
	ss_set_queue_depth(&sd->core, sd->device_depth == 1 ? 1 : 2);

	blk_queue_flag_set(QUEUE_FLAG_SQ_SCHED, q);
	q->elevator = eq;
	return 0;
}

static void sg_exit_sched(struct elevator_queue *e)
{
	struct sg_data *sd = e->elevator_data;

	hrtimer_cancel(&sd->timer);
	WARN_ONCE(sd->core.nr_queued || !list_empty(&sd->dispatch),
		  "stream: %llu requests left at exit\n", sd->core.nr_queued);
	kfree(sd);
}

static void sg_prepare_request(struct request *rq)
{
	rq->elv.priv[0] = NULL;
	rq->elv.priv[1] = NULL;
}

static unsigned long sg_flags(struct request *rq)
{
	return (unsigned long)rq->elv.priv[1];
}

static void sg_set_flag(struct request *rq, unsigned long f)
{
	rq->elv.priv[1] = (void *)(sg_flags(rq) | f);
}

/* Called with the lock held: a queued request of the core. */
static struct sg_rq *sg_of(struct request *rq)
{
	return rq->elv.priv[0];
}

static int sg_request_merge(struct request_queue *q, struct request **rq,
			    struct bio *bio)
{
	struct sg_data *sd = q->elevator->elevator_data;
	struct ss_rq *s;
	struct sg_rq *g;

	if (!sd->core.p.front_merges)
		return ELEVATOR_NO_MERGE;
	s = ss_front_merge_candidate(&sd->core, bio_data_dir(bio) == WRITE,
				     bio_end_sector(bio));
	if (!s)
		return ELEVATOR_NO_MERGE;
	g = container_of(s, struct sg_rq, s);
	if (!elv_bio_merge_ok(g->rq, bio))
		return ELEVATOR_NO_MERGE;
	*rq = g->rq;
	if (blk_discard_mergable(g->rq))
		return ELEVATOR_DISCARD_MERGE;
	return ELEVATOR_FRONT_MERGE;
}

/* A bio merged into rq: tell the core its new extent. */
static void sg_request_merged(struct request_queue *q, struct request *rq,
			      enum elv_merge type)
{
	struct sg_data *sd = q->elevator->elevator_data;
	struct sg_rq *g = sg_of(rq);

	if (g)
		ss_resize(&sd->core, &g->s, blk_rq_pos(rq), blk_rq_sectors(rq));
}

/*
 * next was merged into rq; next will be freed. It leaves the merge hash here:
 * blk-mq's insert merge goes on merging the grown request into the one before
 * it, so next may be a queued, hashed request, and a freed request left in the
 * hash is found by the next lookup.
 */
static void sg_requests_merged(struct request_queue *q, struct request *rq,
			       struct request *next)
{
	struct sg_data *sd = q->elevator->elevator_data;
	struct sg_rq *g = sg_of(rq), *n = sg_of(next);

	elv_rqhash_del(q, next);
	if (q->last_merge == next)
		q->last_merge = NULL;
	if (g && n) {
		ss_absorb(&sd->core, &g->s, &n->s);	/* counted by the core */
	} else {
		/* An inserted request merged at insertion. */
		if (n)
			ss_forget(&sd->core, &n->s);
		sd->merged++;
	}
	if (g)
		ss_resize(&sd->core, &g->s, blk_rq_pos(rq), blk_rq_sectors(rq));
	sg_publish(sd);
}

static bool sg_bio_merge(struct request_queue *q, struct bio *bio,
			 unsigned int nr_segs)
{
	struct sg_data *sd = q->elevator->elevator_data;
	struct request *free = NULL;
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&sd->lock, flags);
	ret = blk_mq_sched_try_merge(q, bio, nr_segs, &free);
	spin_unlock_irqrestore(&sd->lock, flags);
	if (free)
		blk_mq_free_request(free);
	return ret;
}

static void sg_insert_one(struct sg_data *sd, struct request *rq,
			  bool at_head, u64 now, struct list_head *free)
{
	struct request_queue *q = sd->q;
	struct sg_rq *g;

	if (!(sg_flags(rq) & SG_INSERTED)) {
		sd->inserted++;
		sg_set_flag(rq, SG_INSERTED);
	}
	if (at_head || (sg_flags(rq) & SG_DISPATCHED) || sg_of(rq)) {
		/* At the head, or a requeue: before the core's choices. */
		list_add_tail(&rq->queuelist, &sd->dispatch);
		sd->bypassed++;
		return;
	}
	if (blk_mq_sched_try_insert_merge(q, rq, free))
		return;
	g = kmem_cache_zalloc(sg_rq_cache, GFP_ATOMIC);
	if (!g) {
		list_add_tail(&rq->queuelist, &sd->dispatch);
		sd->bypassed++;
		return;
	}
	g->rq = rq;
	g->s.id = ++sd->next_id;
	g->s.sector = blk_rq_pos(rq);
	g->s.len = blk_rq_sectors(rq) ? blk_rq_sectors(rq) : 1;
	g->s.dir = rq_data_dir(rq) == WRITE ? SS_WRITE : SS_READ;
	rq->elv.priv[0] = g;
	ss_arrive(&sd->core, now, &g->s, false);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
}

static void sg_insert(struct blk_mq_hw_ctx *hctx, struct list_head *list,
		      bool at_head)
{
	struct request_queue *q = hctx->queue;
	struct sg_data *sd = q->elevator->elevator_data;
	unsigned long flags;
	u64 now = sg_now();
	LIST_HEAD(free);

	spin_lock_irqsave(&sd->lock, flags);
	while (!list_empty(list)) {
		struct request *rq;

		rq = list_first_entry(list, struct request, queuelist);
		list_del_init(&rq->queuelist);
		sg_insert_one(sd, rq, at_head, now, &free);
	}
	sg_publish(sd);
	WRITE_ONCE(sd->waiting, false);
	spin_unlock_irqrestore(&sd->lock, flags);
	blk_mq_free_requests(&free);
}

#ifdef BLK_MQ_INSERT_AT_HEAD	/* Linux 6.5 and later */
static void sg_insert_requests(struct blk_mq_hw_ctx *hctx,
			       struct list_head *list, blk_insert_t flags)
{
	sg_insert(hctx, list, flags & BLK_MQ_INSERT_AT_HEAD);
}
#else
static void sg_insert_requests(struct blk_mq_hw_ctx *hctx,
			       struct list_head *list, bool at_head)
{
	sg_insert(hctx, list, at_head);
}
#endif

static struct request *sg_take(struct sg_data *sd, struct request *rq)
{
	if (!(sg_flags(rq) & SG_DISPATCHED)) {
		sd->dispatched++;
		sg_set_flag(rq, SG_DISPATCHED);
	}
	return rq;
}

static struct request *sg_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct request_queue *q = hctx->queue;
	struct sg_data *sd = q->elevator->elevator_data;
	struct request *rq = NULL;
	struct ss_decision d;
	unsigned long flags;
	struct sg_rq *g;
	u64 now;

	spin_lock_irqsave(&sd->lock, flags);
	if (!list_empty(&sd->dispatch)) {
		rq = list_first_entry(&sd->dispatch, struct request, queuelist);
		list_del_init(&rq->queuelist);
		rq = sg_take(sd, rq);
		goto out;
	}
	if (sd->device_depth &&
	    sd->dispatched - sd->completed >= sd->device_depth) {
		WRITE_ONCE(sd->full, true);
		goto out;
	}
	now = sg_now();
	if (q->disk)
		sd->core.capacity = get_capacity(q->disk);
	ss_decide(&sd->core, now, &d);
	if (d.verdict == SS_DISPATCH) {
		g = container_of(d.rq, struct sg_rq, s);
		rq = g->rq;
		g->dispatched = true;
		g->dispatch_ns = now;
		elv_rqhash_del(q, rq);
		if (q->last_merge == rq)
			q->last_merge = NULL;
		rq = sg_take(sd, rq);
	} else if (d.verdict == SS_WAIT) {
		WRITE_ONCE(sd->waiting, true);
		hrtimer_start(&sd->timer, ns_to_ktime(d.until),
			      HRTIMER_MODE_ABS);
	}
out:
	sg_publish(sd);
	spin_unlock_irqrestore(&sd->lock, flags);
	return rq;
}

static bool sg_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct sg_data *sd = hctx->queue->elevator->elevator_data;

	return !list_empty_careful(&sd->dispatch) ||
	       (READ_ONCE(sd->nr_queued) && !READ_ONCE(sd->waiting) &&
		!READ_ONCE(sd->full));
}

static void sg_learn(struct sg_data *sd, struct sg_rq *g, u64 now)
{
	u64 start = max(g->dispatch_ns, sd->last_complete_ns);
	u64 dist = g->s.sector >= sd->last_end ? g->s.sector - sd->last_end :
						 sd->last_end - g->s.sector;

	if (now > start && g->s.len <= SG_LEARN_MAX_SECTORS)
		ss_learn_sample(&sd->learn, dist, now - start);
	if (sd->learn.since_fit >= SG_FIT_EVERY)
		ss_learn_fit(&sd->learn, &sd->core.est);
}

static void sg_finish_request(struct request *rq)
{
	struct sg_data *sd = rq->q->elevator->elevator_data;
	struct sg_rq *g = sg_of(rq);
	unsigned long flags;
	bool run = false;
	u64 now;

	if (!(sg_flags(rq) & SG_DISPATCHED)) {
		/* Merged away, or never inserted. */
		if (g)
			kmem_cache_free(sg_rq_cache, g);
		rq->elv.priv[0] = NULL;
		return;
	}
	now = sg_now();
	spin_lock_irqsave(&sd->lock, flags);
	sd->completed++;
	if (g && g->dispatched) {
		if (sd->learning)
			sg_learn(sd, g, now);
		ss_completed(&sd->core, now, &g->s);
		sd->last_end = g->s.sector + g->s.len;
		sd->last_complete_ns = now;
	}
	run = sd->core.nr_queued || !list_empty(&sd->dispatch);
	WRITE_ONCE(sd->waiting, false);
	WRITE_ONCE(sd->full, false);
	spin_unlock_irqrestore(&sd->lock, flags);
	if (g)
		kmem_cache_free(sg_rq_cache, g);
	rq->elv.priv[0] = NULL;
	rq->elv.priv[1] = NULL;
	if (run)
		blk_mq_run_hw_queues(rq->q, true);
}

/* ------------------------------------------------------------------ */
/* sysfs: /sys/block/DEV/queue/iosched/                                */

static ssize_t sg_show_u64(struct elevator_queue *e, char *page, u64 v)
{
	return sysfs_emit(page, "%llu\n", v);
}

static int sg_parse(const char *page, u64 min, u64 max, u64 *v)
{
	int err = kstrtou64(page, 10, v);

	if (err)
		return err;
	return *v < min || *v > max ? -EINVAL : 0;
}

#define SG_SHOW(name, expr)						\
static ssize_t sg_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	struct sg_data *sd = e->elevator_data;				\
									\
	return sg_show_u64(e, page, (expr));				\
}

#define SG_STORE(name, min, max, field, value)				\
static ssize_t sg_##name##_store(struct elevator_queue *e,		\
				 const char *page, size_t count)	\
{									\
	struct sg_data *sd = e->elevator_data;				\
	unsigned long flags;						\
	u64 v;								\
	int err = sg_parse(page, min, max, &v);				\
									\
	if (err)							\
		return err;						\
	spin_lock_irqsave(&sd->lock, flags);				\
	sd->core.p.field = (value);					\
	spin_unlock_irqrestore(&sd->lock, flags);			\
	return count;							\
}

SG_SHOW(stream_threshold, sd->core.p.stream_threshold)
SG_STORE(stream_threshold, 1, 1 << 20, stream_threshold, v)
SG_SHOW(stream_time_slice, div_u64(sd->core.p.time_slice_ns, NSEC_PER_MSEC))
SG_STORE(stream_time_slice, 0, SG_MAX_MS, time_slice_ns, v * NSEC_PER_MSEC)
SG_SHOW(read_expire, div_u64(sd->core.p.read_expire_ns, NSEC_PER_MSEC))
SG_STORE(read_expire, 0, SG_MAX_MS, read_expire_ns, v * NSEC_PER_MSEC)
SG_SHOW(write_expire, div_u64(sd->core.p.write_expire_ns, NSEC_PER_MSEC))
SG_STORE(write_expire, 0, SG_MAX_MS, write_expire_ns, v * NSEC_PER_MSEC)
SG_SHOW(fifo_batch, sd->core.p.fifo_batch)
SG_STORE(fifo_batch, 1, UINT_MAX, fifo_batch, v)
SG_SHOW(writes_starved, sd->core.p.writes_starved)
SG_STORE(writes_starved, 0, UINT_MAX, writes_starved, v)
SG_SHOW(front_merges, sd->core.p.front_merges)
SG_STORE(front_merges, 0, 1, front_merges, !!v)

/* The tolerance factor, shown and written as a decimal with up to three
 * digits after the point ("0.500"); stored in thousandths.
 */
static ssize_t sg_tolerance_factor_show(struct elevator_queue *e, char *page)
{
	struct sg_data *sd = e->elevator_data;
	u32 m = sd->core.p.tolerance_milli;

	return sysfs_emit(page, "%u.%03u\n", m / 1000, m % 1000);
}

static ssize_t sg_tolerance_factor_store(struct elevator_queue *e,
					 const char *page, size_t count)
{
	struct sg_data *sd = e->elevator_data;
	u64 whole = 0, frac = 0, scale = 100;
	const char *c = page;
	unsigned long flags;
	bool digits = false;

	for (; *c >= '0' && *c <= '9'; c++, digits = true) {
		whole = whole * 10 + (*c - '0');
		if (whole > SG_MAX_TOLERANCE / 1000)
			return -EINVAL;
	}
	if (*c == '.') {
		for (c++; *c >= '0' && *c <= '9'; c++, digits = true) {
			if (!scale)
				return -EINVAL;	/* finer than 0.001 */
			frac += (*c - '0') * scale;
			scale /= 10;
		}
	}
	if (*c == '\n')
		c++;
	if (!digits || *c)
		return -EINVAL;
	if (whole * 1000 + frac > SG_MAX_TOLERANCE)
		return -EINVAL;
	spin_lock_irqsave(&sd->lock, flags);
	sd->core.p.tolerance_milli = whole * 1000 + frac;
	spin_unlock_irqrestore(&sd->lock, flags);
	return count;
}

static ssize_t sg_device_depth_show(struct elevator_queue *e, char *page)
{
	struct sg_data *sd = e->elevator_data;

	return sg_show_u64(e, page, sd->device_depth);
}

static ssize_t sg_device_depth_store(struct elevator_queue *e,
				     const char *page, size_t count)
{
	struct sg_data *sd = e->elevator_data;
	unsigned long flags;
	u64 v;
	int err = sg_parse(page, 0, 4096, &v);

	if (err)
		return err;
	spin_lock_irqsave(&sd->lock, flags);
	sd->device_depth = v;
	ss_set_queue_depth(&sd->core, v == 1 ? 1 : 2);
	spin_unlock_irqrestore(&sd->lock, flags);
	blk_mq_run_hw_queues(sd->q, true);
	return count;
}

/* One "distance_sectors service_ns" pair per line; "learn" to learn. */
static ssize_t sg_estimator_table_show(struct elevator_queue *e, char *page)
{
	struct sg_data *sd = e->elevator_data;
	struct ss_est *t;
	unsigned long flags;
	ssize_t len = 0;
	u32 i;

	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	spin_lock_irqsave(&sd->lock, flags);
	*t = sd->core.est;
	spin_unlock_irqrestore(&sd->lock, flags);
	for (i = 0; i < t->n; i++)
		len += sysfs_emit_at(page, len, "%llu %llu\n", t->dist[i],
				     t->ns[i]);
	kfree(t);
	return len;
}

static ssize_t sg_estimator_table_store(struct elevator_queue *e,
					const char *page, size_t count)
{
	struct sg_data *sd = e->elevator_data;
	const char *c = page;
	unsigned long flags;
	struct ss_est *t;
	u64 *v;
	u32 n = 0;
	int err = 0;

	if (sysfs_streq(page, "learn")) {
		spin_lock_irqsave(&sd->lock, flags);
		memset(&sd->learn, 0, sizeof(sd->learn));
		sd->learning = true;
		spin_unlock_irqrestore(&sd->lock, flags);
		return count;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	/* Numbers separated by blanks, pairs of distance and time. */
	while (*c && !err) {
		char num[24];
		u32 k = 0;

		while (*c == ' ' || *c == '\t' || *c == '\n')
			c++;
		if (!*c)
			break;
		while (*c && *c != ' ' && *c != '\t' && *c != '\n' &&
		       k < sizeof(num) - 1)
			num[k++] = *c++;
		num[k] = 0;
		if (n >= 2 * SS_EST_MAX_KNOTS) {
			err = -E2BIG;
			break;
		}
		v = n % 2 ? &t->ns[n / 2] : &t->dist[n / 2];
		err = kstrtou64(num, 10, v);
		if (!err && n % 2 && *v > 1000ULL * NSEC_PER_SEC)
			err = -ERANGE;
		n++;
	}
	if (!err && (n == 0 || n % 2))
		err = -EINVAL;
	if (!err && ss_est_set(t, t->dist, t->ns, n / 2))
		err = -EINVAL;
	if (!err) {
		spin_lock_irqsave(&sd->lock, flags);
		sd->core.est = *t;
		sd->learning = false;
		spin_unlock_irqrestore(&sd->lock, flags);
	}
	kfree(t);
	return err ? err : count;
}

static ssize_t sg_estimator_show(struct elevator_queue *e, char *page)
{
	struct sg_data *sd = e->elevator_data;

	return sysfs_emit(page, "%s\n", sd->learning ? "learned" : "table");
}

#define SG_COUNTER(name, expr)						\
static ssize_t sg_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	struct sg_data *sd = e->elevator_data;				\
	unsigned long flags;						\
	u64 v;								\
									\
	spin_lock_irqsave(&sd->lock, flags);				\
	v = (expr);							\
	spin_unlock_irqrestore(&sd->lock, flags);			\
	return sg_show_u64(e, page, v);					\
}

SG_COUNTER(inserted, sd->inserted)
SG_COUNTER(merged, sd->merged + sd->core.stats.merged)
SG_COUNTER(dispatched, sd->dispatched)
SG_COUNTER(completed, sd->completed)
SG_COUNTER(in_flight, sd->dispatched - sd->completed)
SG_COUNTER(queued, sd->core.nr_queued)
SG_COUNTER(bypassed, sd->bypassed)
SG_COUNTER(waits, sd->core.stats.waits)
SG_COUNTER(waits_caught, sd->core.stats.waits_caught)
SG_COUNTER(waits_expired, sd->core.stats.waits_expired)
SG_COUNTER(second_chances, sd->core.stats.second_chances)
SG_COUNTER(streams, sd->core.stats.streams)
SG_COUNTER(slice_expiries, sd->core.stats.slice_expiries)
SG_COUNTER(urgent_preemptions, sd->core.stats.urgent_preemptions)

#define SG_RW(name) __ATTR(name, 0644, sg_##name##_show, sg_##name##_store)
#define SG_RO(name) __ATTR(name, 0444, sg_##name##_show, NULL)

static struct elv_fs_entry sg_attrs[] = {
	SG_RW(stream_threshold),
	SG_RW(tolerance_factor),
	SG_RW(stream_time_slice),
	SG_RW(read_expire),
	SG_RW(write_expire),
	SG_RW(fifo_batch),
	SG_RW(writes_starved),
	SG_RW(front_merges),
	SG_RW(device_depth),
	SG_RW(estimator_table),
	SG_RO(estimator),
	SG_RO(inserted),
	SG_RO(merged),
	SG_RO(dispatched),
	SG_RO(completed),
	SG_RO(in_flight),
	SG_RO(queued),
	SG_RO(bypassed),
	SG_RO(waits),
	SG_RO(waits_caught),
	SG_RO(waits_expired),
	SG_RO(second_chances),
	SG_RO(streams),
	SG_RO(slice_expiries),
	SG_RO(urgent_preemptions),
	__ATTR_NULL
};

static struct elevator_type stream_sched = {
	.ops = {
		.insert_requests	= sg_insert_requests,
		.dispatch_request	= sg_dispatch_request,
		.prepare_request	= sg_prepare_request,
		.finish_request		= sg_finish_request,
		.bio_merge		= sg_bio_merge,
		.request_merge		= sg_request_merge,
		.request_merged		= sg_request_merged,
		.requests_merged	= sg_requests_merged,
		.has_work		= sg_has_work,
		.init_sched		= sg_init_sched,
		.exit_sched		= sg_exit_sched,
	},
	.elevator_attrs = sg_attrs,
	.elevator_name = "stream",
	.elevator_owner = THIS_MODULE,
};

static int __init stream_init(void)
{
	int ret;

	sg_rq_cache = KMEM_CACHE(sg_rq, 0);
	if (!sg_rq_cache)
		return -ENOMEM;
	ret = elv_register(&stream_sched);
	if (ret)
		kmem_cache_destroy(sg_rq_cache);
	return ret;
}

static void __exit stream_exit(void)
{
	elv_unregister(&stream_sched);
	kmem_cache_destroy(sg_rq_cache);
}

module_init(stream_init);
module_exit(stream_exit);

MODULE_AUTHOR("headway");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Stream scheduling: non-work-conserving without process information");
