/* SPDX-License-Identifier: MIT */
/* The replay: a dependency graph of a trace, replayed with each node's own cost and start
 * times that follow from the edges, before and after a fix is applied to it (what-if).
 *
 * Nodes are the host's top-level runtime calls, per thread (the untraced host work between two
 * calls is the gap before the second, of its measured length), and the GPU ops (kernels,
 * memcpy, memset) per stream. Edges:
 *   - lane order: a call starts after the previous call on its thread ended plus the gap; an op
 *     starts after the previous op on its stream ended plus the device's queued gap Q (the mean
 *     gap between ops already queued);
 *   - launch: an op starts no earlier than its launch call began plus the launch latency L of
 *     its device and kind (the median over ops launched onto an idle stream), not its own lag;
 *   - waits: a wait call (the caller's role TD_RP_WAIT: stream/device/event synchronize,
 *     cudaFree) ends no earlier than the last GPU op it waited for ended, plus the median tail;
 *     a copy call (TD_RP_COPY) that outlasted its own op waits for that op (a blocking,
 *     pageable copy), whose start also keeps the host's staging delay;
 *   - another stream: an op that started later than its launch and stream allow, just after an
 *     op on another stream of its device ended, follows that op (cudaStreamWaitEvent, inferred
 *     and kept only where it explains the delay);
 *   - threads of one process: a thread's burst of calls inside a gap of the process's main
 *     thread (the autograd thread's backward) starts after the main thread's call before it,
 *     and the main thread's next call waits for the burst's end, each by its measured lag;
 *   - outside producers: the first call after a DataLoader's wait for its workers' batch
 *     starts no earlier than it did (td_replay_gate), unless the loader is the fix;
 *   - launch queue: where the trace shows a device's launch queue full (launches blocked until
 *     an op completes), a blocked launch ends no earlier than the op whose end freed its slot,
 *     any other no earlier than the op launched as many launches before it as the queue ever
 *     held, plus one (replay/queue.c);
 *   - copy engines: a host-to-device (device-to-host) copy starts after the one of its device
 *     and direction that started before it on another stream ended, when it did in the trace:
 *     one engine per direction, shared by the streams (copies that overlapped in the trace
 *     shared it already, their durations say by how much).
 * What the edges cannot explain is reported: GPU work that started later than anything in the
 * trace gates it ("unexplained start delay"). Not modelled: peers of a collective (its measured
 * duration is kept), host threads slowed by contention.
 *
 * Compact: a node is its event and its flags (6 bytes), the op it waits for or its launch (4);
 * the model's lags are per device and kind, the few edges of another kind in a side table; a
 * replay keeps one start time per node (ends follow from them). Library code: never prints.
 * The graph knows no rule; the caller names the roles. */
#ifndef TD_REPLAY_REPLAY_H
#define TD_REPLAY_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/vec.h"
#include "parser/trace.h"

/* The role of a runtime call's name, given by the caller per name id. */
enum td_rp_role {
	TD_RP_PLAIN = 0, /* a launch or other call: its measured duration */
	TD_RP_WAIT = 1,  /* waits for the GPU work queued before it */
	TD_RP_COPY = 2,  /* a memcpy / memset call: a wait for its own op when it outlasts it */
};
/* The role of a GPU copy's name, bits: its direction over the host link and its host memory. */
#define TD_RP_OP_HTOD 0x04
#define TD_RP_OP_DTOH 0x08
#define TD_RP_OP_PAGEABLE 0x10 /* from or to pageable memory: staged, at the pageable rate */
#define TD_RP_OP_PINNED 0x20   /* from or to pinned memory: at the link's bandwidth */

/* Node flags. */
#define TD_RPF_GPU 0x01      /* a GPU op */
#define TD_RPF_WAITS 0x02    /* host: waits for src */
#define TD_RPF_X 0x04        /* has an edge in the side table (another stream, fork, join) */
#define TD_RPF_EXTRA 0x08    /* op: a start delay in the side table (staging or unexplained) */
#define TD_RPF_STAGING 0x10  /* ... the host staging a pageable copy (always replayed) */
#define TD_RPF_STREAM 0x20   /* op: its stream, not its launch, gated it (the delay rides it) */
#define TD_RPF_OWNCOST 0x40  /* host: it waited; without waiting it costs the role's own cost */
#define TD_RPF_COPY 0x80     /* host: a copy call (its own cost is a copy's, not a sync's) */
#define TD_RPF_FIRST 0x100   /* the first node of its lane */
#define TD_RPF_MEASGAP 0x200 /* op: its measured lane gap (it overlaps the op before, or has no
			      * launch), not the device's queued gap */
#define TD_RPF_PAGEABLE 0x400 /* op: a copy over the host link from or to pageable memory */
#define TD_RPF_ENGINE 0x800  /* op: follows another stream's copy on its engine (g->engine) */
#define TD_RPF_DTOH 0x1000   /* op: a copy over the host link, device to host (PAGEABLE, ENGINE) */
#define TD_RPF_GATE 0x2000   /* host: starts no earlier than a time outside the trace (g->gates) */
#define TD_RPF_QUEUE 0x4000  /* host: a launch that waits (src) for a slot in its device's full
			      * launch queue, not for GPU work it needs (a fix that stops waits
			      * leaves it) */
#define TD_RPF_POST 0x8000   /* host: a wait that works on after the GPU is done (g->posts) */

/* A side-table entry, by node: an edge into its start from ref after v ns (w: the lane gap
 * that replaces the measured one, TD_RP_NOGAP for none), or a start delay v. */
#define TD_RP_NOGAP INT64_MIN
struct td_rp_side {
	uint32_t node, ref;
	int64_t v, w;
};

struct td_rp_delay {
	uint32_t node;   /* a GPU op that started later than its gates */
	int64_t ns;      /* by this much */
};

/* The model's constants of one device (index in the trace's devices). */
struct td_rp_dev {
	int64_t lag[3];  /* launch latency: kernel, memcpy, memset */
	int64_t queued;  /* mean gap between ops already queued */
	int64_t cross;   /* median lag after an op on another stream */
	int64_t pinned[2]; /* the host link's bandwidth for pinned copies, bytes per us (MB/s):
			    * host-to-device, device-to-host; from the trace's own pinned copies of
			    * 1 MB or more (3 at least), else 0 (the caller may set it from a table:
			    * 0 keeps a copy's measured time when it is made pinned) */
	uint8_t pinned_measured; /* bit d: pinned[d] is the trace's own */
	int64_t queue_depth;     /* launched ops not yet started that fill its launch queue (a
				  * launch then blocks), from the trace's blocked launches; 0: none */
	int64_t queue_tail;      /* a blocked launch's median lag after the op that freed it */
	int64_t launch;          /* its median launch call: what a blocked one costs alone */
};
#define TD_RP_PIN_LAT_NS 1500 /* a pinned copy's fixed cost, besides its bytes */
/* A copy made pinned needs pinned host buffers, which the framework allocates (PyTorch's
 * caching host allocator: cudaHostAlloc of the size rounded up to a power of two, kept and
 * reused once the copy is done) - page-locking costs about TD_RP_PIN_ALLOC_LAT_NS plus a byte
 * per TD_RP_PIN_ALLOC_BPNS-th of a ns (4 GB/s). A loop holds two buffers of a size at once (the
 * batch in use while the next is pinned): the first two copies of each size class made pinned
 * pay an allocation, the later ones reuse them - in a trace of the run's start; a trace taken
 * later in the run finds them allocated. */
#define TD_RP_PIN_ALLOC_LAT_NS 10000
#define TD_RP_PIN_ALLOC_BPNS 4
#define TD_RP_PIN_BUFFERS 2

struct td_replay {
	const struct td_trace *t;
	uint32_t *ev;              /* per node: its event */
	uint16_t *fl;              /* per node: TD_RPF_* */
	uint32_t *src;             /* op: its launch call's node; host: the op it waits for */
	size_t n, nhost;           /* host nodes first, by track then time; GPU ops after */
	int64_t *ts, *end;         /* per node: its event's recorded start and end (read by
				    * every replay for each node: here in order, not scattered
				    * among the trace's frames) */
	int64_t *launch_ts;        /* per GPU op (node nhost + i): its launch call's recorded
				    * start, INT64_MIN without one (read per op by the window and
				    * busy measures, which would otherwise reach into the host's
				    * events for each) */
	uint32_t *track_first;     /* per track: its first node (TD_NONE: none); nodes contiguous */
	uint32_t *track_count;
	uint32_t *primary;         /* per track: the main thread of its process (the steps' thread,
				    * else the first to make a call), TD_NONE: none */
	int32_t *track_dev;        /* per GPU track: its device's index, else -1 */
	struct td_rp_dev *dev;
	size_t ndev;
	struct td_vec xs;          /* struct td_rp_side: edges, by node */
	struct td_vec extras;      /* struct td_rp_side: start delays (v), by node */
	struct td_vec engine;      /* struct td_rp_side: the copy before on the engine (ref), by node */
	struct td_vec gates;       /* struct td_rp_side: a start no earlier than v (a DataLoader
				    * worker's batch ready), unless an edit drops the host time of
				    * the wait that began at w; by node (td_replay_gate) */
	struct td_vec posts;       /* struct td_rp_side: the work a wait call does after its wait
				    * (v), beyond the usual tail, by node: a cudaFree / hipFree
				    * releasing memory once the device is idle */
	int64_t tail;              /* median from the awaited op's end to a wait call's end */
	int64_t wait_cost, copy_cost; /* what a sync, a copy call costs when it does not wait */
	int64_t unexplained_ns;    /* sum of the start delays nothing in the trace explains */
	int64_t staging_ns;        /* the start delays of ops behind blocking copies (kept) */
	uint64_t cross_edges, forks, joins, waits, blocking_copies, engine_edges, pageable_copies;
	uint64_t queue_edges, blocked_launches;
	struct td_rp_delay *delays; /* the largest unexplained delays, largest first */
	size_t ndelays;
	int keep_unexplained;      /* replay the unexplained delays as measured (sizing a fix:
				    * whatever caused them stays); 0 to test the model alone */
	int pin_alloc;             /* the trace holds the run's start (set by the caller): copies
				    * made pinned allocate their buffers in it (td_rp_pin_alloc_ns);
				    * else they were allocated before it began, and cost nothing */
};

/* Builds the graph of a finalized trace; role[name id] names each runtime call's role and each
 * copy op's TD_RP_OP_* bits (NULL: all plain). Returns 0, or -1 when out of memory. */
int td_replay_build(struct td_replay *g, const struct td_trace *t, const uint8_t *role);
void td_replay_free(struct td_replay *g);

/* Host work on a thread after [from, to) waited there for something outside the trace that
 * was ready at `to` at the earliest (a DataLoader worker's batch: the workers produce at their
 * own pace, so a loop made faster elsewhere waits longer in __next__ and gains nothing): the
 * thread's first call after `to` starts no earlier than it did, unless an edit drops the host
 * time of the wait (TD_RP_DROP_HOST over `from`: the loader fixed). Returns 0, -1 when the
 * thread has no call after it. */
int td_replay_gate(struct td_replay *g, uint32_t track, int64_t from, int64_t to);

/* Whether host node k waits for GPU work it needs (a sync, a blocking copy): not a launch held
 * by a full queue. */
static inline int td_rp_syncs(const struct td_replay *g, uint32_t k)
{
	return (g->fl[k] & TD_RPF_WAITS) && !(g->fl[k] & TD_RPF_QUEUE);
}

/* What a node is, for callers and tests. */
static inline const struct td_event *td_rp_event(const struct td_replay *g, uint32_t k)
{
	return td_trace_ev(g->t, g->ev[k]);
}
/* Node k's track (its thread or stream). */
static inline uint32_t td_rp_track(const struct td_replay *g, uint32_t k)
{
	return td_trace_track_of(g->t, g->ev[k]);
}
/* The previous node on k's lane (thread or stream), TD_NONE for the first. */
static inline uint32_t td_rp_prev(const struct td_replay *g, uint32_t k)
{
	return (g->fl[k] & TD_RPF_FIRST) ? TD_NONE : k - 1;
}
/* k's entry in a side table, or NULL. */
const struct td_rp_side *td_rp_side_of(const struct td_vec *v, uint32_t k);
/* The lag of the lane edge into k's start (the host work before a call; an op's queued gap). */
int64_t td_rp_gap(const struct td_replay *g, uint32_t k);

/* A fix, as edits of the graph. */
enum td_rp_edit_kind {
	TD_RP_DROP_HOST, /* the untraced host time in [from, to) on a thread goes (its calls stay),
			  * residual ns of it stays */
	TD_RP_UNWAIT,    /* calls starting in [from, to) on a thread stop waiting for the GPU */
	TD_RP_REMOVE,    /* all host time in [from, to) goes, its calls and their GPU ops too,
			  * residual ns stays (an op removed from a loop, its replacement) */
	TD_RP_FUSE,      /* the GPU ops in [from, to) on a stream (track) become one: each after the
			  * one before with no gap, the launch calls of all but the first gone;
			  * GPU time and the host's own work kept (fusion, a CUDA graph) */
	TD_RP_COST,      /* calls starting in [from, to) on a thread cost residual ns and wait for
			  * nothing, their ops start with no staging (a copy from pinned memory,
			  * made non-blocking): a pageable copy then runs at the link's pinned
			  * bandwidth (its measured time when that is unknown, or shorter), and,
			  * where the trace holds the run's start (pin_alloc), the first
			  * TD_RP_PIN_BUFFERS calls of each size class allocate its pinned buffer
			  * before them (td_rp_pin_alloc_ns) */
	TD_RP_WARM,      /* calls starting in [from, to) on a thread cost residual ns and their ops
			  * start with no unexplained delay (a first launch, its module loaded
			  * before: the cold start gone) */
	TD_RP_OVERLAP,   /* the ops starting in [from, to) on a GPU stream (collectives) wait no
			  * more for their launch or another stream: each may start once the
			  * compute before it has run so far that only residual ns of it runs after
			  * that compute ends (its inputs ready as they are produced: gradients
			  * reduced in buckets during backward), and not before the region that
			  * produces them - from the first op on that compute's stream starting at or
			  * after `since` - has run the same share (residual of its duration: the
			  * first bucket ready); the compute is the op of another stream of its
			  * device that ended last before it started */
	TD_RP_SIDE,      /* the copies of the blocking copy calls starting in [from, to) on a
			  * thread leave their stream for a side stream of their own: each starts
			  * after its launch, its copy engine and the copy moved before it from the
			  * same stream, no more after the compute queued before it; the first op
			  * after them on their stream waits for them (wait_stream before use) as
			  * well as for the op before them */
	TD_RP_FREE,      /* the GPU ops starting in [from, to) on a stream take residual ns at most:
			  * what they do removed outright, the bound no fix of them can beat
			  * (collectives whose fix the trace cannot replay) */
	TD_RP_UNJOIN,    /* the bursts of calls on this thread that end in [from, to) hold no
			  * other thread's call any more (the joins into them cut): a DataLoader's
			  * pin-memory thread, which pins each batch when it comes - inside
			  * __next__, or in the loop's step, only because the batches came late;
			  * with workers that keep up it pins them before __next__ asks */
};
struct td_rp_edit {
	uint8_t kind;
	uint32_t track;
	int64_t from, to;
	int64_t residual;
	int64_t since;             /* TD_RP_OVERLAP only */
};

/* An op made to overlap the compute before it: it starts no earlier than the compute's end
 * plus lag (<= 0), nor than the region's first op's start plus lo_lag. */
struct td_rp_anchor {
	uint32_t node, compute, lo; /* lo: TD_NONE for none */
	int64_t lag, lo_lag;
};

/* A replay: every node's replayed start, and what the edits changed (ends follow). */
struct td_rp_times {
	int64_t *start;
	uint8_t *flag;             /* per node: what the edits did to it */
	struct td_vec over;        /* struct td_rp_side: lane gaps (w) and own costs (v) the
				    * edits set, by node */
	struct td_vec anchors;     /* struct td_rp_anchor, by node */
	struct td_vec sides;       /* struct td_rp_side, by node (TD_RP_SIDE): a moved copy
				    * (ref: the copy moved before it from its stream, TD_NONE for
				    * none; v -1), or the first op after moved copies on their stream
				    * (ref: the last of them; v: the op before them, -1 for none) */
	uint8_t *gate_off;         /* per gate (g->gates): an edit dropped its wait */
	struct td_vec tails;       /* struct td_rp_side: host time an edit dropped after a thread's
				    * last call (node: that call; [v, w): the range dropped), which no
				    * call's gap holds - td_replay_map() takes it out */
	size_t n;
	uint32_t *over_ix;         /* the replay's own: over's entries by node while the edits are
				    * applied (1 + index, 0: a free slot) */
	size_t over_slots;         /* a power of two, or 0 */
	uint8_t *state;            /* the replay's own: 2 bits a node */
	struct td_vec stack;       /* the replay's own: uint32_t */
};

/* Replays g with the edits applied (NULL, 0: as recorded). Returns 0, or -1 when out of memory. */
int td_replay_run(const struct td_replay *g, const struct td_rp_edit *edits, size_t nedits,
		  struct td_rp_times *out);
/* The same into r, zeroed or from an earlier replay of g, whose buffers it reuses. */
int td_replay_again(const struct td_replay *g, const struct td_rp_edit *edits, size_t nedits,
		    struct td_rp_times *r);
/* The same with pre's edits applied before edits' (a fix replayed after another's), as one
 * list of both would be, without one made. */
int td_replay_after(const struct td_replay *g, const struct td_rp_edit *pre, size_t npre,
		    const struct td_rp_edit *edits, size_t nedits, struct td_rp_times *r);
void td_rp_times_free(struct td_rp_times *r);
/* The op on another stream of op k's device that ended last, at or before k started (TD_NONE:
 * none). */
uint32_t td_rp_prior_other(const struct td_replay *g, uint32_t k);
/* The node of trace event ev, TD_NONE when it is none (not a top-level runtime call or a GPU
 * op the graph holds). */
uint32_t td_rp_node_of(const struct td_replay *g, uint32_t ev);
/* What op k (a pageable copy) takes from pinned memory: its bytes at the pinned bandwidth plus
 * TD_RP_PIN_LAT_NS, no longer than measured; its measured time when the bandwidth is unknown. */
int64_t td_rp_pinned_dur(const struct td_replay *g, uint32_t k);
/* What allocating the pinned buffer for a copy of bytes costs: its size class (bytes rounded
 * up to a power of two) page-locked. */
int64_t td_rp_pin_alloc_ns(uint64_t bytes);
/* The same for a copy of bytes over device index dev's link (dtoh: back to the host) that took
 * measured ns from pageable memory. */
int64_t td_rp_pinned_time(const struct td_replay *g, size_t dev, int dtoh, uint64_t bytes,
			  int64_t measured);
/* Node k's replayed end in r (r NULL: as measured). */
int64_t td_rp_end(const struct td_replay *g, const struct td_rp_times *r, uint32_t k);
int64_t td_rp_start(const struct td_replay *g, const struct td_rp_times *r, uint32_t k);

/* Where host instant ts on a thread lands in a replay: after the thread's last call before it,
 * by the time between them (less what an edit dropped of it after the thread's last call), and
 * no later than the next call starts (r NULL: ts). */
int64_t td_replay_map(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
		      int64_t ts);
/* The replayed window [from, to) of host instants on a thread: from's image to the later of
 * to's image and the end of the last GPU op of device `device` (its id; -1: any) launched in it. */
int64_t td_replay_window(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
			 int64_t from, int64_t to, int32_t device);
/* The time the GPU ops of device `device` (its id) launched in that window are busy in r, within
 * the window's image: their union (r NULL: as measured). */
int64_t td_replay_busy(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
		       int64_t from, int64_t to, int32_t device);

#endif
