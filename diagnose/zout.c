/* SPDX-License-Identifier: MIT */
#include "diagnose/zout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common/alloc.h"

enum { Z_PLAIN, Z_GZIP, Z_ZSTD };

struct zout {
	FILE *f;
	int kind, failed;
	z_stream zs;
	ZSTD_CCtx *zc;
	unsigned char out[1 << 16];
};

static int ends(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

struct zout *zout_open(FILE *f, const char *name)
{
	struct zout *z = td_calloc(1, sizeof(*z));

	z->f = f;
	z->kind = ends(name, ".gz") ? Z_GZIP : ends(name, ".zst") ? Z_ZSTD : Z_PLAIN;
	if (z->kind == Z_GZIP && deflateInit2(&z->zs, 6, Z_DEFLATED, 15 + 16, 8,
					      Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z);
		return NULL;
	}
	if (z->kind == Z_ZSTD && (!(z->zc = ZSTD_createCCtx()) ||
				  ZSTD_isError(ZSTD_CCtx_setParameter(z->zc, ZSTD_c_compressionLevel, 3)))) {
		ZSTD_freeCCtx(z->zc);
		free(z);
		return NULL;
	}
	return z;
}

static int put(struct zout *z, const void *b, size_t n)
{
	if (n && fwrite(b, 1, n, z->f) != n)
		z->failed = 1;
	return z->failed ? -1 : 0;
}

static int pump(struct zout *z, const void *buf, size_t n, int end)
{
	if (z->kind == Z_GZIP) {
		z->zs.next_in = (unsigned char *)(uintptr_t)buf;
		z->zs.avail_in = (uInt)n;
		(void)end;
		do { /* until deflate has taken all the input */
			z->zs.next_out = z->out;
			z->zs.avail_out = sizeof(z->out);
			if (deflate(&z->zs, Z_NO_FLUSH) == Z_STREAM_ERROR)
				return z->failed = 1, -1;
			if (put(z, z->out, sizeof(z->out) - z->zs.avail_out))
				return -1;
		} while (z->zs.avail_out == 0);
		return 0;
	}
	{
		ZSTD_inBuffer in = {buf, n, 0};
		size_t left;
		do {
			ZSTD_outBuffer out = {z->out, sizeof(z->out), 0};
			left = ZSTD_compressStream2(z->zc, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left))
				return z->failed = 1, -1;
			if (put(z, z->out, out.pos))
				return -1;
		} while (end ? left != 0 : in.pos < in.size);
		return 0;
	}
}

int zout_write(struct zout *z, const void *buf, size_t n)
{
	if (z->failed)
		return -1;
	if (z->kind == Z_PLAIN)
		return put(z, buf, n);
	return pump(z, buf, n, 0);
}

int zout_close(struct zout *z)
{
	int rc = z->failed ? -1 : 0;

	if (!rc && z->kind == Z_GZIP) {
		int st;
		z->zs.next_in = NULL;
		z->zs.avail_in = 0;
		do { /* until deflate says the stream has ended */
			z->zs.next_out = z->out;
			z->zs.avail_out = sizeof(z->out);
			st = deflate(&z->zs, Z_FINISH);
			if (st == Z_STREAM_ERROR || put(z, z->out, sizeof(z->out) - z->zs.avail_out))
				rc = -1;
		} while (!rc && st != Z_STREAM_END);
	} else if (!rc && z->kind == Z_ZSTD) {
		rc = pump(z, "", 0, 1);
	}
	if (z->kind == Z_GZIP)
		deflateEnd(&z->zs);
	ZSTD_freeCCtx(z->zc);
	free(z);
	return rc;
}
