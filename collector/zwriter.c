/* SPDX-License-Identifier: MIT */
#include "collector/zwriter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

struct tdc_zw {
	FILE *f;
	ZSTD_CCtx *cctx;
	void *obuf;
	size_t ocap;
	int failed;
};

struct tdc_zw *tdc_zw_open(const char *path, int level)
{
	struct tdc_zw *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ocap = ZSTD_CStreamOutSize();
	w->obuf = malloc(w->ocap);
	w->cctx = ZSTD_createCCtx();
	w->f = fopen(path, "wb");
	if (!w->obuf || !w->cctx || !w->f) {
		int e = errno;
		if (w->f)
			fclose(w->f);
		ZSTD_freeCCtx(w->cctx);
		free(w->obuf);
		free(w);
		errno = e;
		return NULL;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	return w;
}

static int run(struct tdc_zw *w, const void *buf, size_t len, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {buf, len, 0};
	size_t rem;

	if (w->failed)
		return -1;
	do {
		ZSTD_outBuffer out = {w->obuf, w->ocap, 0};
		rem = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(rem) || (out.pos && fwrite(w->obuf, 1, out.pos, w->f) != out.pos)) {
			w->failed = 1;
			return -1;
		}
	} while (mode == ZSTD_e_end ? rem != 0 : in.pos < in.size);
	return 0;
}

int tdc_zw_write(struct tdc_zw *w, const void *buf, size_t len)
{
	return run(w, buf, len, ZSTD_e_continue);
}

int tdc_zw_frame(struct tdc_zw *w)
{
	if (run(w, "", 0, ZSTD_e_end) != 0 || fflush(w->f) != 0) {
		w->failed = 1;
		return -1;
	}
	return 0;
}

int tdc_zw_close(struct tdc_zw *w)
{
	int rc = tdc_zw_frame(w);

	if (fclose(w->f) != 0)
		rc = -1;
	ZSTD_freeCCtx(w->cctx);
	free(w->obuf);
	free(w);
	return rc;
}
