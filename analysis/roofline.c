/* SPDX-License-Identifier: MIT */
#include "analysis/roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/flops.h"
#include "analysis/internal.h"

#define MAXIN TD_DIMS_MAX_IN

/* an op's inputs: sizes, and per input its element size (0: not a tensor) and dtype */
struct args {
	struct td_dims d;
	int esz[MAXIN];
	int dt[MAXIN];
};

/* Kineto's "Input type" names: element size and dtype (-1 not a float) */
static int elem_of(const char *ty, int *dt)
{
	static const struct {
		const char *name;
		int size, dt;
	} types[] = {
		{"float", 4, TD_DT_FP32}, {"double", 8, TD_DT_FP64}, {"c10::Half", 2, TD_DT_FP16},
		{"c10::BFloat16", 2, TD_DT_BF16}, {"long int", 8, -1}, {"long", 8, -1},
		{"int", 4, -1}, {"short int", 2, -1}, {"short", 2, -1}, {"signed char", 1, -1},
		{"unsigned char", 1, -1}, {"bool", 1, -1}, {"c10::complex<float>", 8, -1},
		{"c10::complex<double>", 16, -1}, {"unsigned int", 4, -1},
	};
	size_t i;

	*dt = -1;
	if (!strncmp(ty, "c10::Float8", 11)) {
		*dt = TD_DT_FP8;
		return 1;
	}
	if (!strncmp(ty, "c10::Float4", 11)) { /* two to a byte */
		*dt = TD_DT_FP4;
		return 1;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(ty, types[i].name)) {
			*dt = types[i].dt;
			return types[i].size;
		}
	return 0;
}

/* ["float", "", "Scalar"]: each input's element size and dtype */
static void read_types(const char *s, struct args *a)
{
	int k = 0;
	char ty[40];

	for (; s && *s && k < MAXIN; s++) {
		size_t n = 0;
		if (*s != '"')
			continue;
		for (s++; *s && *s != '"'; s++)
			if (n + 1 < sizeof(ty))
				ty[n++] = *s;
		ty[n] = 0;
		a->esz[k] = elem_of(ty, &a->dt[k]);
		k++;
		if (!*s)
			break;
	}
}

/* The i-th string of concrete inputs, copied into buf ("" when absent) */
static const char *concrete_str(const char *s, int i, char *buf, size_t cap)
{
	int k = 0;

	buf[0] = 0;
	for (; s && *s; s++) {
		size_t n = 0;
		if (*s != '"')
			continue;
		for (s++; *s && *s != '"'; s++)
			if (k == i && n + 1 < cap)
				buf[n++] = *s;
		if (k == i) {
			buf[n] = 0;
			break;
		}
		k++;
		if (!*s)
			break;
	}
	return buf;
}

static int is_tensor(const struct args *a, int i)
{
	return i < a->d.n && a->d.rank[i] >= 0 && a->esz[i] > 0;
}

static int64_t numel(const struct args *a, int i)
{
	int64_t p = 1;
	int k;

	for (k = 0; k < a->d.rank[i]; k++)
		p = td_sat_mul(p, a->d.d[i][k]);
	return p;
}

static int64_t tbytes(const struct args *a, int i)
{
	return is_tensor(a, i) ? td_sat_mul(numel(a, i), a->esz[i]) : 0;
}

static int64_t all_bytes(const struct args *a)
{
	int64_t b = 0;
	int i;

	for (i = 0; i < a->d.n && i < MAXIN; i++)
		b = td_sat_add(b, tbytes(a, i));
	return b;
}

/* the elements of the tensor inputs broadcast together */
static int64_t broadcast_numel(const struct args *a)
{
	int64_t out[TD_DIMS_MAX_RANK] = {0};
	int r = 0, i, k;

	for (i = 0; i < a->d.n && i < MAXIN; i++) {
		if (!is_tensor(a, i))
			continue;
		if (a->d.rank[i] > r)
			r = a->d.rank[i];
		for (k = 0; k < a->d.rank[i]; k++) { /* right-aligned */
			int64_t v = a->d.d[i][a->d.rank[i] - 1 - k];
			if (v > out[k])
				out[k] = v;
		}
	}
	{
		int64_t p = 1;
		for (k = 0; k < r; k++)
			p = td_sat_mul(p, out[k]);
		return p;
	}
}

static const char *const norm_ops[] = {
	"layer_norm", "native_layer_norm", "native_layer_norm_backward", "batch_norm",
	"native_batch_norm", "native_batch_norm_backward", "_batch_norm_impl_index",
	"cudnn_batch_norm", "cudnn_batch_norm_backward", "miopen_batch_norm",
	"miopen_batch_norm_backward", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
	"group_norm", "native_group_norm", "native_group_norm_backward", "rms_norm", "_fused_rms_norm",
	"instance_norm", NULL,
};
static const char *const softmax_ops[] = {
	"softmax", "_softmax", "log_softmax", "_log_softmax", "_softmax_backward_data",
	"_log_softmax_backward_data", NULL,
};
static const char *const elementwise_ops[] = {
	"add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "neg", "abs", "exp", "exp_",
	"log", "sqrt", "sqrt_", "rsqrt", "rsqrt_", "reciprocal", "pow", "pow_", "square", "sin", "cos",
	"erf", "relu", "relu_", "gelu", "gelu_", "silu", "silu_", "sigmoid", "sigmoid_", "tanh",
	"tanh_", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "clamp", "clamp_", "clamp_min",
	"clamp_min_", "clamp_max", "where", "maximum", "minimum", "masked_fill", "masked_fill_",
	"threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward",
	"hardtanh_backward", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp", "lerp_",
	"mse_loss", "mse_loss_backward", "native_dropout", "native_dropout_backward", "eq", "ne",
	"gt", "lt", "ge", "le", "logical_not", "bitwise_and", "bitwise_or", NULL,
};
static const char *const reduction_ops[] = {
	"sum", "mean", "amax", "amin", "argmax", "argmin", "norm", "linalg_vector_norm", "var",
	"std", "prod", "any", "all", "max", "min", NULL,
};
static const char *const attention_ops[] = {
	"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
	"_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", NULL,
};
static const char *const attention_bwd_ops[] = {
	"_scaled_dot_product_flash_attention_backward",
	"_scaled_dot_product_efficient_attention_backward",
	"_scaled_dot_product_cudnn_attention_backward", NULL,
};
static const char *const conv_ops[] = {"conv1d", "conv2d", "conv3d", "convolution", "_convolution",
				       NULL};

static int in_list(const char *const *l, const char *n)
{
	for (; *l; l++)
		if (!strcmp(*l, n))
			return 1;
	return 0;
}

/* the largest of 64, 32, ..., 1 dividing a, b and c */
static int align_of(int64_t a, int64_t b, int64_t c)
{
	int p;

	for (p = 64; p > 1; p /= 2)
		if (!(a % p) && !(b % p) && !(c % p))
			return p;
	return 1;
}

/* 2mkn for a [.., m, k] x [k, n] product, batched over the leading dims of a */
static int gemm(const struct args *a, int x, int y, int bias, struct td_op_cost *o)
{
	int ra, rb;
	int64_t k, n, rows;

	if (!is_tensor(a, x) || !is_tensor(a, y))
		return 0;
	ra = a->d.rank[x];
	rb = a->d.rank[y];
	if (ra < 1 || rb < 1 || (rb > 2 && rb != ra))
		return 0;
	k = a->d.d[x][ra - 1];
	if (k <= 0 || a->d.d[y][rb >= 2 ? rb - 2 : 0] != k)
		return 0;
	n = rb >= 2 ? a->d.d[y][rb - 1] : 1;
	rows = numel(a, x) / k; /* every row of a (batches included) against b */
	o->flops = td_sat_mul(2, td_sat_mul(td_sat_mul(rows, k), n));
	o->bytes = td_sat_add(td_sat_add(tbytes(a, x), tbytes(a, y)), bias >= 0 ? tbytes(a, bias) : 0);
	o->bytes = td_sat_add(o->bytes, td_sat_mul(td_sat_mul(rows, n), a->esz[x]));
	o->cls = TD_OPC_GEMM;
	o->align = align_of(ra >= 2 ? a->d.d[x][ra - 2] : 64, k, rb >= 2 ? n : 64);
	return 1;
}

/* linear: input [.., k], weight [n, k], bias [n] */
static int linear(const struct args *a, struct td_op_cost *o)
{
	int64_t k, n, rows;

	if (!is_tensor(a, 0) || !is_tensor(a, 1) || a->d.rank[1] != 2 || a->d.rank[0] < 1)
		return 0;
	k = a->d.d[0][a->d.rank[0] - 1];
	n = a->d.d[1][0];
	if (k <= 0 || a->d.d[1][1] != k)
		return 0;
	rows = numel(a, 0) / k;
	o->flops = td_sat_mul(2, td_sat_mul(td_sat_mul(rows, k), n));
	o->bytes = td_sat_add(all_bytes(a), td_sat_mul(td_sat_mul(rows, n), a->esz[0]));
	o->cls = TD_OPC_GEMM;
	o->align = align_of(rows, k, n);
	return 1;
}

/* a convolution's FLOPs for n images, k output channels, weight w (input wi), the output's
 * spatial sizes osp (sd of them) */
static int64_t conv_flops(const struct args *a, int wi, int64_t n, int64_t k, const int64_t *osp,
			  int sd)
{
	int64_t f = td_sat_mul(td_sat_mul(2, n), td_sat_mul(k, a->d.d[wi][1]));
	int i;

	for (i = 0; i < sd; i++)
		f = td_sat_mul(td_sat_mul(f, a->d.d[wi][2 + i]), osp[i]);
	return f;
}

static int conv(const struct args *a, const char *concrete, struct td_op_cost *o)
{
	int64_t st[3], pad[3], dil[3], osp[3], out;
	char b[16];
	int sd, i;

	if (!is_tensor(a, 0) || !is_tensor(a, 1) || a->d.rank[0] != a->d.rank[1] ||
	    a->d.rank[0] < 3 || a->d.rank[0] > 5)
		return 0;
	sd = a->d.rank[0] - 2;
	if (td_concrete_ints(concrete, 3, st, 3) != sd || td_concrete_ints(concrete, 4, pad, 3) != sd ||
	    td_concrete_ints(concrete, 5, dil, 3) != sd)
		return 0;
	if (!strcmp(concrete_str(concrete, 6, b, sizeof(b)), "True")) /* transposed */
		return 0;
	out = td_sat_mul(a->d.d[0][0], a->d.d[1][0]);
	for (i = 0; i < sd; i++) {
		if (st[i] <= 0)
			return 0;
		osp[i] = (a->d.d[0][2 + i] + 2 * pad[i] - dil[i] * (a->d.d[1][2 + i] - 1) - 1) / st[i]
			+ 1;
		if (osp[i] <= 0)
			return 0;
		out = td_sat_mul(out, osp[i]);
	}
	o->flops = conv_flops(a, 1, a->d.d[0][0], a->d.d[1][0], osp, sd);
	o->bytes = td_sat_add(all_bytes(a), td_sat_mul(out, a->esz[0]));
	o->cls = TD_OPC_CONV;
	o->align = align_of(a->d.d[1][0], a->d.d[1][1], 64);
	return 1;
}

/* convolution_backward (grad_out, input, weight; output_mask at 10) or the legacy
 * cudnn_convolution_backward (input, grad_out, weight): once per gradient asked */
static int conv_backward(const struct args *a, int legacy, const char *concrete,
			 struct td_op_cost *o)
{
	int go = legacy ? 1 : 0, in = legacy ? 0 : 1, sd, grads = 0;
	char b[40];
	int64_t f;

	if (!is_tensor(a, go) || !is_tensor(a, in) || !is_tensor(a, 2) ||
	    a->d.rank[go] != a->d.rank[2] || a->d.rank[go] < 3 || a->d.rank[go] > 5)
		return 0;
	sd = a->d.rank[go] - 2;
	f = conv_flops(a, 2, a->d.d[go][0], a->d.d[go][1], &a->d.d[go][2], sd);
	o->bytes = all_bytes(a);
	concrete_str(concrete, 10, b, sizeof(b));
	if (legacy || !b[0] || !strncmp(b, "[True", 5)) {
		grads++;
		o->bytes = td_sat_add(o->bytes, tbytes(a, in));
	}
	if (legacy || !b[0] || strstr(b, ", True") == strchr(b, ',')) {
		grads++;
		o->bytes = td_sat_add(o->bytes, tbytes(a, 2));
	}
	o->flops = td_sat_mul(f, grads);
	o->cls = TD_OPC_CONV;
	o->align = align_of(a->d.d[2][0], a->d.d[2][1], 64);
	return 1;
}

/* q, k, v at qi..qi+2, [b, h, s, d] */
static int attention(const struct args *a, int qi, int backward, struct td_op_cost *o)
{
	const int64_t *q, *k, *v;
	int64_t bhsk;
	int i;

	for (i = qi; i < qi + 3; i++)
		if (!is_tensor(a, i) || a->d.rank[i] != 4)
			return 0;
	q = a->d.d[qi];
	k = a->d.d[qi + 1];
	v = a->d.d[qi + 2];
	if (q[3] != k[3] || k[2] != v[2])
		return 0;
	bhsk = td_sat_mul(td_sat_mul(q[0], q[1]), td_sat_mul(q[2], k[2]));
	o->flops = td_sat_mul(2, td_sat_mul(bhsk, backward ? 3 * q[3] + 2 * v[3] : q[3] + v[3]));
	o->bytes = all_bytes(a);
	if (backward) /* grad q, k, v */
		o->bytes = td_sat_add(o->bytes, td_sat_add(tbytes(a, qi), td_sat_add(tbytes(a, qi + 1),
										tbytes(a, qi + 2))));
	else
		o->bytes = td_sat_add(o->bytes, td_sat_mul(td_sat_mul(td_sat_mul(q[0], q[1]), q[2]),
							   td_sat_mul(v[3], a->esz[qi])));
	o->cls = TD_OPC_ATTENTION;
	return 1;
}

int td_op_cost(const char *name, const char *dims, const char *types, const char *concrete,
	       struct td_op_cost *out)
{
	struct args a;
	struct td_op_cost o = {0, 0, -1, TD_OPC_NONE, 0, 0, 0, 0};
	const char *n;
	int ok = 0, i;

	if (!name || !dims || !types || strncmp(name, "aten::", 6))
		return 0;
	n = name + 6;
	memset(&a, 0, sizeof(a));
	if (!td_dims_parse(dims, &a.d))
		return 0;
	read_types(types, &a);
	for (i = 0; i < a.d.n && i < MAXIN && o.dtype < 0; i++)
		if (is_tensor(&a, i))
			o.dtype = a.dt[i];
	if (!strcmp(n, "mm") || !strcmp(n, "matmul"))
		ok = gemm(&a, 0, 1, -1, &o);
	else if (!strcmp(n, "bmm"))
		ok = a.d.rank[0] == 3 && gemm(&a, 0, 1, -1, &o);
	else if (!strcmp(n, "addmm") || !strcmp(n, "baddbmm"))
		ok = gemm(&a, 1, 2, 0, &o);
	else if (!strcmp(n, "linear"))
		ok = linear(&a, &o);
	else if (in_list(conv_ops, n))
		ok = conv(&a, concrete, &o);
	else if (!strcmp(n, "convolution_backward") || !strcmp(n, "cudnn_convolution_backward"))
		ok = conv_backward(&a, n[0] == 'c' && n[1] == 'u', concrete, &o);
	else if (in_list(attention_ops, n))
		ok = attention(&a, 0, 0, &o);
	else if (in_list(attention_bwd_ops, n))
		ok = attention(&a, 1, 1, &o);
	else if (!is_tensor(&a, 0))
		ok = 0;
	else if (in_list(norm_ops, n) || in_list(softmax_ops, n)) {
		o.flops = td_sat_mul(5, numel(&a, 0));
		o.bytes = td_sat_add(all_bytes(&a), tbytes(&a, 0));
		o.out_bytes = tbytes(&a, 0);
		o.out_elems = o.in_elems = numel(&a, 0);
		o.cls = in_list(norm_ops, n) ? TD_OPC_NORM : TD_OPC_SOFTMAX;
		ok = 1;
	} else if (!strcmp(n, "copy_") || !strcmp(n, "fill_") || !strcmp(n, "zero_")) {
		o.bytes = n[0] == 'c' ? all_bytes(&a) : tbytes(&a, 0); /* a fill only writes */
		o.out_bytes = tbytes(&a, 0);
		o.out_elems = numel(&a, 0);
		o.in_elems = n[0] == 'c' && is_tensor(&a, 1) ? numel(&a, 1) : 0;
		o.cls = TD_OPC_COPY;
		ok = 1;
	} else if (in_list(elementwise_ops, n)) {
		int64_t f = td_op_flops(name, dims, concrete); /* PyTorch's count where it has one */
		int64_t elems = broadcast_numel(&a);
		o.flops = f >= 0 ? f : elems;
		o.bytes = td_sat_add(all_bytes(&a), td_sat_mul(elems, a.esz[0]));
		o.out_bytes = td_sat_mul(elems, a.esz[0]);
		o.out_elems = elems;
		o.in_elems = numel(&a, 0);
		o.cls = TD_OPC_ELEMENTWISE;
		ok = 1;
	} else if (in_list(reduction_ops, n)) {
		o.flops = numel(&a, 0);
		o.bytes = tbytes(&a, 0);
		o.cls = TD_OPC_REDUCTION;
		ok = 1;
	}
	if (!ok)
		return 0;
	*out = o;
	return 1;
}

int td_event_cost(const struct td_trace *t, uint32_t e, struct td_op_cost *out)
{
	const struct td_event *ev = td_trace_ev(t, e);
	const struct td_op_args *oa;

	if ((ev->kind != TD_K_CPU_OP && ev->kind != TD_K_USER_ANNOTATION) ||
	    !(oa = td_trace_op_args(t, e)))
		return 0;
	if (oa->kflop >= 0 || oa->kbytes >= 0) { /* Inductor's own figures */
		struct td_op_cost o = {0, 0, -1, TD_OPC_TRITON, 0, 0, 0, 0};
		struct args a;
		int i;
		o.flops = oa->kflop > 0 ? oa->kflop : 0;
		o.bytes = oa->kbytes > 0 ? oa->kbytes : 0;
		if (!o.flops && !o.bytes)
			return 0;
		memset(&a, 0, sizeof(a));
		if (oa->types)
			read_types(td_trace_name(t, oa->types), &a);
		for (i = 0; i < MAXIN && o.dtype < 0; i++)
			o.dtype = a.dt[i] >= 0 && a.esz[i] ? a.dt[i] : -1;
		*out = o;
		return 1;
	}
	if (ev->kind != TD_K_CPU_OP || !oa->dims || !oa->types)
		return 0;
	return td_op_cost(td_trace_name(t, ev->name), td_trace_name(t, oa->dims),
			  td_trace_name(t, oa->types),
			  oa->concrete ? td_trace_name(t, oa->concrete) : NULL, out);
}

const char *td_op_class_name(enum td_op_class c)
{
	static const char *const names[] = {"", "gemm", "conv", "attention", "norm", "softmax",
					    "elementwise", "reduction", "copy", "triton"};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "";
}

double td_roof_peak(const struct td_peaks *pk, int dtype)
{
	double p;

	if (dtype < 0 || dtype >= TD_DT_COUNT)
		dtype = TD_DT_FP32;
	p = pk->tflops[dtype];
	if (p <= 0 && dtype == TD_DT_BF16)
		p = pk->tflops[TD_DT_FP16];
	if (p <= 0 && dtype == TD_DT_FP16)
		p = pk->tflops[TD_DT_BF16];
	return p > 0 ? p : pk->tflops[TD_DT_FP32];
}

void td_roof_eval(const struct td_peaks *pk, int dtype, int64_t flops, int64_t bytes,
		  int64_t ns, struct td_roof *out)
{
	double tc = -1, tm = -1, peak = td_roof_peak(pk, dtype);

	memset(out, 0, sizeof(*out));
	out->pct = NAN;
	out->roof_ns = -1;
	if (ns > 0) {
		out->tflops = (double)flops / (double)ns / 1e3; /* FLOP/ns = GFLOP/s */
		out->tbps = (double)bytes / (double)ns / 1e3;
	}
	out->intensity = bytes > 0 ? (double)flops / (double)bytes : 0;
	if (flops > 0 && peak > 0)
		tc = (double)flops / peak / 1e3; /* ns at the peak: TFLOP/s = 1e3 FLOP/ns */
	if (bytes > 0 && pk->tbps > 0)
		tm = (double)bytes / pk->tbps / 1e3;
	if ((tc < 0 && tm < 0) || !isfinite(tc) || !isfinite(tm) || tc > 9e18 || tm > 9e18)
		return;
	out->peak_tflops = flops > 0 ? peak : 0;
	out->bound = tc >= tm ? TD_BOUND_COMPUTE : TD_BOUND_MEMORY;
	out->roof_ns = (int64_t)llround(tc >= tm ? tc : tm);
	if (ns > 0)
		out->pct = (tc >= tm ? tc : tm) / (double)ns;
}

const char *td_bound_name(enum td_bound b)
{
	return b == TD_BOUND_COMPUTE ? "compute" : b == TD_BOUND_MEMORY ? "memory" : "";
}

static void mfu(const struct td_analysis *a, struct td_mfu *out);

/* td_event_cost of the CPU ops whose cost is their name's and args' (no Inductor figures),
 * remembered by those: a step's ops repeat in every step, their args parsed once */
#define COST_MEMO 4096
struct cost_memo {
	uint32_t key[4];
	int state;                 /* 0 empty, 1 no cost, 2 cost */
	struct td_op_cost c;
};

static int memo_cost(const struct td_trace *t, uint32_t e, struct cost_memo *m, struct td_op_cost *c)
{
	const struct td_event *ev = td_trace_ev(t, e);
	const struct td_op_args *oa;
	uint32_t k[4], h;
	struct cost_memo *x;

	if (ev->kind != TD_K_CPU_OP || !(oa = td_trace_op_args(t, e)) || oa->kflop >= 0 ||
	    oa->kbytes >= 0)
		return td_event_cost(t, e, c);
	k[0] = ev->name;
	k[1] = oa->dims;
	k[2] = oa->types;
	k[3] = oa->concrete;
	h = (k[0] * 2654435761u) ^ (k[1] * 2246822519u) ^ (k[2] * 3266489917u) ^ (k[3] * 668265263u);
	x = &m[(h ^ (h >> 15)) % COST_MEMO];
	if (!x->state || memcmp(x->key, k, sizeof(k))) {
		memcpy(x->key, k, sizeof(k));
		x->state = td_event_cost(t, e, &x->c) ? 2 : 1;
	}
	if (x->state == 2)
		*c = x->c;
	return x->state == 2;
}

void td_an_mfu(const struct td_analysis *a, struct td_mfu *out)
{
	if (!a->mfu) { /* a pass over the host events: once, its result kept with the analysis */
		struct td_mfu *m = td_malloc(sizeof(*m));
		mfu(a, m);
		((struct td_analysis *)a)->mfu = m;
	}
	*out = *a->mfu;
}

static void mfu(const struct td_analysis *a, struct td_mfu *out)
{
	const struct td_trace *t = a->t;
	struct td_track_cursor cur = {0, 0, 0};
	struct td_op_cost c;
	int64_t ws = INT64_MAX, we = INT64_MIN, by_dtype[TD_DT_COUNT] = {0}, costed_end = INT64_MIN;
	struct cost_memo *memo = td_calloc(COST_MEMO, sizeof(*memo));
	uint32_t e, track = TD_NONE;
	size_t d, sj;
	int best = -1;
	uint8_t *tf32;
	struct td_vec costed;

	memset(out, 0, sizeof(*out));
	out->dtype = -1;
	out->mfu = NAN;
	if (a->has_steps && a->nsteps) {
		ws = a->steps_start;
		we = a->steps_end;
		out->steps = a->nsteps;
	}
	for (d = 0; !out->steps && d < a->ndev; d++) {
		if (a->dev[d].win_start < ws)
			ws = a->dev[d].win_start;
		if (a->dev[d].win_end > we)
			we = a->dev[d].win_end;
	}
	if (we <= ws) {
		free(memo);
		return;
	}
	out->window_ns = we - ws;
	tf32 = td_an_tf32_ops(a, ws, we); /* FP32 ops whose kernels run TF32 */
	td_vec_init(&costed, sizeof(struct td_costed));
	/* the CPU ops, parents first: one inside an op already costed (it began before that
	 * op's end, on its thread: ops nest) is part of that op's cost */
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		int dt;
		if (ev->kind != TD_K_CPU_OP)
			continue;
		if (td_trace_track_at(t, &cur, e) != track) {
			track = cur.track;
			costed_end = INT64_MIN;
		}
		if (ev->ts < costed_end)
			continue;
		if (ev->ts < ws || ev->ts >= we || !memo_cost(t, e, memo, &c))
			continue;
		costed_end = td_ev_end(ev);
		*(struct td_costed *)td_vec_push(&costed) = (struct td_costed){track, ev->ts,
										costed_end};
		out->flops = td_sat_add(out->flops, c.flops);
		dt = c.dtype >= 0 ? c.dtype : TD_DT_FP32;
		if (dt == TD_DT_FP32 && tf32 && tf32[e])
			dt = TD_DT_TF32;
		by_dtype[dt] = td_sat_add(by_dtype[dt], c.flops);
	}
	td_an_flops_cover(a, ws, we, costed.data, costed.len, &out->known_ns, &out->kernel_ns,
			  &out->graph_ns);
	free(tf32);
	td_vec_free(&costed);
	free(memo);
	for (d = 0; d < TD_DT_COUNT; d++)
		if (by_dtype[d] > 0 && (best < 0 || by_dtype[d] > by_dtype[best]))
			best = (int)d;
	/* the GEMM kernels' own precision where narrower (fixes/context.c: fp8 / fp4 kernels
	 * under bf16 ops) and the device has its peak */
	if (best >= 0 && a->ctx.gemm_dtype > best && a->peaks.tflops[a->ctx.gemm_dtype] > 0)
		best = a->ctx.gemm_dtype;
	out->dtype = best;
	out->achieved_tflops = (double)out->flops / (double)out->window_ns / 1e3;
	if (best < 0 || !a->ndev)
		return;
	out->peak_tflops = td_roof_peak(&a->peaks, best) * (double)a->ndev;
	if (out->peak_tflops > 0)
		out->mfu = out->achieved_tflops / out->peak_tflops;
}

void td_cost_finder_init(struct td_cost_finder *f, const struct td_trace *t)
{
	memset(f, 0, sizeof(*f));
	f->memo = td_calloc(t->events.len ? t->events.len : 1, sizeof(*f->memo));
}

uint32_t td_cost_find(struct td_cost_finder *f, const struct td_trace *t, uint32_t e)
{
	struct td_op_cost oc;
	uint32_t p;

	for (p = e; p != TD_NONE; p = td_trace_parent(t, p)) {
		if (f->memo[p])
			break;
		if (!td_event_cost(t, p, &oc))
			continue;
		if (f->n == f->cap) {
			f->cap = f->cap ? 2 * f->cap : 64;
			f->cost = td_realloc(f->cost, f->cap * sizeof(*f->cost));
			f->ev = td_realloc(f->ev, f->cap * sizeof(*f->ev));
		}
		f->cost[f->n] = oc;
		f->ev[f->n] = p;
		f->memo[p] = (uint32_t)++f->n;
		break;
	}
	if (p == TD_NONE) {
		f->memo[e] = UINT32_MAX;
		return UINT32_MAX;
	}
	if (p != e)
		f->memo[e] = f->memo[p];
	return f->memo[p] == UINT32_MAX ? UINT32_MAX : f->memo[p] - 1;
}

void td_cost_finder_free(struct td_cost_finder *f)
{
	free(f->memo);
	free(f->cost);
	free(f->ev);
	memset(f, 0, sizeof(*f));
}

static int misaligned(const struct td_op_cost *c)
{
	if (c->cls != TD_OPC_GEMM && c->cls != TD_OPC_CONV)
		return 0;
	return c->align < (c->dtype == TD_DT_FP8 ? 16 : c->dtype == TD_DT_BF16 ||
			   c->dtype == TD_DT_FP16 ? 8 : 4);
}

#define LOST_MORE(x, y) ((x)->lost_ns > (y)->lost_ns || \
			 ((x)->lost_ns == (y)->lost_ns && (x)->name < (y)->name))
TD_DEFINE_SORT(sort_lost, struct td_roof_op, LOST_MORE)

size_t td_an_roof_ops(const struct td_analysis *a, size_t d, struct td_roof_op **out)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_cost_finder f;
	struct td_dev_events it;
	int64_t *kns;
	uint32_t *row_of_name, e;
	struct td_roof_op *rows = NULL;
	size_t n = 0, cap = 0, i;

	*out = NULL;
	if (a->peaks.tbps <= 0)
		return 0;
	td_cost_finder_init(&f, t);
	kns = NULL;
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		uint32_t l, c;
		size_t old = f.n;
		if (!td_kind_is_gpu_op(ev->kind) || ev->ts < dv->win_start || ev->ts >= dv->win_end ||
		    (l = td_trace_launch(t, e)) == TD_NONE ||
		    (c = td_cost_find(&f, t, l)) == UINT32_MAX)
			continue;
		if (f.n != old) {
			kns = td_realloc(kns, f.cap * sizeof(*kns));
			kns[c] = 0;
		}
		kns[c] += td_ev_dur(ev);
	}
	row_of_name = td_calloc(t->names.count + 1, sizeof(*row_of_name));
	for (i = 0; i < f.n; i++) { /* by op name */
		const struct td_op_cost *c = &f.cost[i];
		uint32_t nm = td_trace_ev(t, f.ev[i])->name;
		struct td_roof_op *r;
		if (!row_of_name[nm]) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				rows = td_realloc(rows, cap * sizeof(*rows));
			}
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].name = nm;
			rows[n].dtype = c->dtype;
			rows[n].cls = c->cls;
			row_of_name[nm] = (uint32_t)++n;
		}
		r = &rows[row_of_name[nm] - 1];
		r->calls++;
		r->misaligned += (uint64_t)misaligned(c);
		r->flops = td_sat_add(r->flops, c->flops);
		r->bytes = td_sat_add(r->bytes, c->bytes);
		r->ns = td_sat_add(r->ns, kns[i]);
	}
	for (i = 0; i < n; i++) {
		td_roof_eval(&a->peaks, rows[i].dtype, rows[i].flops, rows[i].bytes, rows[i].ns,
			     &rows[i].roof);
		rows[i].lost_ns = rows[i].roof.roof_ns >= 0 && rows[i].ns > rows[i].roof.roof_ns
			? rows[i].ns - rows[i].roof.roof_ns : 0;
	}
	sort_lost(rows, n);
	free(row_of_name);
	free(kns);
	td_cost_finder_free(&f);
	*out = rows;
	return n;
}
