// SPDX-License-Identifier: GPL-2.0
/*
 * Stream scheduling (SS) around a deadline policy, the algorithm of the
 * `stream` elevator. Paper 000 (Stream Scheduling), Section 2.1, Figure 2,
 * with the defaults of its Section 3, wrapped around a deadline policy as the
 * paper's Linux 2.6.31 prototype was.
 *
 * SS waits for a request that has not arrived when waiting is cheaper than
 * serving what is pending, without knowing which process sent what. A
 * request N arriving after R completed is R's child when
 *
 *	N.arrival - R.completion + est(R.end, N.sector) < R.service
 *
 * where R.service = est(R.end, policy's choice) is priced when R completes.
 * Children chain into streams; a stream of stream_threshold requests or more
 * is established, and when its newest member completes SS keeps the device
 * idle until the child arrives (it is dispatched at once) or until
 * R.deadline = R.completion + R.service. A stream at least
 * (1 + tolerance) x threshold long gets a second chance when the wait runs
 * out: tolerance x service more, its service scaled by (1 + tolerance) and its
 * size reset to the threshold.
 *
 * What headway's `stream` adds, and this core keeps decision for decision:
 * - stream_time_slice: a stream served longer than the slice is not waited
 *   for while other requests are pending;
 * - the policy's urgency: SS never waits while the deadline policy has an
 *   expired request, and a wait ends when the next one expires;
 * - nothing pending when R completes: R.service is est over a third of the
 *   device (the mean distance of two random positions);
 * - a drive that queues commands (tail mode, 000 Section 3.2): the decision is
 *   taken for the request last put into the device queue; while it belongs
 *   to an established stream nothing else enters the queue behind it.
 *
 * The deadline policy (Linux's deadline, as headway's `deadline`): per
 * direction a sector-sorted index and a FIFO by expiry; a batch of up to
 * fifo_batch requests sweeps upward from where the last one of its direction
 * ended; a new batch prefers reads unless writes were starved writes_starved
 * times, and starts at the FIFO head when it has expired or nothing lies
 * ahead of the sweep. Ties go to the lower id (the earlier arrival).
 *
 * The index is a treap keyed by (key, id) whose priorities are a fixed hash
 * of the id: the same shape on every run, O(log n) expected per operation.
 *
 * Integer arithmetic only: times in ns (u64, additions saturate), the
 * tolerance in thousandths, estimates interpolated with one division.
 */
#include "stream_core.h"

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/string.h>
#define ss_div(a, b)		div64_u64((a), (b))
#define ss_muldiv(a, b, c)	mul_u64_u64_div_u64((a), (b), (c))
#else
#include <string.h>
#define ss_div(a, b)		((a) / (b))
#define ss_muldiv(a, b, c)	((u64)((__uint128_t)(a) * (b) / (c)))
#endif

static u64 sat_add(u64 a, u64 b)
{
	return a + b < a ? ~0ULL : a + b;
}

static u64 since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* ------------------------------------------------------------------ */
/* The ordered index.                                                  */

static u64 mix(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static bool node_less(u64 ka, u64 ia, const struct ss_node *b)
{
	return ka < b->key || (ka == b->key && ia < b->id);
}

static void rotate_up(struct ss_tree *t, struct ss_node *x)
{
	struct ss_node *p = x->parent, *g = p->parent;

	if (p->left == x) {
		p->left = x->right;
		if (x->right)
			x->right->parent = p;
		x->right = p;
	} else {
		p->right = x->left;
		if (x->left)
			x->left->parent = p;
		x->left = p;
	}
	p->parent = x;
	x->parent = g;
	if (!g)
		t->root = x;
	else if (g->left == p)
		g->left = x;
	else
		g->right = x;
}

void ss_tree_insert(struct ss_tree *t, struct ss_node *n, u64 key, u64 id)
{
	struct ss_node **link = &t->root, *parent = NULL;

	n->key = key;
	n->id = id;
	n->prio = mix(id);
	n->left = NULL;
	n->right = NULL;
	while (*link) {
		parent = *link;
		link = node_less(key, id, parent) ? &parent->left : &parent->right;
	}
	n->parent = parent;
	*link = n;
	while (n->parent && n->parent->prio < n->prio)
		rotate_up(t, n);
}

void ss_tree_erase(struct ss_tree *t, struct ss_node *n)
{
	while (n->left || n->right) {
		struct ss_node *c;

		if (!n->left)
			c = n->right;
		else if (!n->right)
			c = n->left;
		else
			c = n->left->prio > n->right->prio ? n->left : n->right;
		rotate_up(t, c);
	}
	if (!n->parent)
		t->root = NULL;
	else if (n->parent->left == n)
		n->parent->left = NULL;
	else
		n->parent->right = NULL;
	n->parent = NULL;
}

/* The first node at or after (key, id). */
struct ss_node *ss_tree_lower_bound(const struct ss_tree *t, u64 key, u64 id)
{
	struct ss_node *n = t->root, *best = NULL;

	while (n) {
		if (n->key < key || (n->key == key && n->id < id)) {
			n = n->right;
		} else {
			best = n;
			n = n->left;
		}
	}
	return best;
}

struct ss_node *ss_tree_next(struct ss_node *n)
{
	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return n;
	}
	while (n->parent && n->parent->right == n)
		n = n->parent;
	return n->parent;
}

static struct ss_node *tree_first(const struct ss_tree *t)
{
	return ss_tree_lower_bound(t, 0, 0);
}

#define rq_of(node, member) \
	((struct ss_rq *)((char *)(node) - offsetof(struct ss_rq, member)))

/* ------------------------------------------------------------------ */
/* Service-time tables.                                                */

void ss_est_flat(struct ss_est *e, u64 ns)
{
	e->n = 1;
	e->dist[0] = 0;
	e->ns[0] = ns;
}

/*
 * A generic 7200 rpm disk until completions teach the learned table better:
 * a sequential request in a fraction of a millisecond, a short seek a
 * rotation, a full stroke about 20 ms.
 */
#define SS_ROTATIONAL_KNOTS 8

void ss_est_rotational(struct ss_est *e)
{
	static const u64 dist[SS_ROTATIONAL_KNOTS] = { 0, 256, 2048, 1ULL << 16, 1ULL << 20,
				    1ULL << 24, 1ULL << 28, 1ULL << 31 };
	static const u64 ns[SS_ROTATIONAL_KNOTS] = { 100000, 1500000, 4000000, 5500000, 7000000,
				  9000000, 13000000, 20000000 };

	ss_est_set(e, dist, ns, SS_ROTATIONAL_KNOTS);
}

/*
 * Install a table: distances strictly increasing, times non-decreasing (a
 * longer move never costs less). Returns 0, or -1 leaving e unchanged.
 */
int ss_est_set(struct ss_est *e, const u64 *dist, const u64 *ns, u32 n)
{
	u32 i;

	if (n < 1 || n > SS_EST_MAX_KNOTS)
		return -1;
	for (i = 1; i < n; i++)
		if (dist[i] <= dist[i - 1] || ns[i] < ns[i - 1])
			return -1;
	for (i = 0; i < n; i++) {
		e->dist[i] = dist[i];
		e->ns[i] = ns[i];
	}
	e->n = n;
	return 0;
}

u64 ss_est_forward(const struct ss_est *e, u64 dist)
{
	u32 lo = 0, hi = e->n;
	u64 d0, t0;

	/* i = the number of knots at or before dist */
	while (lo < hi) {
		u32 mid = (lo + hi) / 2;

		if (e->dist[mid] <= dist)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return e->ns[0];
	if (lo == e->n)
		return e->ns[e->n - 1];
	d0 = e->dist[lo - 1];
	t0 = e->ns[lo - 1];
	return t0 + ss_muldiv(dist - d0, e->ns[lo] - t0, e->dist[lo] - d0);
}

u64 ss_est(const struct ss_est *e, u64 from, u64 to)
{
	if (to >= from)
		return ss_est_forward(e, to - from);
	return ss_muldiv(ss_est_forward(e, from - to), 100 + SS_BACKWARD_PCT, 100);
}

static u32 bucket_of(u64 dist)
{
	u32 b = 0;

	while (dist) {
		b++;
		dist >>= 1;
	}
	return b;
}

/*
 * One completion's sample. A bucket's sums halve once it holds 1024
 * samples, so the table follows a device whose behaviour changes. Once a
 * bucket has 8 samples, a sample is clipped at 4 times its mean: a request
 * that waited behind a cache flush or a host hiccup must not make every move
 * of its distance look that dear.
 */
void ss_learn_sample(struct ss_learn *l, u64 dist, u64 ns)
{
	u32 b = bucket_of(dist);

	if (l->count[b] >= 8) {
		u64 cap = ss_div(4 * l->sum_ns[b], l->count[b]);

		ns = ns < cap ? ns : cap;
	}
	if (l->count[b] >= 1024) {
		l->count[b] /= 2;
		l->sum_dist[b] /= 2;
		l->sum_ns[b] /= 2;
	}
	l->count[b]++;
	l->sum_dist[b] += dist;
	l->sum_ns[b] += ns;
	l->since_fit++;
}

/*
 * Refit the table from the buckets with 8 samples or more: a knot at each
 * bucket's mean distance and mean time, times made non-decreasing. Returns
 * whether the table changed (it needs two such buckets).
 */
bool ss_learn_fit(struct ss_learn *l, struct ss_est *e)
{
	u64 dist[SS_EST_MAX_KNOTS], ns[SS_EST_MAX_KNOTS], max = 0;
	u32 b, n = 0;

	l->since_fit = 0;
	for (b = 0; b < SS_LEARN_BUCKETS && n < SS_EST_MAX_KNOTS; b++) {
		u64 d, t;

		if (l->count[b] < 8)
			continue;
		d = ss_div(l->sum_dist[b], l->count[b]);
		t = ss_div(l->sum_ns[b], l->count[b]);
		if (n && d <= dist[n - 1])
			continue;
		max = t > max ? t : max;
		dist[n] = d;
		ns[n] = max;
		n++;
	}
	if (n < 2)
		return false;
	return ss_est_set(e, dist, ns, n) == 0;
}

/* ------------------------------------------------------------------ */
/* The deadline policy.                                                */

static u64 expire_of(const struct ss_core *c, u8 dir)
{
	return dir == SS_READ ? c->p.read_expire_ns : c->p.write_expire_ns;
}

static u64 expiry(const struct ss_core *c, const struct ss_rq *rq)
{
	return sat_add(rq->arrival, expire_of(c, rq->dir));
}

static void dl_add(struct ss_core *c, struct ss_rq *rq)
{
	ss_tree_insert(&c->sorted[rq->dir], &rq->by_start, rq->sector, rq->id);
	ss_tree_insert(&c->ends[rq->dir], &rq->by_end, rq->sector + rq->len,
		       rq->id);
	ss_tree_insert(&c->fifo[rq->dir], &rq->by_fifo, expiry(c, rq), rq->id);
	rq->queued = 1;
	c->nr_queued++;
}

static void dl_remove(struct ss_core *c, struct ss_rq *rq)
{
	ss_tree_erase(&c->sorted[rq->dir], &rq->by_start);
	ss_tree_erase(&c->ends[rq->dir], &rq->by_end);
	ss_tree_erase(&c->fifo[rq->dir], &rq->by_fifo);
	rq->queued = 0;
	c->nr_queued--;
}

static struct ss_rq *next_in_sweep(const struct ss_core *c, u8 dir)
{
	struct ss_node *n = ss_tree_lower_bound(&c->sorted[dir],
						c->latest_pos[dir], 0);

	return n ? rq_of(n, by_start) : NULL;
}

static struct ss_rq *fifo_head(const struct ss_core *c, u8 dir)
{
	struct ss_node *n = tree_first(&c->fifo[dir]);

	return n ? rq_of(n, by_fifo) : NULL;
}

struct dl_plan {
	struct ss_rq *rq;
	u8 dir;
	bool new_batch;
	u32 starved;
};

/* What the next dispatch would be, without committing it. */
static bool dl_plan(const struct ss_core *c, u64 now, struct dl_plan *pl)
{
	bool reads = c->fifo[SS_READ].root, writes = c->fifo[SS_WRITE].root;
	struct ss_rq *head, *next;

	if (c->batching < c->p.fifo_batch) {
		next = next_in_sweep(c, c->last_dir);
		if (next) {
			pl->rq = next;
			pl->dir = c->last_dir;
			pl->new_batch = false;
			pl->starved = c->starved;
			return true;
		}
	}
	if (reads && !(writes && c->starved >= c->p.writes_starved)) {
		pl->dir = SS_READ;
		pl->starved = c->starved;
		if (writes && pl->starved != ~0U)
			pl->starved++;
	} else if (writes) {
		pl->dir = SS_WRITE;
		pl->starved = 0;
	} else {
		return false;
	}
	head = fifo_head(c, pl->dir);
	next = next_in_sweep(c, pl->dir);
	pl->rq = next && expiry(c, head) > now ? next : head;
	pl->new_batch = true;
	return true;
}

static struct ss_rq *dl_select(const struct ss_core *c, u64 now)
{
	struct dl_plan pl;

	return dl_plan(c, now, &pl) ? pl.rq : NULL;
}

/* Dispatch rq: the planned request, or any other queued one. */
static void dl_take(struct ss_core *c, u64 now, struct ss_rq *rq)
{
	struct dl_plan pl;

	if (!dl_plan(c, now, &pl) || pl.rq != rq) {
		bool cont = rq->dir == c->last_dir &&
			    c->batching < c->p.fifo_batch;

		pl.rq = rq;
		pl.dir = rq->dir;
		pl.new_batch = !cont;
		if (cont)
			pl.starved = c->starved;
		else if (rq->dir == SS_WRITE)
			pl.starved = 0;
		else if (c->fifo[SS_WRITE].root && c->starved != ~0U)
			pl.starved = c->starved + 1;
		else
			pl.starved = c->starved;
	}
	dl_remove(c, rq);
	if (pl.new_batch) {
		c->last_dir = pl.dir;
		c->batching = 0;
		c->starved = pl.starved;
	}
	c->batching++;
	c->latest_pos[pl.dir] = rq->sector + rq->len;
}

static bool dl_urgent(const struct ss_core *c, u64 now)
{
	u8 d;

	for (d = 0; d < 2; d++) {
		struct ss_rq *h = fifo_head(c, d);

		if (h && expiry(c, h) <= now)
			return true;
	}
	return false;
}

/* The earliest expiry of a queued request; false when nothing is queued. */
static bool dl_next_urgent(const struct ss_core *c, u64 *at)
{
	bool any = false;
	u8 d;

	for (d = 0; d < 2; d++) {
		struct ss_rq *h = fifo_head(c, d);

		if (h && (!any || expiry(c, h) < *at)) {
			*at = expiry(c, h);
			any = true;
		}
	}
	return any;
}

/* Re-key a queued request whose extent or arrival changed. */
static void dl_rekey(struct ss_core *c, struct ss_rq *rq, u64 sector, u32 len,
		     u64 arrival)
{
	u8 d = rq->dir;

	ss_tree_erase(&c->sorted[d], &rq->by_start);
	ss_tree_erase(&c->ends[d], &rq->by_end);
	ss_tree_erase(&c->fifo[d], &rq->by_fifo);
	rq->sector = sector;
	rq->len = len;
	rq->arrival = arrival;
	ss_tree_insert(&c->sorted[d], &rq->by_start, sector, rq->id);
	ss_tree_insert(&c->ends[d], &rq->by_end, sector + len, rq->id);
	ss_tree_insert(&c->fifo[d], &rq->by_fifo, expiry(c, rq), rq->id);
}

/*
 * Merge rq into a queued request of its direction: appended to one ending
 * where rq starts, else (front_merges) prepended to one starting where rq
 * ends, the lowest id first, within max_sectors. The merged request keeps
 * the earlier arrival.
 */
static struct ss_rq *dl_merge(struct ss_core *c, struct ss_rq *rq)
{
	u64 total, arrival;
	struct ss_node *n;
	struct ss_rq *q;

	for (n = ss_tree_lower_bound(&c->ends[rq->dir], rq->sector, 0);
	     n && n->key == rq->sector; n = ss_tree_next(n)) {
		q = rq_of(n, by_end);
		total = (u64)q->len + rq->len;
		if (total <= c->p.max_sectors) {
			arrival = rq->arrival < q->arrival ? rq->arrival :
							     q->arrival;
			dl_rekey(c, q, q->sector, (u32)total, arrival);
			return q;
		}
	}
	if (!c->p.front_merges)
		return NULL;
	q = ss_front_merge_candidate(c, rq->dir, rq->sector + rq->len);
	for (n = q ? &q->by_start : NULL; n && n->key == rq->sector + rq->len;
	     n = ss_tree_next(n)) {
		q = rq_of(n, by_start);
		total = (u64)q->len + rq->len;
		if (total <= c->p.max_sectors) {
			arrival = rq->arrival < q->arrival ? rq->arrival :
							     q->arrival;
			dl_rekey(c, q, rq->sector, (u32)total, arrival);
			return q;
		}
	}
	return NULL;
}

/* The queued request of dir starting at end with the lowest id. */
struct ss_rq *ss_front_merge_candidate(struct ss_core *c, u8 dir, u64 end)
{
	struct ss_node *n = ss_tree_lower_bound(&c->sorted[dir], end, 0);

	return n && n->key == end ? rq_of(n, by_start) : NULL;
}

/* ------------------------------------------------------------------ */
/* Stream scheduling.                                                  */

void ss_params_default(struct ss_params *p)
{
	p->stream_threshold = SS_STREAM_THRESHOLD;
	p->tolerance_milli = SS_TOLERANCE_MILLI;
	p->time_slice_ns = SS_TIME_SLICE_NS;
	p->read_expire_ns = SS_READ_EXPIRE_NS;
	p->write_expire_ns = SS_WRITE_EXPIRE_NS;
	p->fifo_batch = SS_FIFO_BATCH;
	p->writes_starved = SS_WRITES_STARVED;
	p->front_merges = true;
	p->max_sectors = 2560;
}

void ss_init(struct ss_core *c, const struct ss_params *p, u64 capacity)
{
	memset(c, 0, sizeof(*c));
	c->p = *p;
	c->capacity = capacity;
	ss_est_rotational(&c->est);
}

void ss_set_queue_depth(struct ss_core *c, u32 depth)
{
	c->tail_mode = depth > 1;
}

bool ss_has_queued(const struct ss_core *c)
{
	return c->nr_queued > 0;
}

bool ss_is_waiting(const struct ss_core *c)
{
	return c->waiting;
}

/* Stream size that earns a second chance: ceil((1 + tolerance) x threshold). */
static u64 second_chance_size(const struct ss_core *c)
{
	u64 v = (u64)(1000 + c->p.tolerance_milli) * c->p.stream_threshold;

	return ss_div(v + 999, 1000);
}

static u64 arbitrary_cost(const struct ss_core *c)
{
	return ss_est(&c->est, 0, ss_div(c->capacity, 3));
}

static void insert_parent(struct ss_core *c, const struct ss_parent *p)
{
	u32 at = 0;

	if (c->nr_parents == SS_MAX_PARENTS) {
		/* Full: the parent nearest its deadline goes (not the waited one). */
		u32 drop = c->waiting && c->parents[0].key == c->wait_parent;

		memmove(&c->parents[drop], &c->parents[drop + 1],
			(c->nr_parents - drop - 1) * sizeof(*p));
		c->nr_parents--;
		c->stats.parents_dropped++;
	}
	while (at < c->nr_parents && c->parents[at].deadline <= p->deadline)
		at++;
	memmove(&c->parents[at + 1], &c->parents[at],
		(c->nr_parents - at) * sizeof(*p));
	c->parents[at] = *p;
	c->nr_parents++;
}

static void remove_parent(struct ss_core *c, u32 i)
{
	memmove(&c->parents[i], &c->parents[i + 1],
		(c->nr_parents - i - 1) * sizeof(c->parents[0]));
	c->nr_parents--;
}

/* Expired parents leave; the waited-for one stays until its timer fires. */
static void drop_expired(struct ss_core *c, u64 now)
{
	u32 i, kept = 0;

	for (i = 0; i < c->nr_parents; i++) {
		struct ss_parent *p = &c->parents[i];

		if (p->deadline >= now || (c->waiting && p->key == c->wait_parent))
			c->parents[kept++] = *p;
	}
	c->nr_parents = kept;
}

static int parent_index(const struct ss_core *c, u64 key)
{
	u32 i;

	for (i = 0; i < c->nr_parents; i++)
		if (c->parents[i].key == key)
			return i;
	return -1;
}

/* The wait ran out: a second chance, or give up (Figure 2, timer). */
static void timer_expired(struct ss_core *c, u64 now)
{
	struct ss_parent p;
	u64 extra, until;
	int i;

	if (!c->waiting)
		return;
	c->waiting = false;
	i = parent_index(c, c->wait_parent);
	if (i < 0)
		return;
	/* A tolerance of 0 gives no second chance (it would add nothing). */
	if (c->p.tolerance_milli && c->parents[i].size >= second_chance_size(c)) {
		p = c->parents[i];
		remove_parent(c, i);
		extra = ss_muldiv(p.service, c->p.tolerance_milli, 1000);
		p.service = ss_muldiv(p.service, 1000 + c->p.tolerance_milli,
				      1000);
		p.deadline = sat_add(p.completion, p.service);
		p.size = c->p.stream_threshold;
		until = sat_add(now, extra);
		c->waiting = true;
		c->wait_parent = p.key;
		c->wait_until = until > p.deadline ? until : p.deadline;
		insert_parent(c, &p);
		c->stats.second_chances++;
	} else {
		remove_parent(c, i);
		c->stats.waits_expired++;
	}
}

static bool slice_expired(const struct ss_core *c, u64 now, u64 stream)
{
	return c->slice_on && c->slice_stream == stream &&
	       since(now, c->slice_start) >= c->p.time_slice_ns;
}

struct ss_rq *ss_arrive(struct ss_core *c, u64 now, struct ss_rq *rq,
			bool try_merge)
{
	bool adopted = false;
	struct ss_rq *into;
	u32 size = 1, i;
	u64 stream = 0;

	rq->arrival = now;
	rq->queued = 0;
	c->stats.inserted++;
	drop_expired(c, now);
	/* The child test, parents in deadline order (Figure 2, arrival). */
	for (i = 0; i < c->nr_parents; i++) {
		struct ss_parent *p = &c->parents[i];
		u64 cost = sat_add(since(now, p->completion),
				   ss_est(&c->est, p->pos, rq->sector));

		if (cost < p->service) {
			size = p->size == ~0U ? p->size : p->size + 1;
			stream = p->stream;
			adopted = true;
			break;
		}
	}
	if (adopted) {
		if (c->waiting && c->parents[i].key == c->wait_parent) {
			/* What we waited for: dispatch it next. */
			c->waiting = false;
			c->child_ready = rq;
			c->stats.waits_caught++;
		}
		remove_parent(c, i);
	} else {
		stream = ++c->next_stream;
		c->stats.streams++;
	}
	into = try_merge ? dl_merge(c, rq) : NULL;
	if (into) {
		/* The merged extent carries the longer stream. */
		if (size > into->stream_size) {
			into->stream_size = size;
			into->stream = stream;
		}
		if (c->child_ready == rq)
			c->child_ready = into;
		c->stats.merged++;
		return into;
	}
	rq->stream_size = size;
	rq->stream = stream;
	dl_add(c, rq);
	return NULL;
}

void ss_resize(struct ss_core *c, struct ss_rq *rq, u64 sector, u32 len)
{
	if (rq->queued) {
		dl_rekey(c, rq, sector, len, rq->arrival);
	} else {
		rq->sector = sector;
		rq->len = len;
	}
}

/* Request gone was merged into request into; gone leaves the core. */
void ss_absorb(struct ss_core *c, struct ss_rq *into, struct ss_rq *gone)
{
	u64 arrival = gone->arrival < into->arrival ? gone->arrival :
						      into->arrival;

	if (gone->queued)
		dl_remove(c, gone);
	if (into->queued)
		dl_rekey(c, into, into->sector, into->len, arrival);
	if (gone->stream_size > into->stream_size) {
		into->stream_size = gone->stream_size;
		into->stream = gone->stream;
	}
	if (c->child_ready == gone)
		c->child_ready = into;
	c->stats.merged++;
}

/* rq leaves the core without being dispatched (merged elsewhere). */
void ss_forget(struct ss_core *c, struct ss_rq *rq)
{
	if (rq->queued)
		dl_remove(c, rq);
	if (c->child_ready == rq)
		c->child_ready = NULL;
}

static void dispatch_selected(struct ss_core *c, u64 now,
			      struct ss_decision *d)
{
	struct ss_rq *rq = dl_select(c, now);

	if (!rq) {
		d->verdict = SS_IDLE;
		return;
	}
	dl_take(c, now, rq);
	d->verdict = SS_DISPATCH;
	d->rq = rq;
}

static void wait_until(struct ss_decision *d, u64 until)
{
	d->verdict = SS_WAIT;
	d->until = until;
}

/* Tail mode: an established stream's request is last in the device queue. */
static bool decide_held(struct ss_core *c, u64 now, struct ss_decision *d)
{
	bool pending = c->nr_queued > 0;
	u64 until, t = 0;

	if (pending && dl_urgent(c, now)) {
		c->hold_on = false;
		c->stats.urgent_preemptions++;
		return false;
	}
	if (pending && slice_expired(c, now, c->hold_stream)) {
		c->hold_on = false;
		c->slice_on = false;
		c->stats.slice_expiries++;
		return false;
	}
	if (!pending) {
		d->verdict = SS_IDLE;
		return true;
	}
	until = sat_add(now, ss_est(&c->est, 0, c->capacity));
	if (dl_next_urgent(c, &t)) {
		t = t > now ? t : now;
		until = t < until ? t : until;
	}
	if (c->slice_on) {
		t = sat_add(c->slice_start, c->p.time_slice_ns);
		t = t > now ? t : now;
		until = t < until ? t : until;
	}
	wait_until(d, until);
	return true;
}

static void decide_inner(struct ss_core *c, u64 now, struct ss_decision *d)
{
	bool pending;
	u64 until, t = 0;
	int i;

	if (c->child_ready) {
		struct ss_rq *rq = c->child_ready;

		c->child_ready = NULL;
		if (rq->queued) {
			dl_take(c, now, rq);
			d->verdict = SS_DISPATCH;
			d->rq = rq;
			return;
		}
	}
	if (c->hold_on && decide_held(c, now, d))
		return;
	if (c->waiting && now >= c->wait_until)
		timer_expired(c, now);
	if (!c->waiting) {
		dispatch_selected(c, now, d);
		return;
	}
	pending = c->nr_queued > 0;
	if (pending && dl_urgent(c, now)) {
		c->waiting = false;
		c->stats.urgent_preemptions++;
		dispatch_selected(c, now, d);
		return;
	}
	i = parent_index(c, c->wait_parent);
	if (pending && i >= 0 && slice_expired(c, now, c->parents[i].stream)) {
		c->waiting = false;
		c->slice_on = false;
		c->stats.slice_expiries++;
		dispatch_selected(c, now, d);
		return;
	}
	until = c->wait_until;
	if (pending) {
		if (dl_next_urgent(c, &t)) {
			t = t > now ? t : now;
			until = t < until ? t : until;
		}
		if (c->slice_on) {
			t = sat_add(c->slice_start, c->p.time_slice_ns);
			until = t < until ? t : until;
		}
	}
	wait_until(d, until > now ? until : now);
}

void ss_decide(struct ss_core *c, u64 now, struct ss_decision *d)
{
	struct ss_rq *rq;

	d->rq = NULL;
	d->until = 0;
	decide_inner(c, now, d);
	if (d->verdict != SS_DISPATCH)
		return;
	rq = d->rq;
	/* Serving another stream ends the current stream's slice. */
	if (c->slice_on && c->slice_stream != rq->stream)
		c->slice_on = false;
	c->last_on = true;
	c->last_id = rq->id;
	if (c->tail_mode && rq->stream_size >= c->p.stream_threshold) {
		c->hold_on = true;
		c->hold_id = rq->id;
		c->hold_stream = rq->stream;
	}
	c->stats.dispatched++;
}

/* Figure 2's completion procedure for a request ending at pos. */
static void become_parent(struct ss_core *c, u64 now, u64 pos, u32 size,
			  u64 stream, bool may_wait)
{
	struct ss_parent p;
	struct ss_rq *sel;

	drop_expired(c, now);
	sel = dl_select(c, now);
	p.service = sel ? ss_est(&c->est, pos, sel->sector) : arbitrary_cost(c);
	p.key = ++c->next_key;
	p.pos = pos;
	p.completion = now;
	p.deadline = sat_add(now, p.service);
	p.size = size;
	p.stream = stream;
	if (may_wait && p.size >= c->p.stream_threshold) {
		bool pending = c->nr_queued > 0;

		if (pending && dl_urgent(c, now)) {
			c->stats.urgent_preemptions++;
		} else if (pending && slice_expired(c, now, p.stream)) {
			c->slice_on = false;
			c->stats.slice_expiries++;
		} else {
			if (!c->slice_on || c->slice_stream != p.stream) {
				c->slice_on = true;
				c->slice_stream = p.stream;
				c->slice_start = now;
			}
			c->waiting = true;
			c->wait_parent = p.key;
			c->wait_until = p.deadline;
			c->stats.waits++;
		}
	}
	insert_parent(c, &p);
}

void ss_completed(struct ss_core *c, u64 now, struct ss_rq *rq)
{
	bool decides = !c->tail_mode || (c->hold_on && c->hold_id == rq->id) ||
		       (c->last_on && c->last_id == rq->id);

	c->stats.completed++;
	if (c->hold_on && c->hold_id == rq->id)
		c->hold_on = false;
	if (decides)
		c->waiting = false;
	become_parent(c, now, rq->sector + rq->len, rq->stream_size,
		      rq->stream, decides);
}
