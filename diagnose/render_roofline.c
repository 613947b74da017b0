/* SPDX-License-Identifier: MIT */
#include "diagnose/render_roofline.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/roofline.h"
#include "common/alloc.h"
#include "tables/table.h"

/* the plot's box inside the 960 x 360 picture, px */
#define RW 960
#define RH 360
#define PX 70
#define PY 12
#define PW (RW - PX - 20)
#define PH (RH - PY - 46)
#define MAX_DECADES 10

struct pt {
	size_t row;
	double lx, ly;      /* log10 of the intensity and the TFLOP/s */
};

struct axes {
	int x0, x1, y0, y1; /* decades shown: 10^x0 .. 10^x1 FLOP/B, 10^y0 .. 10^y1 TFLOP/s */
};

static double px_x(const struct axes *ax, double lx)
{
	double v = (lx - ax->x0) / (ax->x1 - ax->x0);
	return PX + PW * (v < 0 ? 0 : v > 1 ? 1 : v);
}

static double px_y(const struct axes *ax, double ly)
{
	double v = (ly - ax->y0) / (ax->y1 - ax->y0);
	return PY + PH - PH * (v < 0 ? 0 : v > 1 ? 1 : v);
}

/* the decades around [lo, hi] (log10), at least one, at most MAX_DECADES (the high end kept) */
static void decades(double lo, double hi, int *d0, int *d1)
{
	*d0 = (int)floor(lo);
	*d1 = (int)ceil(hi);
	if (*d1 <= *d0)
		*d1 = *d0 + 1;
	if (*d1 - *d0 > MAX_DECADES)
		*d0 = *d1 - MAX_DECADES;
}

static void axis_labels(FILE *f, const struct axes *ax)
{
	int k;

	for (k = ax->x0; k <= ax->x1; k++) {
		double x = px_x(ax, k);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
			   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, PY, x,
			PY + PH, x, PY + PH + 14, pow(10, k));
	}
	for (k = ax->y0; k <= ax->y1; k++) {
		double y = px_y(ax, k);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", PX, y, PX + PW,
			y, PX - 4, y + 4, pow(10, k));
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		   "stroke=\"#888\"/>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic "
		   "intensity, FLOP/byte (log)</text>\n<text x=\"14\" y=\"%d\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 14 %d)\">achieved TFLOP/s (log)</text>\n", PX, PY, PW, PH,
		PX + PW / 2, RH - 6, PY + PH / 2, PY + PH / 2);
}

void render_roofline_html(FILE *f, const struct td_analysis *a, const struct td_table *ops,
			  void (*text)(FILE *f, const char *s))
{
	int ct = td_table_col(ops, "achieved_tflops"), ci = td_table_col(ops, "intensity");
	int cb = td_table_col(ops, "bound"), cp = td_table_col(ops, "pct_of_roofline");
	int cc = td_table_col(ops, "calls"), cn = td_table_col(ops, "name");
	struct td_mfu m;
	struct pt *p;
	struct axes ax;
	size_t r, n = 0, k;
	double peak, tbps = a->peaks.tbps, lo_x, hi_x, lo_y, hi_y, lridge, lpeak, lbw, sx;
	int dtype;

	if (ct < 0 || ci < 0 || cb < 0 || cp < 0 || cc < 0 || cn < 0 || tbps <= 0 || !ops->nrows)
		return;
	td_an_mfu(a, &m);
	dtype = m.dtype >= 0 ? m.dtype : TD_DT_FP32; /* the dtype of most of the model's FLOPs */
	peak = td_roof_peak(&a->peaks, dtype);
	if (peak <= 0)
		return;
	lpeak = log10(peak);
	lbw = log10(tbps);
	lridge = lpeak - lbw;
	lo_x = hi_x = lridge;
	lo_y = hi_y = lpeak;
	p = td_malloc(ops->nrows * sizeof(*p));
	for (r = 0; r < ops->nrows; r++) {
		double tf = td_table_cell(ops, r, (size_t)ct)->f;
		double in = td_table_cell(ops, r, (size_t)ci)->f;
		if (!(tf > 0) || !(in > 0) || !isfinite(tf) || !isfinite(in))
			continue;
		p[n].row = r;
		p[n].lx = log10(in);
		p[n].ly = log10(tf);
		lo_x = p[n].lx < lo_x ? p[n].lx : lo_x;
		hi_x = p[n].lx > hi_x ? p[n].lx : hi_x;
		lo_y = p[n].ly < lo_y ? p[n].ly : lo_y;
		hi_y = p[n].ly > hi_y ? p[n].ly : hi_y;
		n++;
	}
	if (!n) {
		free(p);
		return;
	}
	decades(lo_x, hi_x, &ax.x0, &ax.x1);
	decades(lo_y, hi_y + 0.02, &ax.y0, &ax.y1);
	fprintf(f, "<h2>Roofline</h2>\n<p class=\"muted\">Each op with a cost (docs/roofline.md) as "
		   "a point: its FLOPs over its bytes, and its FLOPs over the GPU time of its kernels "
		   "(hover for the figures; blue: compute-bound, vermillion: memory-bound). The roof: "
		   "%s's %.4g TB/s up to the ridge at %.3g FLOP/byte, then its %s peak of %.4g "
		   "TFLOP/s (the dtype of most of the model's FLOPs).</p>\n",
		*a->peaks.device ? a->peaks.device : "the device", tbps, pow(10, lridge),
		td_dtype_name((enum td_dtype)dtype), peak);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" role=\"img\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" aria-label=\"roofline\" "
		   "data-plot=\"%d %d %d %d\" data-x-decades=\"%d %d\" data-y-decades=\"%d %d\">\n",
		RW, RH, RW, RH, PX, PY, PW, PH, ax.x0, ax.x1, ax.y0, ax.y1);
	axis_labels(f, &ax);
	/* the roof: bandwidth x intensity from the left edge (or where it enters the plot) to
	 * the ridge, then the compute ceiling to the right edge */
	sx = ax.y0 - lbw > ax.x0 ? ax.y0 - lbw : ax.x0;
	fprintf(f, "<polyline class=\"roof\" fill=\"none\" stroke=\"#222\" stroke-width=\"2\" "
		   "data-dtype=\"%s\" data-peak-tflops=\"%g\" data-peak-tbps=\"%g\" points=\"%.2f,%.2f "
		   "%.2f,%.2f %.2f,%.2f\"><title>roof: %g TB/s, %s %g TFLOP/s, ridge %.3g FLOP/byte"
		   "</title></polyline>\n", td_dtype_name((enum td_dtype)dtype), peak, tbps,
		px_x(&ax, sx), px_y(&ax, sx + lbw), px_x(&ax, lridge), px_y(&ax, lpeak),
		px_x(&ax, ax.x1), px_y(&ax, lpeak), tbps, td_dtype_name((enum td_dtype)dtype), peak,
		pow(10, lridge));
	fputs("<g class=\"ops\">\n", f);
	for (k = 0; k < n; k++) {
		const union td_cell *row = td_table_cell(ops, p[k].row, 0);
		const char *bound = row[cb].s ? td_table_text(ops, row[cb].s) : "";
		fprintf(f, "<circle class=\"op\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\" "
			   "fill-opacity=\"0.75\" stroke=\"#222\" stroke-width=\"0.5\"><title>",
			px_x(&ax, p[k].lx), px_y(&ax, p[k].ly),
			*bound == 'c' ? "#0072B2" : "#D55E00");
		text(f, td_table_text(ops, row[cn].s));
		fprintf(f, ": %lld call%s, %.4g FLOP/byte, %.4g TFLOP/s", (long long)row[cc].i,
			row[cc].i == 1 ? "" : "s", pow(10, p[k].lx), pow(10, p[k].ly));
		if (*bound)
			fprintf(f, ", %s-bound", bound);
		if (isfinite(row[cp].f))
			fprintf(f, ", %.1f%% of the roof", 100.0 * row[cp].f);
		fputs("</title></circle>\n", f);
	}
	fputs("</g>\n</svg>\n", f);
	free(p);
}
