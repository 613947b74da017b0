/* SPDX-License-Identifier: MIT */
#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

size_t td_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

int td_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		size_t k;
		if (*p < 0x80) {
			p++;
			continue;
		}
		k = td_utf8_seq(p, (size_t)(end - p));
		if (!k)
			return 0;
		p += k;
	}
	return 1;
}

char *td_utf8_fix(const char *s)
{
	size_t n = strlen(s), i = 0, o = 0;
	char *r = td_malloc(n * 3 + 1);

	while (i < n) {
		size_t k = td_utf8_seq((const unsigned char *)s + i, n - i);
		if (k) {
			memcpy(r + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(r + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	r[o] = '\0';
	return r;
}
