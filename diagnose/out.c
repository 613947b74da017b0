/* SPDX-License-Identifier: MIT */
#define _XOPEN_SOURCE 700 /* realpath */
#include "diagnose/out.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/utf8.h"

/* Where the marked name starting at s (after TD_NAME_OPEN) ends, and where the text goes on. */
static size_t name_len(const char *s, const char **next)
{
	const char *c = strchr(s, TD_NAME_CLOSE);
	size_t n = c ? (size_t)(c - s) : strlen(s);

	*next = c ? c + 1 : s + n;
	return n;
}

/* the escaped form of n bytes: control bytes and invalid UTF-8 as \xNN */
static size_t text_bytes(FILE *f, const unsigned char *p, size_t n, size_t max, size_t shown)
{
	size_t i = 0;

	while (i < n) {
		size_t k = p[i] < 0x80 ? 1 : td_utf8_seq(p + i, n - i);
		if (max && shown >= max) {
			fputs("...", f);
			return SIZE_MAX;
		}
		if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(f, "\\x%02x", p[i]);
			i++;
		} else if (k > 1 && td_utf8_unsafe(p + i, k)) { /* C1 and bidi controls */
			fprintf(f, "\\u%04x", td_utf8_unsafe(p + i, k));
			i += k;
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
		}
		shown++;
	}
	return shown;
}

void out_text_name(FILE *f, const char *s, size_t max)
{
	size_t shown = 0;

	while (*s && shown != SIZE_MAX) {
		const char *open = strchr(s, TD_NAME_OPEN), *next;
		size_t plain = open ? (size_t)(open - s) : strlen(s), n, room;
		char buf[OUT_NAME_MAX * 2];
		const char *shortened;

		shown = text_bytes(f, (const unsigned char *)s, plain, max, shown);
		if (!open || shown == SIZE_MAX)
			return;
		n = name_len(open + 1, &next);
		room = max ? (max > shown ? max - shown : 1) : OUT_NAME_MAX;
		if (room > OUT_NAME_MAX)
			room = OUT_NAME_MAX;
		shortened = td_short_name(open + 1, n, room, buf, sizeof(buf));
		shown = text_bytes(f, (const unsigned char *)shortened,
				   shortened == open + 1 ? n : strlen(shortened), max, shown);
		s = next;
	}
}

#define GLUE '\x1d' /* a space inside a name: not a place to break the line */

/* s with each marked name shortened and glued into one word (caller frees). */
static char *display(const char *s)
{
	size_t cap = strlen(s) + 1, n = 0;
	char *d = td_malloc(cap), buf[OUT_NAME_MAX * 2];

	while (*s) {
		if (*s == TD_NAME_OPEN) {
			const char *next, *nm;
			size_t len = name_len(s + 1, &next), k, nl;
			nm = td_short_name(s + 1, len, OUT_NAME_MAX, buf, sizeof(buf));
			nl = nm == s + 1 ? len : strlen(nm);
			for (k = 0; k < nl && n + 1 < cap; k++)
				d[n++] = nm[k] == ' ' ? GLUE : nm[k];
			s = next;
		} else {
			if (n + 1 < cap)
				d[n++] = *s;
			s++;
		}
	}
	d[n] = '\0';
	return d;
}

/* the columns n bytes take once escaped as out_text_name() writes them */
static int text_width(const unsigned char *p, size_t n)
{
	size_t i = 0;
	int w = 0;

	while (i < n) {
		size_t k = p[i] < 0x80 ? 1 : td_utf8_seq(p + i, n - i);
		if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			w += p[i] == (unsigned char)GLUE ? 1 : 4;
			i++;
		} else if (k > 1 && td_utf8_unsafe(p + i, k)) {
			w += 6;
			i += k;
		} else {
			w++;
			i += k;
		}
	}
	return w;
}

void out_text_wrap(FILE *f, const char *s, int col, int indent, int width)
{
	char *disp = display(s), *p = disp;
	int first = 1;

	while (*p) {
		char *q, save;
		int w;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		for (q = p; *q && *q != ' '; q++)
			;
		w = text_width((const unsigned char *)p, (size_t)(q - p));
		if (!first) {
			if (col + 1 + w > width && col > indent) {
				fprintf(f, "\n%*s", indent, "");
				col = indent;
			} else {
				fputc(' ', f);
				col++;
			}
		}
		save = *q;
		*q = '\0';
		while (*p) { /* glued spaces back, the pieces escaped */
			char *g = strchr(p, GLUE);
			if (g)
				*g = '\0';
			out_text_name(f, p, 0);
			if (!g) {
				p += strlen(p);
				break;
			}
			fputc(' ', f);
			p = g + 1;
		}
		*q = save;
		col += w;
		first = 0;
		p = q;
	}
	free(disp);
}

/* A name as a Markdown code span: nothing in it is markup, mentions or math; the fence is
 * longer than any run of backticks inside, and '|' is escaped for tables. */
static void md_code(FILE *f, const unsigned char *p, size_t n)
{
	size_t i, run = 0, longest = 0, k;
	int pad = n && (p[0] == '`' || p[n - 1] == '`' || p[0] == ' ' || p[n - 1] == ' ');

	for (i = 0; i < n; i++) {
		run = p[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (k = 0; k <= longest; k++)
		fputc('`', f);
	if (pad)
		fputc(' ', f);
	for (i = 0; i < n;) {
		if (p[i] == '|') {
			fputs("\\|", f);
			i++;
		} else if (p[i] == '\n' || p[i] == '\r' || p[i] == '\t') {
			fputc(' ', f);
			i++;
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			i++;
		} else {
			i += out_utf8_char(f, p + i, n - i);
		}
	}
	if (pad)
		fputc(' ', f);
	for (k = 0; k <= longest; k++)
		fputc('`', f);
}

void out_md(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		unsigned char ch = p[i];
		switch (ch) {
		case TD_NAME_OPEN: {
			const char *next;
			size_t len = name_len(s + i + 1, &next);
			md_code(f, p + i + 1, len);
			i = (size_t)(next - s);
			continue;
		}
		case '|': fputs("\\|", f); i++; continue;
		case '<': fputs("&lt;", f); i++; continue;
		case '>': fputs("&gt;", f); i++; continue;
		case '&': fputs("&amp;", f); i++; continue;
		case '`': case '*': case '_': case '[': case ']': case '\\': case '#': case '~':
		case '$': case '@':
			fputc('\\', f);
			fputc(ch, f);
			i++;
			continue;
		case '\n': case '\r': case '\t':
			fputc(' ', f);
			i++;
			continue;
		default:
			break;
		}
		if (ch < 0x20 || ch == 0x7f) {
			i++;
			continue;
		}
		i += out_utf8_char(f, p + i, n - i);
	}
}

const char *out_markup_entity(unsigned char c, int xml)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return xml ? "&apos;" : "&#39;";
	default: return NULL;
	}
}

size_t out_utf8_char(FILE *f, const unsigned char *p, size_t n)
{
	size_t k = p[0] < 0x80 ? 1 : td_utf8_seq(p, n);

	if (!k) {
		fputs("\xef\xbf\xbd", f);
		return 1;
	}
	if (k > 1 && td_utf8_unsafe(p, k)) /* C1 and bidi controls, shown, not obeyed */
		fprintf(f, "\\u%04x", td_utf8_unsafe(p, k));
	else
		fwrite(p, 1, k, f);
	return k;
}

static void gen_print(void *ctx, const char *s, size_t len)
{
	fwrite(s, 1, len, ctx);
}

yajl_gen out_json_new(FILE *f)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	yajl_gen_config(g, yajl_gen_print_callback, gen_print, f);
	return g;
}

void out_json_key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

void out_json_str(yajl_gen g, const char *s)
{
	static const char marks[] = {TD_NAME_OPEN, TD_NAME_CLOSE, '\0'};
	size_t n = strlen(s), o;
	char *buf;

	if (td_utf8_valid(s, n) && !strchr(s, TD_NAME_OPEN) && !strchr(s, TD_NAME_CLOSE)) {
		yajl_gen_string(g, (const unsigned char *)s, n);
		return;
	}
	/* drop the name marks; replace each invalid byte by U+FFFD so the output stays valid JSON */
	buf = td_malloc(n * 3 + 1);
	o = td_utf8_fix_into(buf, s, n, marks);
	yajl_gen_string(g, (const unsigned char *)buf, o);
	free(buf);
}

void out_json_int(yajl_gen g, int64_t v)
{
	yajl_gen_integer(g, (long long)v);
}

void out_json_fixed(yajl_gen g, double v, int decimals)
{
	char buf[400];
	int n;

	if (!isfinite(v)) { /* JSON has no inf or nan: a bare one would make the file invalid */
		yajl_gen_null(g);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	yajl_gen_number(g, buf, (size_t)n);
}

void out_json_bool(yajl_gen g, int v)
{
	yajl_gen_bool(g, v);
}

void out_json_kint(yajl_gen g, const char *k, int64_t v)
{
	out_json_key(g, k);
	out_json_int(g, v);
}

void out_json_kstr(yajl_gen g, const char *k, const char *s)
{
	out_json_key(g, k);
	out_json_str(g, s);
}

void out_json_kbool(yajl_gen g, const char *k, int v)
{
	out_json_key(g, k);
	out_json_bool(g, v);
}

void out_json_kstr_or_null(yajl_gen g, const char *k, const char *s)
{
	out_json_key(g, k);
	if (s)
		out_json_str(g, s);
	else
		yajl_gen_null(g);
}

void out_json_karray(yajl_gen g, const char *k)
{
	out_json_key(g, k);
	yajl_gen_array_open(g);
}

void out_json_kmap(yajl_gen g, const char *k)
{
	out_json_key(g, k);
	yajl_gen_map_open(g);
}

void out_json_end(yajl_gen g, FILE *f)
{
	yajl_gen_map_close(g);
	yajl_gen_free(g);
	fputc('\n', f);
}

void out_json_kfixed(yajl_gen g, const char *k, double v, int decimals)
{
	out_json_key(g, k);
	out_json_fixed(g, v, decimals);
}

int out_open(struct out_file *o, const char *path)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device, FIFO or terminal (-o /dev/stderr): written in place, nothing to replace */
		if (!(o->f = fopen(path, "w")))
			return -1;
		o->direct = 1;
		return 0;
	}
	/* a symlink: the file it points to is the target (the link stays); a dangling one is
	 * written through */
	{
		struct stat ls;
		if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
			char *real = realpath(path, NULL);
			if (!real) {
				if (!(o->f = fopen(path, "w")))
					return -1;
				o->direct = 1;
				return 0;
			}
			o->path = real;
		}
	}
	/* written beside the target and renamed over it: a failed run leaves the old file whole */
	if (!o->path)
		o->path = td_strndup(path, strlen(path));
	path = o->path;
	o->tmp = td_malloc(strlen(path) + 16);
	snprintf(o->tmp, strlen(path) + 16, "%s.tmpXXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd >= 0) { /* the mode a plain open would give: the old file's, else 0666 less umask */
		mode_t mask = umask(0);
		umask(mask);
		(void)fchmod(fd, stat(path, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~mask));
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		errno = e;
		return -1;
	}
	return 0;
}

int out_close(struct out_file *o, int ok)
{
	int rc = 0;

	if (!o->f)
		return 0;
	if (o->f == stdout) {
		if (fflush(stdout) != 0 || ferror(stdout))
			rc = -1;
		o->f = NULL;
		return rc;
	}
	if (o->direct) {
		rc = fclose(o->f) != 0 ? -1 : 0;
		memset(o, 0, sizeof(*o));
		return rc;
	}
	if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)
		ok = 0, rc = -1;
	if (fclose(o->f) != 0)
		ok = 0, rc = -1;
	if (ok && rename(o->tmp, o->path) != 0)
		rc = -1, ok = 0;
	if (!ok)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return rc;
}

int out_use_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");
	return isatty(fileno(f)) && !(nc && *nc);
}
