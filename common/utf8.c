/* SPDX-License-Identifier: MIT */
#include "common/utf8.h"

#include <stdio.h>
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

size_t td_utf8_fix_into(char *out, const char *s, size_t n, const char *drop)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		size_t k;
		if (drop && p[i] && strchr(drop, p[i])) {
			i++;
			continue;
		}
		k = td_utf8_seq(p + i, n - i);
		if (k) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	return o;
}

char *td_utf8_fix(const char *s)
{
	size_t n = strlen(s);
	char *r = td_malloc(n * 3 + 1);

	r[td_utf8_fix_into(r, s, n, NULL)] = '\0';
	return r;
}

unsigned td_utf8_unsafe(const unsigned char *p, size_t k)
{
	unsigned cp;

	if (k == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return p[1]; /* U+0080-U+009F */
	if (k == 2 && p[0] == 0xd8 && p[1] == 0x9c)
		return 0x061c;
	if (k != 3 || p[0] != 0xe2)
		return 0;
	cp = 0x2000u | ((unsigned)(p[1] & 0x3f) << 6) | (p[2] & 0x3fu);
	if ((cp >= 0x200e && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return cp;
	return 0;
}

char *td_utf8_escape_controls(char *buf, size_t cap, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		size_t k = p[i] < 0x80 ? 1 : td_utf8_seq(p + i, n - i);
		unsigned u = k > 1 ? td_utf8_unsafe(p + i, k) : 0;
		char esc[16];
		size_t w;
		if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			k = 1;
		} else if (u) {
			snprintf(esc, sizeof(esc), "\\u%04x", u);
		} else {
			memcpy(esc, p + i, k);
			esc[k] = '\0';
		}
		w = strlen(esc);
		if (o + w + 1 > cap)
			break;
		memcpy(buf + o, esc, w);
		o += w;
		i += k;
	}
	buf[o] = '\0';
	return buf;
}

size_t td_quote_bytes(char *buf, size_t cap, const void *bytes, size_t n)
{
	const unsigned char *b = bytes;
	size_t o = 0, i;

	for (i = 0; i < n && o + 5 < cap; i++) {
		unsigned char c = b[i];
		if (c == '\n')
			o += (size_t)snprintf(buf + o, cap - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(buf + o, cap - o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return o;
}
