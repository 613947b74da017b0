/* SPDX-License-Identifier: MIT */
/* `tracedoc memory` in text, Markdown and JSON (tracedoc.memory/1): from a trace's [memory]
 * samples, or from a caching-allocator snapshot. */
#include "diagnose/render_memory.h"

#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/out.h"
#include "diagnose/render.h"

#define SPARK 60

static const char *bytes(char *b, size_t cap, int64_t v)
{
	return v < 0 ? "-" : td_fmt_bytes(b, cap, (double)v);
}

static const char *dev_name(char *b, size_t cap, int32_t d)
{
	if (d < 0)
		snprintf(b, cap, "host");
	else
		snprintf(b, cap, "GPU %d", d);
	return b;
}

/* allocated over time in SPARK characters (each the larger of two points), up to its peak */
static void spark(FILE *f, const struct td_mem_view *v)
{
	static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	size_t i, k, shown = 0, blanks = 0;

	for (i = 0; i < SPARK; i++) {
		int64_t m = -1;
		for (k = i * v->npts / SPARK; k < (i + 1) * v->npts / SPARK && k < v->npts; k++)
			if (v->pts[k].allocated > m)
				m = v->pts[k].allocated;
		if (m < 0 || v->d.peak_alloc <= 0) {
			blanks++; /* written only before a bar: no trailing blanks */
			continue;
		}
		for (; blanks; blanks--)
			fputc(' ', f);
		fputs(bars[(size_t)((double)m / (double)v->d.peak_alloc * 7.0 + 0.5)], f);
		shown++;
	}
	(void)shown;
}

/* Row i of a device's table of what was allocated at each steady step's start (i == nstep: the
 * row after the last step), as text or as a Markdown table row: the bytes then, and their
 * change from the row before when both are known (the text leaves out no change). */
static void step_row(FILE *f, const struct td_mem_view *v, size_t i, int md)
{
	int64_t now = v->d.step_alloc[i], prev = i ? v->d.step_alloc[i - 1] : -1;
	char b[2][40];
	const char *at = bytes(b[0], sizeof(b[0]), now);

	if (i < v->d.nstep && md)
		fprintf(f, "| %lld | %s | ", (long long)v->step_number[i], at);
	else if (md)
		fprintf(f, "| after the last | %s | ", at);
	else if (i < v->d.nstep)
		fprintf(f, "    step %-8lld %12s", (long long)v->step_number[i], at);
	else
		fprintf(f, "    %-13s %12s", "after last", at);
	if (now >= 0 && prev >= 0 && (md || now != prev))
		fprintf(f, md ? "%s%s |\n" : "  %s%s\n", now >= prev ? "+" : "-",
			td_fmt_bytes(b[1], sizeof(b[1]), (double)(now >= prev ? now - prev : prev - now)));
	else
		fputs(md ? " |\n" : "\n", f);
}

void render_memory_text(FILE *f, const void *ctx)
{
	const struct mem_ctx *c = ctx;
	const struct td_mem_report *m = c->mem;
	size_t k, i;
	char b[8][40], title[1200];

	snprintf(title, sizeof(title), "tracedoc memory: %s · %zu [memory] sample%s over %s", c->path,
		 m->samples, m->samples == 1 ? "" : "s", td_fmt_dur(b[0], sizeof(b[0]), m->end - m->start));
	out_text_wrap(f, title, 0, 2, 100);
	fputs("\n\n", f);
	if (!m->n) {
		fputs("no [memory] samples: record with torch.profiler.profile(profile_memory=True)\n",
		      f);
		return;
	}
	fprintf(f, "%-7s %10s %15s %14s %10s\n", "device", "capacity", "peak allocated",
		"peak reserved", "headroom");
	for (k = 0; k < m->n; k++) {
		const struct td_mem_view *v = &m->dev[k];
		char at[600];
		int64_t head = v->d.capacity > 0 && v->d.peak_res >= 0 ? v->d.capacity - v->d.peak_res
			: -1;
		size_t n = 0;
		at[0] = '\0';
		if (*v->peak_op)
			n += (size_t)snprintf(at + n, sizeof(at) - n, "%s", v->peak_op);
		if (*v->peak_frame && n < sizeof(at))
			n += (size_t)snprintf(at + n, sizeof(at) - n, " in %s", v->peak_frame);
		if (v->peak_step >= 0 && n < sizeof(at))
			snprintf(at + n, sizeof(at) - n, "%sstep %lld", n ? ", " : "",
				 (long long)v->peak_step);
		fprintf(f, "%-7s %10s %15s %14s %10s\n", dev_name(b[0], sizeof(b[0]), v->d.device),
			v->d.capacity > 0 ? bytes(b[1], sizeof(b[1]), v->d.capacity) : "-",
			bytes(b[2], sizeof(b[2]), v->d.peak_alloc), bytes(b[3], sizeof(b[3]), v->d.peak_res),
			bytes(b[4], sizeof(b[4]), head));
		if (*at) {
			fputs("        at the peak: ", f);
			out_text_wrap(f, at, 21, 10, 100);
			fputc('\n', f);
		}
	}
	for (k = 0; k < m->n; k++) {
		const struct td_mem_view *v = &m->dev[k];
		snprintf(title, sizeof(title), "%s allocated over the samples' span%s, up to %s:",
			 dev_name(b[0], sizeof(b[0]), v->d.device),
			 v->d.summed ? " (summed from the allocations' Bytes, from 0 at the first)" : "",
			 bytes(b[1], sizeof(b[1]), v->d.peak_alloc));
		fputc('\n', f);
		out_text_wrap(f, title, 0, 2, 100);
		fputs("\n  ", f);
		spark(f, v);
		fputc('\n', f);
		if (v->d.nstep) {
			fprintf(f, "  allocated at each steady step's start:\n");
			for (i = 0; i <= v->d.nstep; i++)
				step_row(f, v, i, 0);
		}
	}
	if (c->r && c->r->findings.len) {
		fputc('\n', f);
		render_findings_text(f, c->r, 0);
	}
}

void render_memory_md(FILE *f, const void *ctx)
{
	const struct mem_ctx *c = ctx;
	const struct td_mem_report *m = c->mem;
	size_t k, i;
	char b[8][40];

	fputs("### tracedoc memory: ", f);
	out_md(f, c->path);
	fprintf(f, "\n\n%zu `[memory]` samples over %s\n\n", m->samples,
		td_fmt_dur(b[0], sizeof(b[0]), m->end - m->start));
	if (!m->n) {
		fputs("No `[memory]` samples: record with `torch.profiler.profile(profile_memory=True)`.\n",
		      f);
		return;
	}
	fputs("| device | capacity | peak allocated | peak reserved | headroom | at the peak |\n"
	      "|---|---:|---:|---:|---:|---|\n", f);
	for (k = 0; k < m->n; k++) {
		const struct td_mem_view *v = &m->dev[k];
		int64_t head = v->d.capacity > 0 && v->d.peak_res >= 0 ? v->d.capacity - v->d.peak_res
			: -1;
		fprintf(f, "| %s | %s | %s | %s | %s | ", dev_name(b[0], sizeof(b[0]), v->d.device),
			v->d.capacity > 0 ? bytes(b[1], sizeof(b[1]), v->d.capacity) : "-",
			bytes(b[2], sizeof(b[2]), v->d.peak_alloc), bytes(b[3], sizeof(b[3]), v->d.peak_res),
			bytes(b[4], sizeof(b[4]), head));
		out_md(f, *v->peak_op ? v->peak_op : "-");
		if (*v->peak_frame) {
			char mk[1200];
			fputs(" in ", f);
			out_md(f, td_mark(mk, sizeof(mk), v->peak_frame));
		}
		if (v->peak_step >= 0)
			fprintf(f, ", step %lld", (long long)v->peak_step);
		fputs(" |\n", f);
	}
	for (k = 0; k < m->n; k++) {
		const struct td_mem_view *v = &m->dev[k];
		if (!v->d.nstep)
			continue;
		fprintf(f, "\n<details><summary>%s: allocated at each step's start</summary>\n\n"
			   "| step | allocated | change |\n|---|---:|---:|\n",
			dev_name(b[0], sizeof(b[0]), v->d.device));
		for (i = 0; i <= v->d.nstep; i++)
			step_row(f, v, i, 1);
		fputs("\n</details>\n", f);
	}
	if (c->r && c->r->findings.len) {
		fputc('\n', f);
		render_findings_md(f, c->r);
	}
}

/* tracedoc.memory/1's first keys, its object opened */
/* A tracedoc.memory/1 document begun on f: its schema, source and path; the generator the
 * rest goes to (out_json_end() ends it). */
static yajl_gen json_head(FILE *f, const char *source, const char *path)
{
	yajl_gen g = out_json_new(f);

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.memory/1");
	out_json_kstr(g, "source", source);
	out_json_kstr(g, "path", path);
	return g;
}

void render_memory_json(FILE *f, const void *ctx)
{
	const struct mem_ctx *c = ctx;
	const struct td_mem_report *m = c->mem;
	yajl_gen g = json_head(f, "trace", c->path);
	size_t k, i;

	out_json_kint(g, "samples", (int64_t)m->samples);
	out_json_kint(g, "start_ns", m->start);
	out_json_kint(g, "end_ns", m->end);
	out_json_karray(g, "devices");
	for (k = 0; k < m->n; k++) {
		const struct td_mem_view *v = &m->dev[k];
		yajl_gen_map_open(g);
		out_json_kint(g, "id", v->d.device);
		out_json_kint(g, "samples", (int64_t)v->d.nsamples);
		out_json_kint(g, "capacity_bytes", v->d.capacity);
		out_json_kint(g, "peak_allocated_bytes", v->d.peak_alloc);
		out_json_kint(g, "peak_allocated_ts_ns", v->d.peak_alloc_ts);
		out_json_kint(g, "peak_reserved_bytes", v->d.peak_res);
		out_json_kint(g, "peak_reserved_ts_ns", v->d.peak_res >= 0 ? v->d.peak_res_ts : -1);
		out_json_key(g, "headroom_bytes");
		out_json_int(g, v->d.capacity > 0 && v->d.peak_res >= 0 ? v->d.capacity - v->d.peak_res
									: -1);
		out_json_kbool(g, "allocated_summed_from_bytes", v->d.summed);
		out_json_kint(g, "first_allocated_bytes", v->d.first_alloc);
		out_json_kint(g, "last_allocated_bytes", v->d.last_alloc);
		out_json_kstr(g, "peak_op", v->peak_op);
		out_json_kstr(g, "peak_frame", v->peak_frame);
		out_json_kint(g, "peak_step", v->peak_step);
		out_json_karray(g, "steps");
		for (i = 0; i < v->d.nstep; i++) {
			yajl_gen_map_open(g);
			out_json_kint(g, "step", v->step_number[i]);
			out_json_kint(g, "allocated_at_start_bytes", v->d.step_alloc[i]);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		out_json_kint(g, "allocated_after_last_step_bytes",
			      v->d.nstep ? v->d.step_alloc[v->d.nstep] : -1);
		out_json_key(g, "timeline"); /* [ts_ns, allocated, reserved], the largest per slice */
		yajl_gen_array_open(g);
		for (i = 0; i < v->npts; i++) {
			yajl_gen_array_open(g);
			out_json_int(g, v->pts[i].ts);
			out_json_int(g, v->pts[i].allocated);
			out_json_int(g, v->pts[i].reserved);
			yajl_gen_array_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_karray(g, "findings");
	for (k = 0; c->r && k < c->r->findings.len; k++) {
		const struct td_finding *fd = &TD_VEC_AT(&c->r->findings, struct td_finding, k);
		yajl_gen_map_open(g);
		out_json_kstr(g, "severity", td_severity_name(fd->severity));
		out_json_kint(g, "device", fd->device);
		out_json_kstr(g, "title", fd->title);
		out_json_kstr(g, "fix", fd->fix);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}

/* --- a caching-allocator snapshot -------------------------------------------------------- */

static const struct {
	unsigned bit;
	const char *key, *what;
} overs[] = {
	{TD_SNAP_OVER_RESERVED, "reserved_bytes", "reserved at the snapshot"},
	{TD_SNAP_OVER_PEAK_RESERVED, "peak_reserved_bytes", "reserved at most"},
	{TD_SNAP_OVER_PEAK, "peak_allocated_bytes", "allocated at the peak"},
	{TD_SNAP_OVER_START, "allocated_at_trace_start_bytes", "allocated before the trace"},
};

static int64_t over_value(const struct td_snap_dev *d, unsigned bit)
{
	return bit == TD_SNAP_OVER_RESERVED ? d->reserved : bit == TD_SNAP_OVER_PEAK_RESERVED
		? d->peak_reserved : bit == TD_SNAP_OVER_PEAK ? d->peak : d->start_allocated;
}

void render_snap_over(FILE *f, const struct td_snap_dev *d, const char *name, int64_t cap, int md)
{
	unsigned over = td_snap_over(d, cap);
	char line[1400], b[2][40];
	size_t n, k;

	if (!over)
		return;
	n = (size_t)snprintf(line, sizeof(line), "%s: impossible on a device of %s "
			     "(--device-memory):", name, td_fmt_bytes(b[0], sizeof(b[0]), (double)cap));
	for (k = 0; k < sizeof(overs) / sizeof(overs[0]) && n < sizeof(line); k++)
		if (over & overs[k].bit)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %s,",
					      td_fmt_bytes(b[1], sizeof(b[1]), (double)over_value(d, overs[k].bit)),
					      overs[k].what);
	if (n < sizeof(line))
		snprintf(line + n - 1, sizeof(line) - n + 1, ". A device cannot reserve more than it "
			 "holds: the snapshot is of a larger device (or the size given is not this "
			 "one's: nvidia-smi's MiB), or the driver backed it with host memory (Windows' "
			 "CUDA system-memory fallback); these figures are the allocator's, not the "
			 "device's.");
	fputc('\n', f);
	if (md)
		out_md(f, line);
	else
		out_text_wrap(f, line, 0, 2, 100);
	fputc('\n', f);
}

void render_snap_over_json(yajl_gen g, const struct td_snap_dev *d, int64_t cap)
{
	unsigned over = td_snap_over(d, cap);
	size_t k;

	out_json_kint(g, "device_memory_bytes", cap > 0 ? cap : -1);
	out_json_karray(g, "above_device_memory"); /* the figures it cannot hold: impossible */
	for (k = 0; k < sizeof(overs) / sizeof(overs[0]); k++)
		if (over & overs[k].bit)
			out_json_str(g, overs[k].key);
	yajl_gen_array_close(g);
}

/* the categories holding blocks, the most bytes first (ties in the categories' order), into
 * order; returns how many */
static size_t cat_order(const struct td_snap_cats *x, unsigned *order)
{
	size_t n = 0, i, k;

	for (i = 0; i < TD_SNAP_NCAT; i++) {
		if (!x->c[i].blocks)
			continue;
		for (k = n; k > 0 && x->c[order[k - 1]].bytes < x->c[i].bytes; k--)
			order[k] = order[k - 1];
		order[k] = (unsigned)i;
		n++;
	}
	return n;
}

/* what was live by category, each with the rules that inferred it: text or Markdown */
static void cats_text(FILE *f, const struct td_snap_cats *x, int md)
{
	unsigned order[TD_SNAP_NCAT], r;
	size_t n = cat_order(x, order), i;
	char b[40], line[600];

	if (md && n)
		fputs("| bytes | blocks | category (PyTorch's) | inferred by |\n|---:|---:|---|---|\n", f);
	for (i = 0; i < n; i++) {
		unsigned c = order[i];
		const char *sep = "";
		if (md)
			fprintf(f, "| %s | %llu | %s (%s) | ", td_fmt_bytes(b, sizeof(b), (double)x->c[c].bytes),
				(unsigned long long)x->c[c].blocks, td_snap_cat_name(c), td_snap_cat_pytorch(c));
		else
			fprintf(f, "  %10s  %6llu block%s  %s (%s)\n",
				td_fmt_bytes(b, sizeof(b), (double)x->c[c].bytes),
				(unsigned long long)x->c[c].blocks, x->c[c].blocks == 1 ? " " : "s",
				td_snap_cat_name(c), td_snap_cat_pytorch(c));
		for (r = 0; r < TD_SNAP_NRULE; r++) {
			if (!x->c[c].rule_blocks[r])
				continue;
			snprintf(line, sizeof(line), "%s %s: %s", td_fmt_bytes(b, sizeof(b),
				 (double)x->c[c].rule_bytes[r]), td_snap_rule_id(r), td_snap_rule_text(r));
			if (md) {
				fputs(sep, f);
				out_md(f, line);
				sep = "; ";
			} else {
				fputs("                               ", f);
				out_text_wrap(f, line, 31, 33, 100);
				fputc('\n', f);
			}
		}
		if (md)
			fputs(" |\n", f);
	}
}

static void cats_json(yajl_gen g, const struct td_snap_cats *x)
{
	unsigned order[TD_SNAP_NCAT], r;
	size_t n = cat_order(x, order), i;

	yajl_gen_array_open(g);
	for (i = 0; i < n; i++) {
		unsigned c = order[i];
		yajl_gen_map_open(g);
		out_json_kstr(g, "category", td_snap_cat_name(c));
		out_json_kstr(g, "pytorch_category", td_snap_cat_pytorch(c));
		out_json_kint(g, "bytes", x->c[c].bytes);
		out_json_kint(g, "blocks", (int64_t)x->c[c].blocks);
		out_json_karray(g, "inferred_by");
		for (r = 0; r < TD_SNAP_NRULE; r++) {
			if (!x->c[c].rule_blocks[r])
				continue;
			yajl_gen_map_open(g);
			out_json_kstr(g, "rule", td_snap_rule_id(r));
			out_json_kstr(g, "how", td_snap_rule_text(r));
			out_json_kint(g, "bytes", x->c[c].rule_bytes[r]);
			out_json_kint(g, "blocks", (int64_t)x->c[c].rule_blocks[r]);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void sites_text(FILE *f, const struct td_snapshot *s, const struct td_snap_site *t,
		       size_t n)
{
	size_t i;
	char b[40], m[1200];

	for (i = 0; i < n; i++) {
		int col = fprintf(f, "  %10s  %6llu block%s  ", td_fmt_bytes(b, sizeof(b), (double)t[i].bytes),
				  (unsigned long long)t[i].blocks, t[i].blocks == 1 ? " " : "s");
		out_text_wrap(f, td_mark(m, sizeof(m), td_strtab_str(&s->strs, t[i].site)), col, col,
			      100);
		fputc('\n', f);
	}
}

/* the category holding the most bytes (the first of equals), TD_CAT_UNKNOWN when none */
static unsigned largest_cat(const struct td_snap_cats *x)
{
	unsigned c, best = TD_CAT_UNKNOWN;

	for (c = 1; c < TD_SNAP_NCAT; c++)
		if (x->c[c].bytes > x->c[best].bytes)
			best = c;
	return best;
}

/* why an oom failed and the fix that fits (for live memory, by the category holding the most
 * then), as a sentence */
static const char *oom_cause(const struct td_snapshot *s, const struct td_snap_oom *x)
{
	if (x->fragmented && !s->expandable)
		return "fragmentation: the memory reserved but unallocated (with what the device had "
		       "free) would hold the request, but no free block was that large. Fix: "
		       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PYTORCH_HIP_ALLOC_CONF on "
		       "ROCm), so that a segment grows instead of being split";
	if (x->fragmented)
		return "fragmentation, with expandable segments already on: free memory was "
		       "scattered in pieces smaller than the request. Fix: make the large "
		       "allocations early and keep them (preallocate), or lower the peak";
	switch (largest_cat(&x->cats)) { /* the fix for what held the most then */
	case TD_CAT_ACTIVATION:
	case TD_CAT_AUTOGRAD:
		return "live memory, activations and autograd's temporaries the most of it: what "
		       "was allocated and the request exceed what the device holds. Fix: a smaller "
		       "batch, or activation checkpointing (torch.utils.checkpoint)";
	case TD_CAT_OPTIMIZER:
		return "live memory, optimizer state the most of it: what was allocated and the "
		       "request exceed what the device holds. Fix: shard the optimizer state (ZeRO, "
		       "FSDP), a lighter optimizer (8-bit states), or offload it to the CPU";
	case TD_CAT_PARAMETER:
	case TD_CAT_GRADIENT:
		return "live memory, parameters and gradients the most of it: what was allocated and "
		       "the request exceed what the device holds. Fix: shard them (FSDP), keep them "
		       "in lower precision, or offload parameters to the CPU";
	default:
		return "live memory: what was allocated and the request exceed what the device "
		       "holds. Fix: a smaller batch, activation checkpointing (torch.utils.checkpoint) "
		       "for the activations, or offload (optimizer state or parameters to the CPU)";
	}
}

static void oom_text(FILE *f, const struct td_snapshot *s, const struct td_snap_oom *x, int md)
{
	char b[3][40], line[1200];

	snprintf(line, sizeof(line), "%s%s reserved then, %s of it unallocated; the largest free "
		 "block at the snapshot: %s. Cause: %s.", md ? "" : "  ",
		 td_fmt_bytes(b[0], sizeof(b[0]), (double)x->reserved),
		 td_fmt_bytes(b[1], sizeof(b[1]), (double)(x->reserved > x->allocated ?
							   x->reserved - x->allocated : 0)),
		 x->largest_free >= 0 ? td_fmt_bytes(b[2], sizeof(b[2]), (double)x->largest_free)
				      : "none", oom_cause(s, x));
	if (md)
		out_md(f, line);
	else
		out_text_wrap(f, line, 0, 4, 100);
	fputc('\n', f);
}

/* A row per device of a snapshot: reserved, allocated, entries, peak allocated, ooms; the
 * text table's columns, or a Markdown table's rows when md. */
static void snap_devices(FILE *f, const struct td_snapshot *s, int md)
{
	char b[4][40];
	size_t k;

	for (k = 0; k < s->ndev; k++) {
		const struct td_snap_dev *d = &s->dev[k];
		fprintf(f, md ? "| %s | %s | %s | %llu | %s | %zu |\n"
			   : "%-7s %12s %12s %9llu %16s %6zu\n", dev_name(b[0], sizeof(b[0]), d->device),
			td_fmt_bytes(b[1], sizeof(b[1]), (double)d->reserved),
			td_fmt_bytes(b[2], sizeof(b[2]), (double)d->allocated),
			(unsigned long long)d->events,
			d->events ? td_fmt_bytes(b[3], sizeof(b[3]), (double)d->peak) : "-", d->nooms);
	}
}

void render_snapshot_text(FILE *f, const void *ctx)
{
	const struct snap_ctx *c = ctx;
	const struct td_snapshot *s = c->snap;
	size_t k, o;
	char b[6][40], title[1200], m[1200];

	snprintf(title, sizeof(title), "tracedoc memory: %s · a caching-allocator snapshot%s", c->path,
		 s->has_traces ? "" : " without history (record with "
		 "torch.cuda.memory._record_memory_history() for the peak and the ooms)");
	out_text_wrap(f, title, 0, 2, 100);
	fputs("\n\n", f);
	fprintf(f, "%-7s %12s %12s %9s %16s %6s\n", "device", "reserved", "allocated", "entries",
		"peak allocated", "ooms");
	snap_devices(f, s, 0);
	for (k = 0; k < s->ndev; k++)
		render_snap_over(f, &s->dev[k], dev_name(b[0], sizeof(b[0]), s->dev[k].device),
				 c->device_memory, 0);
	for (k = 0; k < s->ndev; k++) {
		const struct td_snap_dev *d = &s->dev[k];
		if (d->events && d->peak_entry >= 0)
			fprintf(f, "\n%s at its peak, %s allocated (after entry %lld of %llu), by "
				   "allocation site:\n", dev_name(b[0], sizeof(b[0]), d->device),
				td_fmt_bytes(b[1], sizeof(b[1]), (double)d->peak),
				(long long)d->peak_entry + 1, (unsigned long long)d->events);
		else if (d->events)
			fprintf(f, "\n%s at its peak, %s allocated (when its trace begins), by "
				   "allocation site:\n", dev_name(b[0], sizeof(b[0]), d->device),
				td_fmt_bytes(b[1], sizeof(b[1]), (double)d->peak));
		else
			fprintf(f, "\n%s live at the snapshot, by allocation site:\n",
				dev_name(b[0], sizeof(b[0]), d->device));
		sites_text(f, s, d->top, d->ntop);
		if (d->events) {
			fputs("  by category (PyTorch's memory profiler's), each with the rules that "
			      "inferred it:\n", f);
			cats_text(f, &d->cats, 0);
		}
		for (o = 0; o < d->nooms; o++) {
			const struct td_snap_oom *x = &d->ooms[o];
			char line[1600];
			snprintf(line, sizeof(line), "%s ran out of memory at entry %zu: %s asked for at "
				 "%s, %s free on the device, %s allocated:",
				 dev_name(b[0], sizeof(b[0]), d->device), x->index + 1,
				 td_fmt_bytes(b[1], sizeof(b[1]), (double)x->requested),
				 td_mark(m, sizeof(m), td_strtab_str(&s->strs, x->site)),
				 x->device_free >= 0 ? td_fmt_bytes(b[2], sizeof(b[2]), (double)x->device_free)
						     : "?",
				 td_fmt_bytes(b[3], sizeof(b[3]), (double)x->allocated));
			fputc('\n', f);
			out_text_wrap(f, line, 0, 2, 100);
			fputc('\n', f);
			oom_text(f, s, x, 0);
			fputs("  live then, by allocation site:\n", f);
			sites_text(f, s, x->top, x->ntop);
			fputs("  live then, by category:\n", f);
			cats_text(f, &x->cats, 0);
		}
		if (d->unmatched_frees)
			fprintf(f, "  (%llu frees of blocks the replay did not know: counted, left out)\n",
				(unsigned long long)d->unmatched_frees);
	}
}

static void sites_md(FILE *f, const struct td_snapshot *s, const struct td_snap_site *t, size_t n)
{
	size_t i;
	char b[40], m[1200];

	fputs("| bytes | blocks | allocation site |\n|---:|---:|---|\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "| %s | %llu | ", td_fmt_bytes(b, sizeof(b), (double)t[i].bytes),
			(unsigned long long)t[i].blocks);
		out_md(f, td_mark(m, sizeof(m), td_strtab_str(&s->strs, t[i].site)));
		fputs(" |\n", f);
	}
}

void render_snapshot_md(FILE *f, const void *ctx)
{
	const struct snap_ctx *c = ctx;
	const struct td_snapshot *s = c->snap;
	size_t k, o;
	char b[6][40], m[1200];

	fputs("### tracedoc memory: ", f);
	out_md(f, c->path);
	fputs(" (caching-allocator snapshot)\n\n| device | reserved | allocated | entries | peak "
	      "allocated | ooms |\n|---|---:|---:|---:|---:|---:|\n", f);
	snap_devices(f, s, 1);
	for (k = 0; k < s->ndev; k++)
		render_snap_over(f, &s->dev[k], dev_name(b[0], sizeof(b[0]), s->dev[k].device),
				 c->device_memory, 1);
	for (k = 0; k < s->ndev; k++) {
		const struct td_snap_dev *d = &s->dev[k];
		fprintf(f, "\n**%s at %s** (%s)\n\n", dev_name(b[0], sizeof(b[0]), d->device),
			d->events ? "its peak" : "the snapshot",
			td_fmt_bytes(b[1], sizeof(b[1]), (double)(d->events ? d->peak : d->allocated)));
		sites_md(f, s, d->top, d->ntop);
		if (d->events) {
			fputs("\nBy category (PyTorch's memory profiler's):\n\n", f);
			cats_text(f, &d->cats, 1);
		}
		for (o = 0; o < d->nooms; o++) {
			const struct td_snap_oom *x = &d->ooms[o];
			fprintf(f, "\n**Out of memory** at entry %zu: %s asked for at ", x->index + 1,
				td_fmt_bytes(b[1], sizeof(b[1]), (double)x->requested));
			out_md(f, td_mark(m, sizeof(m), td_strtab_str(&s->strs, x->site)));
			fprintf(f, ", %s free on the device, %s allocated. ",
				x->device_free >= 0 ? td_fmt_bytes(b[2], sizeof(b[2]), (double)x->device_free)
						    : "?",
				td_fmt_bytes(b[3], sizeof(b[3]), (double)x->allocated));
			oom_text(f, s, x, 1);
			fputs("\nLive then:\n\n", f);
			sites_md(f, s, x->top, x->ntop);
			fputs("\nLive then, by category:\n\n", f);
			cats_text(f, &x->cats, 1);
		}
	}
}

static void sites_json(yajl_gen g, const struct td_snapshot *s, const struct td_snap_site *t,
		       size_t n)
{
	size_t i;

	yajl_gen_array_open(g);
	for (i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		out_json_kstr(g, "site", td_strtab_str(&s->strs, t[i].site));
		out_json_kint(g, "bytes", t[i].bytes);
		out_json_kint(g, "blocks", (int64_t)t[i].blocks);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void render_snapshot_json(FILE *f, const void *ctx)
{
	const struct snap_ctx *c = ctx;
	const struct td_snapshot *s = c->snap;
	yajl_gen g = json_head(f, "snapshot", c->path);
	size_t k, o;

	out_json_kbool(g, "history", s->has_traces);
	out_json_karray(g, "devices");
	for (k = 0; k < s->ndev; k++) {
		const struct td_snap_dev *d = &s->dev[k];
		yajl_gen_map_open(g);
		out_json_kint(g, "id", d->device);
		out_json_kint(g, "reserved_bytes", d->reserved);
		out_json_kint(g, "allocated_bytes", d->allocated);
		out_json_kint(g, "segments", (int64_t)d->segments);
		out_json_kint(g, "blocks", (int64_t)d->blocks);
		out_json_kint(g, "entries", (int64_t)d->events);
		out_json_kint(g, "allocated_at_trace_start_bytes", d->start_allocated);
		out_json_kint(g, "peak_allocated_bytes", d->peak);
		out_json_kint(g, "peak_reserved_bytes", d->peak_reserved);
		render_snap_over_json(g, d, c->device_memory);
		out_json_key(g, "peak_entry"); /* 0-based; -1: when the trace begins */
		out_json_int(g, d->peak_entry);
		out_json_kint(g, "peak_time_us", d->peak_time_us);
		out_json_key(g, "peak_sites");
		sites_json(g, s, d->top, d->ntop);
		out_json_key(g, "peak_categories");
		cats_json(g, &d->cats);
		out_json_karray(g, "ooms");
		for (o = 0; o < d->nooms; o++) {
			const struct td_snap_oom *x = &d->ooms[o];
			yajl_gen_map_open(g);
			out_json_kint(g, "entry", (int64_t)x->index);
			out_json_kint(g, "time_us", x->time_us);
			out_json_kint(g, "requested_bytes", x->requested);
			out_json_kint(g, "device_free_bytes", x->device_free);
			out_json_kint(g, "allocated_bytes", x->allocated);
			out_json_kstr(g, "site", td_strtab_str(&s->strs, x->site));
			out_json_kint(g, "reserved_bytes", x->reserved);
			out_json_kint(g, "reserved_unallocated_bytes", x->reserved > x->allocated ?
				      x->reserved - x->allocated : 0);
			out_json_kint(g, "largest_free_block_bytes", x->largest_free);
			out_json_kstr(g, "cause", x->fragmented ? "fragmentation" : "live memory");
			out_json_kstr(g, "explanation", oom_cause(s, x));
			out_json_key(g, "live_sites");
			sites_json(g, s, x->top, x->ntop);
			out_json_key(g, "live_categories");
			cats_json(g, &x->cats);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		out_json_kint(g, "unmatched_frees", (int64_t)d->unmatched_frees);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}
