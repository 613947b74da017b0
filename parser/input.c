/* SPDX-License-Identifier: MIT */
#include "parser/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#ifdef TD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "common/alloc.h"
#include "common/error.h"
#include "parser/zframes.h"

#define RAW_CAP (256 * 1024)

struct td_input {
	int fd, own_fd;
	enum td_compression comp;
	unsigned char *raw;           /* compressed bytes */
	size_t raw_len, raw_pos;
	int raw_eof;
	unsigned long long raw_off;   /* compressed bytes consumed */
	z_stream z;
	int z_init, z_end;            /* z_end: the last member ended cleanly */
#ifdef TD_HAVE_ISAL
	struct inflate_state *is;     /* ISA-L's inflate, 3-4x zlib's (gzip input) */
#endif
	ZSTD_DCtx *zd;
	size_t zret;                  /* last ZSTD_decompressStream result: 0 = frame complete */
	struct td_zframes *zf;        /* frames decoded on threads (td_input_set_threads) */
	const unsigned char *zout;    /* its output not yet handed out */
	size_t zout_len;
	unsigned char *pend;          /* after it: compressed bytes read, for fill() */
	size_t pend_len, pend_pos;
	unsigned long long pend_off;  /* stream offset of pend[0] */
	int truncated;
	unsigned long long out;       /* uncompressed bytes handed out */
	unsigned long long garbage;   /* bytes after the gzip stream, ignored */
	unsigned char *back;          /* uncompressed bytes given back (td_input_unread) */
	size_t back_len, back_pos;
};

/* the limits on what one input may decompress to (td_input_set_limits) */
static unsigned long long max_total, max_ratio = TD_INPUT_RATIO_DEFAULT;

void td_input_set_limits(unsigned long long total, unsigned long long ratio)
{
	max_total = total;
	max_ratio = ratio;
}

static int fill(struct td_input *in, struct td_error *err)
{
	ssize_t n;

	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	if (in->pend_pos < in->pend_len) {
		/* the frame decoders' bytes, in the pieces a sequential read would have had:
		 * up to the next multiple of RAW_CAP, then RAW_CAP at a time */
		unsigned long long at = in->pend_off + in->pend_pos;
		size_t k = RAW_CAP - (size_t)(at % RAW_CAP);
		if (k > in->pend_len - in->pend_pos)
			k = in->pend_len - in->pend_pos;
		memcpy(in->raw, in->pend + in->pend_pos, k);
		in->pend_pos += k;
		in->raw_len = k;
		in->raw_pos = 0;
		if (in->pend_pos == in->pend_len) {
			free(in->pend);
			in->pend = NULL;
			in->pend_len = in->pend_pos = 0;
		}
		return 0;
	}
	do
		n = read(in->fd, in->raw, RAW_CAP);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return td_error_set(err, TD_EIO, "read error: %s", strerror(errno));
	in->raw_len = (size_t)n;
	in->raw_pos = 0;
	if (n == 0)
		in->raw_eof = 1;
	return 0;
}

int td_input_open(const char *path, struct td_input **out, struct td_error *err)
{
	struct td_input *in = td_calloc(1, sizeof(*in));

	*out = NULL;
	if (strcmp(path, "-") == 0) {
		in->fd = 0;
	} else {
		in->fd = open(path, O_RDONLY);
		if (in->fd < 0) {
			int e = errno;
			free(in);
			return td_error_set(err, TD_EIO, "cannot open: %s", strerror(e));
		}
		in->own_fd = 1;
	}
	in->raw = td_malloc(RAW_CAP);
	/* gather up to 4 bytes for the magic (a pipe may deliver them one at a time) */
	while (in->raw_len < 4) {
		ssize_t n;
		do
			n = read(in->fd, in->raw + in->raw_len, RAW_CAP - in->raw_len);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			int e = errno;
			td_input_close(in);
			return td_error_set(err, TD_EIO, "read error: %s", strerror(e));
		}
		if (n == 0) {
			in->raw_eof = 1;
			break;
		}
		in->raw_len += (size_t)n;
	}
	if (in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		in->comp = TD_COMP_GZIP;
#ifdef TD_HAVE_ISAL
		in->is = td_malloc(sizeof(*in->is));
		isal_inflate_init(in->is);
		in->is->crc_flag = ISAL_GZIP;
		*out = in;
		return 0;
#endif
		if (inflateInit2(&in->z, 15 + 32) != Z_OK) {
			td_input_close(in);
			return td_error_set(err, TD_ENOMEM, "%s", "cannot start zlib");
		}
		in->z_init = 1;
	} else if (in->raw_len >= 4 && ((in->raw[0] == 0x28 && in->raw[1] == 0xb5 &&
					 in->raw[2] == 0x2f && in->raw[3] == 0xfd) ||
					/* a skippable frame first, as pzstd writes */
					((in->raw[0] & 0xf0) == 0x50 && in->raw[1] == 0x2a &&
					 in->raw[2] == 0x4d && in->raw[3] == 0x18))) {
		in->comp = TD_COMP_ZSTD;
		in->zd = ZSTD_createDCtx();
		/* windows up to 1 GiB (zstd --long=30); the default stops at 128 MiB */
		if (!in->zd || ZSTD_isError(ZSTD_DCtx_setParameter(in->zd, ZSTD_d_windowLogMax, 30))) {
			td_input_close(in);
			return td_error_set(err, TD_ENOMEM, "%s", "cannot start zstd");
		}
	}
	*out = in;
	return 0;
}

enum td_compression td_input_compression(const struct td_input *in)
{
	return in->comp;
}

int td_input_truncated(const struct td_input *in)
{
	return in->truncated;
}

unsigned long long td_input_raw_offset(const struct td_input *in)
{
	return in->zf ? td_zf_consumed(in->zf) : in->raw_off;
}

void td_input_set_threads(struct td_input *in, int threads)
{
	if (in->comp != TD_COMP_ZSTD || threads < 1 || in->zf || in->out || in->raw_off)
		return;
	in->zf = td_zf_start(threads, in->fd, RAW_CAP, in->raw + in->raw_pos,
			     in->raw_len - in->raw_pos, in->raw_eof);
	if (in->zf)
		in->raw_pos = in->raw_len = 0; /* those bytes are the decoders' now */
}

/* From the frame decoders: their output, then (TD_ZF_REST) the streaming decoder on the
 * bytes they leave. */
static ssize_t read_zstd_frames(struct td_input *in, unsigned char *buf, size_t cap,
				struct td_error *err)
{
	while (!in->zout_len) {
		ssize_t r = td_zf_next(in->zf, &in->zout, err);
		if (r == TD_ZF_REST) {
			td_zf_rest(in->zf, &in->pend, &in->pend_len, &in->pend_off);
			in->pend_pos = 0;
			in->raw_off = in->pend_off;
			in->raw_eof = 0; /* fill() serves pend, then reads on (0 at the end) */
			if (!in->pend_len) {
				free(in->pend);
				in->pend = NULL;
			}
			td_zf_free(in->zf);
			in->zf = NULL;
			return TD_ZF_REST; /* the caller reads on with the streaming decoder */
		}
		if (r <= 0) {
			if (r == 0) {
				in->raw_off = td_zf_consumed(in->zf);
				in->raw_eof = 1;
				in->zret = 0; /* every frame was whole */
			}
			return r;
		}
		in->zout_len = (size_t)r;
	}
	if (cap > in->zout_len)
		cap = in->zout_len;
	memcpy(buf, in->zout, cap);
	in->zout += cap;
	in->zout_len -= cap;
	return (ssize_t)cap;
}

static ssize_t read_plain(struct td_input *in, unsigned char *buf, size_t cap,
			  struct td_error *err)
{
	size_t n = in->raw_len - in->raw_pos;
	ssize_t r;

	if (n) { /* the bytes read to sniff the magic */
		if (n > cap)
			n = cap;
		memcpy(buf, in->raw + in->raw_pos, n);
		in->raw_pos += n;
		in->raw_off += n;
		return (ssize_t)n;
	}
	if (in->raw_eof)
		return 0;
	do
		r = read(in->fd, buf, cap);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return td_error_set(err, TD_EIO, "read error: %s", strerror(errno));
	if (r == 0)
		in->raw_eof = 1;
	in->raw_off += (unsigned long long)r;
	return r;
}

/* After a gzip member: 1 when another one starts at raw_pos (zero padding skipped), 0 when
 * the input ends there, or the bytes left are garbage (counted, ignored, as gzip -d does). */
static int next_member(struct td_input *in)
{
	while (in->raw_pos < in->raw_len && in->raw[in->raw_pos] == 0) {
		in->raw_pos++;
		in->raw_off++;
	}
	if (in->raw_pos == in->raw_len)
		return 0;
	if (in->raw[in->raw_pos] != 0x1f ||
	    (in->raw_pos + 1 < in->raw_len && in->raw[in->raw_pos + 1] != 0x8b)) {
		ssize_t r;
		in->garbage += in->raw_len - in->raw_pos;
		in->raw_off += in->raw_len - in->raw_pos;
		while ((r = read(in->fd, in->raw, RAW_CAP)) > 0)
			in->garbage += (unsigned long long)r;
		in->raw_eof = 1;
		in->raw_len = in->raw_pos = 0;
		return 0;
	}
	return 1;
}

/* The gzip inflater, ISA-L's or zlib's, as read_gzip drives it. */
enum { GZ_MORE, GZ_ENDED, GZ_STALL, GZ_BAD }; /* GZ_ENDED: a member ended; GZ_STALL: no
						 * progress (zlib's Z_BUF_ERROR), no error */

#ifdef TD_HAVE_ISAL
static inline void gz_begin(struct td_input *in, unsigned char *buf, size_t *cap)
{
	if (*cap > UINT32_MAX)
		*cap = UINT32_MAX;
	in->is->next_out = buf;
	in->is->avail_out = (uint32_t)*cap;
}

static inline size_t gz_out_left(const struct td_input *in)
{
	return in->is->avail_out;
}

static inline void gz_reset(struct td_input *in)
{
	isal_inflate_reset(in->is);
	in->is->crc_flag = ISAL_GZIP;
}

/* raw[raw_pos..raw_len) inflated (none left: what the inflater holds), raw_pos and raw_off
 * moved past what it took; on GZ_BAD, *why says what is wrong */
static inline int gz_inflate(struct td_input *in, const char **why)
{
	struct inflate_state *is = in->is;
	uint32_t before;
	int rc;

	is->next_in = in->raw + in->raw_pos;
	is->avail_in = (uint32_t)(in->raw_len - in->raw_pos);
	before = is->avail_in;
	rc = isal_inflate(is);
	in->raw_off += before - is->avail_in;
	in->raw_pos = in->raw_len - is->avail_in;
	if (rc < 0) {
		*why = rc == ISAL_INCORRECT_CHECKSUM ? "incorrect checksum"
			: rc == ISAL_INVALID_WRAPPER ? "incorrect header check" : "invalid deflate data";
		return GZ_BAD;
	}
	return is->block_state == ISAL_BLOCK_FINISH ? GZ_ENDED : GZ_MORE;
}
#else
static inline void gz_begin(struct td_input *in, unsigned char *buf, size_t *cap)
{
	in->z.next_out = buf;
	in->z.avail_out = (uInt)*cap;
}

static inline size_t gz_out_left(const struct td_input *in)
{
	return in->z.avail_out;
}

static inline void gz_reset(struct td_input *in)
{
	inflateReset(&in->z);
}

static inline int gz_inflate(struct td_input *in, const char **why)
{
	size_t before;
	int rc;

	in->z.next_in = in->raw + in->raw_pos;
	in->z.avail_in = (uInt)(in->raw_len - in->raw_pos);
	before = in->z.avail_in;
	rc = inflate(&in->z, Z_NO_FLUSH);
	in->raw_off += before - in->z.avail_in;
	in->raw_pos = in->raw_len - in->z.avail_in;
	if (rc == Z_STREAM_END)
		return GZ_ENDED;
	if (rc == Z_OK)
		return GZ_MORE;
	if (rc == Z_BUF_ERROR)
		return GZ_STALL;
	*why = in->z.msg ? in->z.msg : "inflate failed";
	return GZ_BAD;
}
#endif

static ssize_t read_gzip(struct td_input *in, unsigned char *buf, size_t cap,
			 struct td_error *err)
{
	const char *why = NULL;

	gz_begin(in, buf, &cap);
	while (gz_out_left(in) == cap) {
		int rc;

		if ((rc = fill(in, err)) < 0)
			return rc;
		if (in->raw_pos == in->raw_len) {
			if (!in->z_end) { /* end of input: what the inflater holds, then truncated */
				rc = gz_inflate(in, &why);
				if ((rc == GZ_MORE || rc == GZ_ENDED) && gz_out_left(in) < cap) {
					in->z_end = rc == GZ_ENDED;
					break;
				}
				in->truncated = 1;
			}
			break;
		}
		if (in->z_end) { /* another member (concatenated .gz), or the end */
			if (!next_member(in))
				break;
			gz_reset(in);
			in->z_end = 0;
		}
		rc = gz_inflate(in, &why);
		if (rc == GZ_BAD)
			return td_error_set(err, TD_EIO, "corrupt gzip data near compressed byte %llu: %s",
					    in->raw_off, why);
		if (rc == GZ_ENDED)
			in->z_end = 1;
	}
	return (ssize_t)(cap - gz_out_left(in));
}

static ssize_t read_zstd(struct td_input *in, unsigned char *buf, size_t cap,
			 struct td_error *err)
{
	ZSTD_outBuffer ob = {buf, cap, 0};

	while (ob.pos == 0) {
		ZSTD_inBuffer ib;
		int rc;

		if ((rc = fill(in, err)) < 0)
			return rc;
		if (in->raw_pos == in->raw_len) {
			/* flush what the decoder still holds, then check the last frame ended */
			ib.src = in->raw;
			ib.size = 0;
			ib.pos = 0;
			if (in->zret != 0) {
				size_t r = ZSTD_decompressStream(in->zd, &ob, &ib);
				if (ZSTD_isError(r))
					return td_error_set(err, TD_EIO, "corrupt zstd data near compressed "
							    "byte %llu: %s", in->raw_off,
							    ZSTD_getErrorName(r));
				in->zret = r;
				if (ob.pos)
					break;
				in->truncated = 1;
			}
			break;
		}
		ib.src = in->raw + in->raw_pos;
		ib.size = in->raw_len - in->raw_pos;
		ib.pos = 0;
		in->zret = ZSTD_decompressStream(in->zd, &ob, &ib);
		if (ZSTD_isError(in->zret) &&
		    ZSTD_getErrorCode(in->zret) == ZSTD_error_frameParameter_windowTooLarge)
			return td_error_set(err, TD_EIO, "the zstd frame needs a window over 1 GiB "
					    "(compressed with --long=31): re-compress it without --long, "
					    "or pipe it in: zstd -dc --long=31 FILE | tracedoc ... -");
		if (ZSTD_isError(in->zret))
			return td_error_set(err, TD_EIO, "corrupt zstd data near compressed byte %llu: %s",
					    in->raw_off + ib.pos, ZSTD_getErrorName(in->zret));
		in->raw_pos += ib.pos;
		in->raw_off += ib.pos;
	}
	return (ssize_t)ob.pos;
}

ssize_t td_input_read(struct td_input *in, void *buf, size_t cap, struct td_error *err)
{
	ssize_t n;
	unsigned long long raw;

	if (in->back_pos < in->back_len) { /* what a sniff read first, once more */
		size_t k = in->back_len - in->back_pos;
		if (k > cap)
			k = cap;
		memcpy(buf, in->back + in->back_pos, k);
		in->back_pos += k;
		if (in->back_pos == in->back_len) {
			free(in->back);
			in->back = NULL;
			in->back_len = in->back_pos = 0;
		}
		return (ssize_t)k;
	}
	switch (in->comp) {
	case TD_COMP_GZIP:
		n = read_gzip(in, buf, cap, err);
		break;
	case TD_COMP_ZSTD:
		n = in->zf ? read_zstd_frames(in, buf, cap, err) : TD_ZF_REST;
		if (n == TD_ZF_REST)
			n = read_zstd(in, buf, cap, err);
		break;
	default:
		n = read_plain(in, buf, cap, err);
		break;
	}
	if (n <= 0)
		return n;
	in->out += (unsigned long long)n;
	if (max_total && in->out > max_total)
		return td_error_set(err, TD_EFORMAT, "the input is more than --max-input-bytes "
				    "(%llu bytes)", max_total);
	/* a decompression bomb: far more out than in, past what real traces compress to */
	raw = td_input_raw_offset(in);
	if (in->comp != TD_COMP_NONE && max_ratio && in->out > TD_INPUT_RATIO_FROM &&
	    in->out / (raw ? raw : 1) > max_ratio)
		return td_error_set(err, TD_EFORMAT, "%llu bytes decompressed from %llu: more than "
				    "%llu times its size, likely a decompression bomb (--max-ratio 0 "
				    "reads it anyway)", in->out, raw, max_ratio);
	return n;
}

void td_input_unread(struct td_input *in, const void *buf, size_t len)
{
	if (!len)
		return;
	in->back = td_realloc(in->back, in->back_len - in->back_pos + len);
	memmove(in->back + len, in->back + in->back_pos, in->back_len - in->back_pos);
	memcpy(in->back, buf, len);
	in->back_len = in->back_len - in->back_pos + len;
	in->back_pos = 0;
}

unsigned long long td_input_garbage(const struct td_input *in)
{
	return in->garbage;
}

void td_input_close(struct td_input *in)
{
	if (!in)
		return;
	if (in->z_init)
		inflateEnd(&in->z);
#ifdef TD_HAVE_ISAL
	free(in->is);
#endif
	if (in->zd)
		ZSTD_freeDCtx(in->zd);
	td_zf_free(in->zf);
	free(in->pend);
	free(in->back);
	if (in->own_fd)
		close(in->fd);
	free(in->raw);
	free(in);
}
