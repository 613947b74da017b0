/* SPDX-License-Identifier: MIT */
/* Host-site naming: the labels the analysis interns - an event's name, the site of a runtime
 * call (its op, its user frame), start-up events. */
#include "analysis/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "config/config.h"
#include "analysis/internal.h"

/* --- labels ------------------------------------------------------------------------------ */

uint32_t td_an_intern(struct td_analysis *a, const char *s)
{
	return td_strtab_intern(&a->labels, s, strlen(s));
}

uint32_t td_an_mark(struct td_analysis *a, const char *name)
{
	size_t n = strlen(name) + 3;
	char stack[512], *buf = n <= sizeof(stack) ? stack : td_malloc(n);
	uint32_t id;

	td_mark(buf, n, name);
	id = td_an_intern(a, buf);
	if (buf != stack)
		free(buf);
	return id;
}

int td_an_public_op(const struct td_analysis *a, const struct td_event *x)
{
	return (x->kind == TD_K_CPU_OP || x->kind == TD_K_USER_ANNOTATION) &&
	       !(a->name_class[x->name] & (NC_INTERNAL_OP | NC_STEP | NC_DATALOADER));
}

/* A label by the names it is made of: td_an_site()'s kinds 0-4 (a Python frame with an op or
 * without, two ops, one op, the event's own name), a name marked (5), a Python frame's label
 * (6); then up to two name ids. */
struct td_site_slot {
	uint32_t key[3], label; /* label 0: an empty slot (label ids start at 1) */
};

static uint32_t *site_slot(struct td_analysis *a, const uint32_t key[3])
{
	size_t j, mask;

	if (2 * (a->site_n + 1) > a->site_cap) {
		struct td_site_slot *old = a->site_cache;
		size_t oldcap = a->site_cap, i;
		a->site_cap = oldcap ? 2 * oldcap : 256;
		a->site_cache = td_calloc(a->site_cap, sizeof(*a->site_cache));
		for (i = 0; i < oldcap; i++)
			if (old[i].label)
				*site_slot(a, old[i].key) = old[i].label;
		free(old);
	}
	mask = a->site_cap - 1;
	j = ((size_t)key[0] * 0x9e3779b1u ^ (size_t)key[1] * 0x85ebca6bu ^ key[2]) & mask;
	while (a->site_cache[j].label && memcmp(a->site_cache[j].key, key, sizeof(uint32_t) * 3))
		j = (j + 1) & mask;
	if (!a->site_cache[j].label) {
		memcpy(a->site_cache[j].key, key, sizeof(uint32_t) * 3);
		a->site_n++;
	}
	return &a->site_cache[j].label;
}

/* Labels of one name, made once for each. */
static uint32_t name_mark(struct td_analysis *a, uint32_t name)
{
	uint32_t key[3] = {5, name, 0}, *slot = site_slot(a, key);

	if (!*slot)
		*slot = td_an_mark(a, td_trace_name(a->t, name));
	return *slot;
}

const char *td_an_name(struct td_analysis *a, uint32_t name)
{
	return td_an_label(a, name_mark(a, name));
}

uint32_t td_an_ev_label(struct td_analysis *a, uint32_t ev)
{
	return name_mark(a, td_trace_ev(a->t, ev)->name);
}

uint32_t td_an_frame_mark(struct td_analysis *a, uint32_t name)
{
	uint32_t key[3] = {6, name, 0}, *slot = site_slot(a, key);
	char buf[512];

	if (!*slot)
		*slot = td_an_mark(a, td_frame_label(td_trace_name(a->t, name), buf, sizeof(buf)));
	return *slot;
}

uint32_t td_an_site(struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	char buf[1024];
	const char *ops[2] = {NULL, NULL};
	uint32_t opn[2] = {0, 0}, key[3], *slot;
	int nops = 0, depth = 0;
	uint32_t e, py = TD_NONE;

	for (e = ev; e != TD_NONE && depth < MAX_CHAIN; e = td_trace_parent(t, e), depth++) {
		const struct td_event *x = td_trace_ev(t, e);
		unsigned c = a->name_class[x->name];
		if (x->kind == TD_K_PYTHON && (c & NC_PY_USER) && py == TD_NONE)
			py = e;
		if (nops < 2 && td_an_public_op(a, x)) {
			opn[nops] = x->name;
			ops[nops++] = td_trace_name(t, x->name);
		}
		if (py != TD_NONE && nops == 2)
			break;
	}
	/* the label follows from these names alone: made once for each set of them */
	key[0] = py != TD_NONE ? (nops ? 0 : 1) : nops == 2 ? 2 : nops == 1 ? 3 : 4;
	key[1] = py != TD_NONE ? td_trace_ev(t, py)->name : nops ? opn[0] : td_trace_ev(t, ev)->name;
	key[2] = py != TD_NONE ? (nops ? opn[0] : 0) : nops == 2 ? opn[1] : 0;
	slot = site_slot(a, key);
	if (*slot)
		return *slot;
	if (py != TD_NONE) {
		char fr[512], m1[520], m2[400];
		td_mark(m1, sizeof(m1), td_frame_label(td_trace_name(t, td_trace_ev(t, py)->name), fr,
						       sizeof(fr)));
		if (nops)
			snprintf(buf, sizeof(buf), "%s (%s)", m1, td_mark(m2, sizeof(m2), ops[0]));
		else
			snprintf(buf, sizeof(buf), "%s", m1);
	} else if (nops == 2) {
		char m1[500], m2[500];
		snprintf(buf, sizeof(buf), "%s <- %s", td_mark(m1, sizeof(m1), ops[0]),
			 td_mark(m2, sizeof(m2), ops[1]));
	} else if (nops == 1) {
		td_mark(buf, sizeof(buf), ops[0]);
	} else {
		td_mark(buf, sizeof(buf), td_trace_name(t, td_trace_ev(t, ev)->name));
	}
	return *slot = td_an_intern(a, buf); /* which leaves the cache, and slot, as they are */
}

/* The innermost user Python frame of op ev: from the python_function spans around it, else
 * from its "Call stack" arg; "" when neither has one. As a label ("train.py:42 step"). */
const char *td_an_user_frame(const struct td_analysis *a, uint32_t ev, char *buf, size_t cap)
{
	const struct td_trace *t = a->t;
	const struct td_op_args *oa;
	uint32_t p;

	for (p = td_trace_parent(t, ev); a->has_python && p != TD_NONE; p = td_trace_parent(t, p)) {
		const struct td_event *e = td_trace_ev(t, p);
		if (e->kind == TD_K_PYTHON && (td_an_class(a, e->name) & NC_PY_USER))
			return td_frame_label(td_trace_name(t, e->name), buf, cap);
	}
	if ((oa = td_trace_op_args(t, ev)) != NULL && oa->stack) {
		const char *s = td_trace_name(t, oa->stack), *semi;
		while (*s) { /* innermost first, ';'-separated */
			char frame[1024];
			size_t n;
			semi = strchr(s, ';');
			n = semi ? (size_t)(semi - s) : strlen(s);
			if (n < sizeof(frame)) {
				memcpy(frame, s, n);
				frame[n] = '\0';
				if (td_is_user_frame(frame))
					return td_frame_label(frame, buf, cap);
			}
			if (!semi)
				break;
			s = semi + 1;
		}
	}
	buf[0] = '\0';
	return buf;
}

uint32_t td_an_user_op(const struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	uint32_t e;
	int depth = 0;

	for (e = td_trace_parent(t, ev); e != TD_NONE && depth < MAX_CHAIN;
	     e = td_trace_parent(t, e), depth++)
		if (td_an_public_op(a, td_trace_ev(t, e)))
			return e;
	return ev;
}

int td_an_is_warm(const struct td_analysis *a, uint32_t ev)
{
	size_t lo = 0, hi = a->nwarm_ev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->warm_ev[mid] < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->nwarm_ev && a->warm_ev[lo] == ev;
}
