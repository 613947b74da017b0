/* SPDX-License-Identifier: MIT */
#include "diagnose/render_html.h"
#include "diagnose/render_job.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "diagnose/out.h"
#include "diagnose/render_phases.h"
#include "diagnose/render_roofline.h"
#include "diagnose/render_table.h"
#include "job/job.h"
#include "analysis/analysis.h"
#include "analysis/check.h"
#include "analysis/metrics.h"
#include "rules/rule.h"
#include "tables/kernels.h"
#include "tables/memory.h"
#include "tables/ops.h"

#define W 960          /* timeline width, px */
#define BUCKETS 240    /* utilization bars */
#define MAX_RECTS 2000 /* a stretch narrower than 1/MAX_RECTS of the window merges */

/* Okabe-Ito, then Tol's wine and two greys: one per cause, in enum order */
static const char *const cause_colour[CAUSE_COUNT] = {
	"#D55E00", /* dataloader: vermillion */
	"#F0E442", /* warmup: yellow */
	"#CC79A7", /* sync: reddish purple */
	"#E69F00", /* transfer: orange */
	"#56B4E9", /* allocator: sky blue */
	"#0072B2", /* communication: blue */
	"#009E73", /* launch: bluish green */
	"#882255", /* dependency: wine */
	"#999999", /* host: grey */
	"#DDDDDD", /* nothing: light grey */
};
#define ONEOFF_COLOUR "#332288" /* a one-off finding's own row (a wait on untraced work): indigo */

void html_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = 1, k;
		unsigned char c = *p;
		const char *e = out_markup_entity(c, 0);
		if (c == 0x1e || c == 0x1f) { /* a name's marks */
			p++;
			continue;
		}
		if (e) {
			fputs(e, f);
			p++;
			continue;
		}
		if (c < 0x20 && c != '\n' && c != '\t') {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			p++;
			continue;
		}
		/* a whole UTF-8 character, or U+FFFD for a byte that does not start one */
		n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
		for (k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80)
				n = 0;
		if (!n) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
}

void html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
	html_text(f, title);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;"
	      "max-width:1000px;color:#222;padding:0 12px}\n"
	      "h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
	      "h3{font-size:15px}\n"
	      "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:2px 6px;"
	      "text-align:left;vertical-align:top}td.n,th.n{text-align:right;"
	      "font-variant-numeric:tabular-nums}\n"
	      "code,.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;"
	      "word-break:break-all}\n"
	      ".sev-high{color:#a00;font-weight:600}.sev-medium{color:#8a5a00;font-weight:600}"
	      ".sev-low,.sev-info{color:#555}\n"
	      ".finding{border-left:4px solid #ccc;padding:2px 10px;margin:12px 0;"
	      "overflow-wrap:anywhere}.tw{overflow-x:auto}"
	      ".finding.high{border-color:#D55E00}.finding.medium{border-color:#E69F00}\n"
	      ".fix{background:#f4f8fb;padding:6px 8px}.muted{color:#666}"
	      ".sw{display:inline-block;width:12px;height:12px;border:1px solid #555;"
	      "vertical-align:-2px;margin-right:4px}\n"
	      "svg text{font:11px system-ui,sans-serif;fill:#222}\n"
	      "@media print{body{margin:0;max-width:none}.finding{break-inside:avoid}}\n"
	      "</style>\n</head>\n<body>\n", f);
}

void html_end(FILE *f)
{
	fputs("<p class=\"muted\">Made by tracedoc " "0.2.0" ".</p>\n</body>\n</html>\n", f);
}

static void td_cell_dur(FILE *f, int64_t ns)
{
	char b[32];

	fprintf(f, "<td class=\"n\">%s</td>", td_fmt_dur(b, sizeof(b), ns));
}

void html_findings(FILE *f, const struct td_report *r)
{
	size_t i, j;
	char b1[32], b2[32], sz[TD_SIZING_MAX];

	if (!r->findings.len) {
		fputs("<p>No findings.</p>\n", f);
		return;
	}
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		const char *sev = td_severity_name(fd->severity);
		fprintf(f, "<div class=\"finding %s\" id=\"finding-%zu\">\n<h3>%zu. <span "
			   "class=\"sev-%s\">[%s]</span> <code>%s</code> ", sev, i + 1, i + 1, sev, sev,
			fd->rule);
		html_text(f, fd->title);
		fputs("</h3>\n<p>", f);
		if (fd->risk)
			fputs(fd->offpath
				      ? "Off the critical path: nothing to win now, so no time figure"
			      : fd->risk == 3 ? "One-off: before the steady state, not a per-step saving"
			      : fd->risk == 2 ? "Advice: no time figure (no change the trace can size)"
					      : "A risk, not a time cost", f); /* the period follows */
		else
			fprintf(f, "Saves ~%s%s (%.1f%% of the window%s%s%s)", td_fmt_dur(b1, sizeof(b1),
				fd->savings_ns), td_finding_sizing(fd, sz, sizeof(sz)), 100.0 * fd->savings_fraction, fd->per_step_ns ? ", " : "",
				fd->per_step_ns ? td_fmt_dur(b2, sizeof(b2), fd->per_step_ns) : "",
				fd->per_step_ns ? " per step" : "");
		if (fd->host_ns)
			fprintf(f, "; frees %s of host time", td_fmt_dur(b1, sizeof(b1), fd->host_ns));
		fputs(".</p>\n", f);
		if (fd->where.len) {
			fputs("<ul>\n", f);
			for (j = 0; j < fd->where.len; j++) {
				fputs("<li>", f);
				html_text(f, TD_VEC_AT(&fd->where, char *, j));
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
		}
		if (fd->evidence.len) {
			fputs("<details><summary>Evidence (ts in us, as in the trace: search it in "
			      "Perfetto)</summary>\n<table><tr><th class=\"n\">ts</th><th class=\"n\">"
			      "duration</th><th>what</th></tr>\n", f);
			for (j = 0; j < fd->evidence.len; j++) {
				const struct td_evidence *e = &TD_VEC_AT(&fd->evidence, struct td_evidence, j);
				int64_t us = e->ts / 1000, rest = e->ts % 1000;
				if (rest < 0) {
					us--;
					rest += 1000;
				}
				fprintf(f, "<tr><td class=\"n\"><code>%lld.%03lld</code></td>", (long long)us,
					(long long)rest);
				td_cell_dur(f, e->dur);
				fputs("<td>", f);
				html_text(f, e->text);
				fputs("</td></tr>\n", f);
			}
			fputs("</table></details>\n", f);
		}
		if (fd->fix && *fd->fix) {
			fputs("<p class=\"fix\"><b>Fix:</b> ", f);
			html_text(f, fd->fix);
			fputs("</p>\n", f);
		}
		fputs("</div>\n", f);
	}
}

/* --- the timeline ----------------------------------------------------------------------- */

static double xpos(int64_t t, int64_t from, int64_t span)
{
	return span > 0 ? (double)(t - from) * W / (double)span : 0;
}

static void timeline(FILE *f, const struct td_analysis *a, const struct td_report *r, size_t d)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_trace *t = a->t;
	int64_t from = dv->win_start, to = dv->win_end, span = to - from;
	size_t i, drawn = 0;
	char b1[32], b2[32];
	double min_w = (double)span / MAX_RECTS;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" role=\"img\" "
		   "width=\"%d\" height=\"120\" viewBox=\"0 0 %d 120\" aria-label=\"GPU %d timeline\">\n",
		W, W, dv->device);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"120\" fill=\"#fff\"/>\n", W);
	/* utilization per bucket: bars from the bottom of the top lane */
	fputs("<g class=\"util\">\n", f);
	for (i = 0; i < BUCKETS && span > 0; i++) {
		int64_t b0 = from + (int64_t)((double)span * (double)i / BUCKETS);
		int64_t b1n = from + (int64_t)((double)span * (double)(i + 1) / BUCKETS);
		int64_t busy = td_an_busy_between(a, d, b0, b1n);
		double u = b1n > b0 ? (double)busy / (double)(b1n - b0) : 0;
		double h = 50.0 * u;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#333\">"
			   "<title>%s to %s: %.0f%% busy</title></rect>\n", xpos(b0, from, span),
			60.0 - h, (double)W / BUCKETS, h, td_fmt_dur(b1, sizeof(b1), b0 - from),
			td_fmt_dur(b2, sizeof(b2), b1n - from), 100 * u);
	}
	fputs("</g>\n<g class=\"idle\">\n", f);
	/* every idle stretch by cause; stretches narrower than a pixel merge with their
	 * neighbours into one, coloured by the cause that holds most of it */
	for (i = 0; i < dv->nsegs && drawn < MAX_RECTS * 2; ) {
		int64_t s0 = dv->segs[i].start, s1 = dv->segs[i].end, by[CAUSE_COUNT] = {0};
		size_t k = i, c, top = dv->segs[i].cause, parts = 0;
		const struct td_finding *fd;
		double x0, x1;
		while (k < dv->nsegs && (k == i || ((double)(dv->segs[k].end - s0) < min_w &&
						    (double)(dv->segs[k].start - s1) < min_w))) {
			by[dv->segs[k].cause] += dv->segs[k].end - dv->segs[k].start;
			s1 = dv->segs[k].end;
			k++;
			parts++;
		}
		for (c = 0; c < CAUSE_COUNT; c++)
			if (by[c] > by[top])
				top = c;
		x0 = xpos(s0, from, span);
		x1 = xpos(s1, from, span);
		fd = td_report_owner(a, r, d, s0);
		fprintf(f, "<rect x=\"%.2f\" y=\"66\" width=\"%.2f\" height=\"22\" fill=\"%s\" "
			   "class=\"cause-%s\"><title>", x0, x1 - x0 < 0.5 ? 0.5 : x1 - x0,
			cause_colour[top], td_cause_id((enum td_cause)top));
		html_text(f, td_cause_title((enum td_cause)top));
		if (parts == 1 && dv->segs[i].what) {
			fputs(": ", f);
			html_text(f, td_an_label(a, dv->segs[i].what));
		} else if (parts > 1) {
			fprintf(f, " and %zu more stretches", parts - 1);
		}
		fprintf(f, " (%s at %s", td_fmt_dur(b1, sizeof(b1), s1 - s0),
			td_fmt_dur(b2, sizeof(b2), s0 - from));
		if (fd) {
			fprintf(f, "; finding: %s, ", fd->rule);
			html_text(f, fd->title);
		}
		fputs(")</title></rect>\n", f);
		drawn++;
		i = k;
	}
	fputs("</g>\n<g class=\"steps\">\n", f);
	for (i = 0; i < a->nsteps; i++) {
		double x = xpos(a->steps[i].start, from, span);
		int64_t n = td_trace_step_at(t, a->steps[i].start);
		if (x < 0 || x > W)
			continue;
		fprintf(f, "<line x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"92\" stroke=\"#0072B2\" "
			   "stroke-dasharray=\"3,2\"/><text x=\"%.2f\" y=\"104\">step %lld</text>\n", x, x,
			x + 2, (long long)n);
	}
	fprintf(f, "</g>\n<text x=\"0\" y=\"118\">0</text><text x=\"%d\" y=\"118\" "
		   "text-anchor=\"end\">%s</text>\n</svg>\n", W, td_fmt_dur(b1, sizeof(b1), span));
}

static void idle_bar(FILE *f, const struct td_analysis *a, size_t d)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t by[CAUSE_COUNT + 1] = {0};
	const char *oneoff = "one-off";
	double x = 0;
	int c;
	char b[32];

	if (!dv->idle_ns)
		return;
	/* what one-off findings claim shown under them, as the text's table does */
	td_an_idle_by_cause_told(a, d, by, &oneoff);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"22\" "
		   "viewBox=\"0 0 %d 22\" role=\"img\" aria-label=\"idle by cause\">\n", W, W);
	for (c = 0; c <= CAUSE_COUNT; c++) {
		double w = (double)W * (double)by[c] / (double)dv->idle_ns;
		if (by[c] <= 0)
			continue;
		fprintf(f, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"22\" fill=\"%s\"><title>",
			x, w, c < CAUSE_COUNT ? cause_colour[c] : ONEOFF_COLOUR);
		html_text(f, c < CAUSE_COUNT ? td_cause_title((enum td_cause)c) : oneoff);
		fprintf(f, ": %s (%.1f%%)</title></rect>\n", td_fmt_dur(b, sizeof(b), by[c]),
			100.0 * (double)by[c] / (double)dv->idle_ns);
		x += w;
	}
	fputs("</svg>\n<table><tr><th>idle cause</th><th class=\"n\">time</th><th class=\"n\">share"
	      "</th></tr>\n", f);
	for (c = 0; c <= CAUSE_COUNT; c++) {
		if (by[c] <= 0)
			continue;
		fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>",
			c < CAUSE_COUNT ? cause_colour[c] : ONEOFF_COLOUR);
		html_text(f, c < CAUSE_COUNT ? td_cause_title((enum td_cause)c) : oneoff);
		fputs("</td>", f);
		td_cell_dur(f, by[c]);
		fprintf(f, "<td class=\"n\">%.1f%%</td></tr>\n",
			100.0 * (double)by[c] / (double)dv->idle_ns);
	}
	fputs("</table>\n", f);
}

static void per_step(FILE *f, const struct td_analysis *a, size_t d)
{
	size_t i;

	if (!a->nsteps || !a->dev[d].gsteps)
		return;
	fputs("<table><tr><th>step</th><th class=\"n\">host</th><th class=\"n\">GPU busy</th></tr>\n",
	      f);
	for (i = 0; i < a->nsteps; i++) {
		const struct td_interval *g = &a->dev[d].gsteps[i];
		int64_t busy = td_an_busy_between(a, d, g->start, g->end);
		fprintf(f, "<tr><td>%lld</td>", (long long)td_trace_step_at(a->t, a->steps[i].start));
		td_cell_dur(f, a->steps[i].end - a->steps[i].start);
		fprintf(f, "<td class=\"n\">%.1f%%</td></tr>\n",
			g->end > g->start ? 100.0 * (double)busy / (double)(g->end - g->start) : 0.0);
	}
	fputs("</table>\n", f);
}

static void legend(FILE *f)
{
	int c;

	fputs("<p class=\"muted\">Top lane: GPU utilization per 1/240 of the window. Lower lane: "
	      "every idle stretch, coloured by its cause (hover for the activity and the finding "
	      "that claims it). Dashed lines: steps.<br>", f);
	for (c = 0; c < CAUSE_COUNT; c++)
		fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>%s &nbsp; ", cause_colour[c],
			td_cause_title((enum td_cause)c));
	fputs("</p>\n", f);
}

static void html_table(FILE *f, const struct td_table *t, size_t top)
{
	size_t r, c, n = top && top < t->nrows ? top : t->nrows;
	char buf[64];

	fputs("<div class=\"tw\"><table>\n<tr>", f); /* wide tables scroll, not the page */
	for (c = 0; c < t->ncols; c++) {
		int num = t->cols[c].type != TC_NAME && t->cols[c].type != TC_TEXT;
		fprintf(f, "<th%s>", num ? " class=\"n\"" : "");
		html_text(f, t->cols[c].title);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (r = 0; r < n; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			int text = t->cols[c].type == TC_NAME || t->cols[c].type == TC_TEXT;
			fputs(text ? "<td class=\"name\">" : "<td class=\"n\">", f);
			html_text(f, table_cell_text(t, r, c, buf, sizeof(buf)));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

/* One device's memory over the samples' span: a y axis (0, half, the top) and an x axis (the
 * time from the first sample), the curves inside. */
#define MX 64   /* left margin: the y labels */
#define MH 100  /* plot height */
static void mem_line(FILE *f, const struct td_mem_view *v, double top, int reserved)
{
	size_t i;

	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
		reserved ? "#56B4E9" : "#0072B2");
	for (i = 0; i < v->npts; i++) {
		int64_t y = reserved ? v->pts[i].reserved : v->pts[i].allocated;
		if (y >= 0)
			fprintf(f, "%.1f,%.1f ", MX + (double)(W - MX - 8) * (double)i / TD_MEM_POINTS,
				4.0 + MH - (double)MH * (double)y / top);
	}
	fputs("\"/>\n", f);
}

static void mem_chart(FILE *f, const struct td_mem_view *v, double top, int64_t span)
{
	char b[32];
	int k;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"memory\">\n", W, MH + 24, W,
		MH + 24);
	for (k = 0; k <= 2; k++) { /* y: 0, half, top */
		double y = 4.0 + MH - MH * k / 2.0;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", MX, y, W - 8,
			y, MX - 4, y + 4, td_fmt_bytes(b, sizeof(b), top * k / 2.0));
	}
	fprintf(f, "<line x1=\"%d\" y1=\"4\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>"
		   "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		   "%s</text>\n", MX, MX, MH + 4, MX, MH + 18, W - 8, MH + 18,
		td_fmt_dur(b, sizeof(b), span));
	if (v->d.has_reserved)
		mem_line(f, v, top, 1);
	mem_line(f, v, top, 0);
	fputs("</svg>\n", f);
}

static void memory_curve(FILE *f, const struct td_analysis *a)
{
	struct td_mem_report m;
	size_t k;
	char b[32];

	if (!a->t->mem.len)
		return;
	td_mem_report(a, &m);
	fputs("<h2>Memory</h2>\n", f);
	for (k = 0; k < m.n; k++) {
		const struct td_mem_view *v = &m.dev[k];
		double top = (double)(v->d.peak_res > v->d.peak_alloc ? v->d.peak_res : v->d.peak_alloc);
		if (top <= 0)
			continue;
		char dev[24];
		snprintf(dev, sizeof(dev), v->d.device < 0 ? "host" : "GPU %d", v->d.device);
		fprintf(f, "<h3>%s: allocated (dark blue)%s, up to %s</h3>\n", dev,
			!v->d.has_reserved ? " (the trace holds no reserved total)" : v->d.device < 0
			? " and reserved (light blue)" : " and reserved by the caching allocator (light "
			"blue)", td_fmt_bytes(b, sizeof(b), top));
		mem_chart(f, v, top, m.end - m.start);
		if (*v->peak_op) {
			fputs("<p>At the peak: <code>", f);
			html_text(f, v->peak_op);
			fputs("</code>", f);
			if (*v->peak_frame) {
				fputs(" in <code>", f);
				html_text(f, v->peak_frame);
				fputs("</code>", f);
			}
			if (v->peak_step >= 0)
				fprintf(f, ", step %lld", (long long)v->peak_step);
			fputs(".</p>\n", f);
		}
	}
	td_mem_report_free(&m);
}

void render_html(FILE *f, const struct render_ctx *rc)
{
	const struct td_analysis *a = rc->a;
	const struct td_trace *t = a->t;
	size_t d;
	char b1[32], b2[32], title[1100];

	snprintf(title, sizeof(title), "tracedoc: %s", rc->path);
	html_begin(f, title);
	fputs("<h1>tracedoc diagnose: <code>", f);
	html_text(f, rc->path);
	fputs("</code></h1>\n<p>", f);
	render_context_line(f, t, &a->ctx, "<b>Context:</b> ", html_text, "<br>");
	if (rc->check) {
		char hl[512];
		td_health_line(rc->check, hl, sizeof(hl));
		fputs("<b>Health:</b> ", f);
		html_text(f, hl);
		fputs("<br>", f);
	}
	fprintf(f, "%llu events", (unsigned long long)t->n_trace_events); /* as stats counts them */
	if (t->rank >= 0)
		fprintf(f, ", rank %lld of %lld", (long long)t->rank, (long long)t->world_size);
	if (a->nsteps && a->iter_src != TD_ITER_NONE) /* a serving engine's, not a loop's */
		fprintf(f, "; %zu steady-state iteration%s (%s), median %s", a->nsteps,
			a->nsteps == 1 ? "" : "s", td_iter_src_name(a->iter_src),
			td_fmt_dur(b1, sizeof(b1), td_an_median_step(a)));
	else if (a->nsteps)
		fprintf(f, "; %zu steady-state steps, median %s", a->nsteps,
			td_fmt_dur(b1, sizeof(b1), td_an_median_step(a)));
	if (t->partial) {
		fputs(". <b>Partial trace:</b> ", f);
		html_text(f, t->partial_msg);
	}
	if (*t->lacks) { /* what the input lacks (an nsys export's absent tables) */
		fputs(". <b>Note:</b> ", f);
		html_text(f, t->lacks);
	}
	fputs(".</p>\n", f);
	for (d = 0; d < a->ndev; d++) {
		const struct td_dev_analysis *dv = &a->dev[d];
		int64_t w = dv->win_end - dv->win_start;
		fprintf(f, "<h2>GPU %d: busy %.1f%%, idle %s of %s</h2>\n", dv->device,
			w > 0 ? 100.0 * (double)dv->busy_ns / (double)w : 0.0,
			td_fmt_dur(b1, sizeof(b1), dv->idle_ns), td_fmt_dur(b2, sizeof(b2), w));
		timeline(f, a, rc->r, d);
		if (d == 0)
			legend(f);
		idle_bar(f, a, d);
		per_step(f, a, d);
	}
	render_phases_html(f, a, html_text);
	if (!a->ndev)
		fputs("<p>No GPU ops in this trace.</p>\n", f);
	fputs("<h2>Findings</h2>\n", f);
	html_findings(f, rc->r);
	{
		struct td_ops_opts o = {0, TD_GROUP_NAME, 1, 0};
		struct td_table ops, ker;
		td_ops_table(a, &o, &ops);
		if (ops.nrows) {
			td_table_sort(&ops, (size_t)td_table_col(&ops, a->ndev ? "cuda_total_ns"
								 : "cpu_total_ns"));
			fputs("<h2>Top ops</h2>\n", f);
			html_table(f, &ops, 15);
			render_roofline_html(f, a, &ops, html_text);
		}
		td_table_free(&ops);
		td_kernels_table(a, 0, &ker);
		if (ker.nrows) {
			td_table_sort(&ker, (size_t)td_table_col(&ker, "total_ns"));
			fputs("<h2>Top kernels</h2>\n", f);
			html_table(f, &ker, 15);
		}
		td_table_free(&ker);
	}
	memory_curve(f, a);
	html_end(f);
}

void render_job_html(FILE *f, const struct td_job *j)
{
	size_t r, k;
	char b[6][32];
	int64_t strag = -1, longest = 1;

	html_begin(f, "tracedoc: a job");
	fprintf(f, "<h1>tracedoc diagnose: a job of %zu rank%s</h1>\n<p>", j->n, j->n == 1 ? "" : "s");
	if (j->world_size > 0)
		fprintf(f, "World size %lld. ", (long long)j->world_size);
	fprintf(f, "%zu collectives matched across ranks.</p>\n", j->matched);
	for (k = 0; k < j->errors.len; k++) {
		fputs("<p><b>Not read:</b> ", f);
		html_text(f, TD_VEC_AT(&j->errors, struct td_job_error, k).message);
		fputs("</p>\n", f);
	}
	if (j->missing_count) {
		char buf[512];
		fputs("<p><b>Missing ranks:</b> ", f);
		html_text(f, render_job_missing(j, buf, sizeof(buf)) + strlen("missing: "));
		fputs("</p>\n", f);
	}
	if (j->straggler >= 0)
		strag = j->rows[j->straggler].rank;
	for (r = 0; r < j->n; r++)
		if (j->rows[r].s->window_ns > longest)
			longest = j->rows[r].s->window_ns;
	/* a row per rank: its window as a bar, busy dark, waiting in collectives blue */
	fputs("<h2>Ranks</h2>\n<p class=\"muted\">Each rank's window: busy (dark), of it waiting in "
	      "collectives for the last rank (blue), idle (light); the straggler in vermillion."
	      "</p>\n", f);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
		   "viewBox=\"0 0 %d %zu\" role=\"img\" aria-label=\"ranks\">\n", W, 18 * j->n + 24, W,
		18 * j->n + 24);
	{ /* the time axis under the bars: 0, half and the longest window */
		double full = (double)(W - 70 - 100), yb = 4 + 18.0 * (double)j->n;
		int q;
		fprintf(f, "<line x1=\"70\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
			yb, 70 + full, yb);
		for (q = 0; q <= 2; q++)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
				70 + full * q / 2, yb, 70 + full * q / 2, yb + 4, 70 + full * q / 2, yb + 16,
				q == 0 ? "start" : q == 1 ? "middle" : "end",
				td_fmt_dur(b[3], sizeof(b[3]), longest * q / 2));
	}
	for (r = 0; r < j->n; r++) {
		const struct td_job_row *w = &j->rows[r];
		const struct td_summary *s = w->s;
		double y = 2 + 18.0 * (double)r, full = (double)(W - 70 - 100);
		double ww = full * (double)s->window_ns / (double)longest;
		double wb = ww * (s->window_ns ? (double)s->busy_ns / (double)s->window_ns : 0);
		double wq = ww * (s->window_ns ? (double)w->wait_ns / (double)s->window_ns : 0);
		fprintf(f, "<text x=\"0\" y=\"%.1f\"%s>rank %lld</text>\n", y + 12,
			w->rank == strag ? " style=\"fill:#D55E00;font-weight:bold\"" : "",
			(long long)w->rank);
		fprintf(f, "<rect x=\"70\" y=\"%.1f\" width=\"%.2f\" height=\"14\" fill=\"#DDDDDD\"/>"
			   "<rect x=\"70\" y=\"%.1f\" width=\"%.2f\" height=\"14\" fill=\"%s\"><title>rank "
			   "%lld: busy %s of %s, waiting %s</title></rect>", y, ww, y, wb,
			w->rank == strag ? "#D55E00" : "#333", (long long)w->rank,
			td_fmt_dur(b[0], sizeof(b[0]), s->busy_ns),
			td_fmt_dur(b[1], sizeof(b[1]), s->window_ns),
			td_fmt_dur(b[2], sizeof(b[2]), w->wait_ns));
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"14\" fill=\"#56B4E9\"/>",
			70 + wb - (wq < wb ? wq : wb), y, wq < wb ? wq : wb);
		/* its values beside it: busy share of the window, and the window */
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">%.0f%% of %s</text>\n", 70 + ww + 4, y + 12,
			s->window_ns ? 100.0 * (double)s->busy_ns / (double)s->window_ns : 0.0,
			td_fmt_dur(b[0], sizeof(b[0]), s->window_ns));
	}
	fputs("</svg>\n<table><tr><th>rank</th><th class=\"n\">steps</th><th class=\"n\">median "
	      "step</th><th class=\"n\">busy</th><th>top idle</th><th class=\"n\">collectives</th>"
	      "<th class=\"n\">waiting</th><th class=\"n\">exposed</th><th class=\"n\">data "
	      "loading</th></tr>\n", f);
	for (r = 0; r < j->n; r++) {
		const struct td_job_row *w = &j->rows[r];
		const struct td_summary *s = w->s;
		fprintf(f, "<tr%s><td>%lld%s</td><td class=\"n\">%llu</td>",
			w->rank == strag ? " style=\"color:#D55E00;font-weight:bold\"" : "",
			(long long)w->rank, w->rank == strag ? " (straggler)" : "",
			(unsigned long long)s->steps);
		td_cell_dur(f, s->step_median_ns);
		fprintf(f, "<td class=\"n\">%.1f%%</td><td>%s</td>",
			s->window_ns ? 100.0 * (double)s->busy_ns / (double)s->window_ns : 0.0,
			s->top_cause >= 0 ? td_cause_id((enum td_cause)s->top_cause) : "-");
		td_cell_dur(f, s->comm_ns);
		td_cell_dur(f, w->wait_ns);
		td_cell_dur(f, s->exposed_ns);
		td_cell_dur(f, s->dataloader_ns);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<h2>Findings</h2>\n", f);
	html_findings(f, &j->report);
	html_end(f);
}
