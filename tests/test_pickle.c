/* SPDX-License-Identifier: MIT */
/* The pickle reader's opcodes (parser/pickle.h), each decoded from bytes written here by hand
 * (their encodings from Lib/pickletools.py), into a sink that writes the events as JSON text:
 * ints of every width, floats, strings, bytes, containers streamed and built, the memo, and
 * every opcode that would import or call refused with its name and byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "parser/pickle.h"

struct src {
	const unsigned char *p;
	size_t n, at;
};

static char out[4096];
static size_t len;
static int build; /* the sink's answer to tree() */

static ssize_t rd(void *s, void *buf, size_t cap, struct td_error *err)
{
	struct src *x = s;
	size_t k = x->n - x->at < 3 ? x->n - x->at : 3; /* 3 bytes a read: arguments span reads */

	(void)err;
	if (k > cap)
		k = cap;
	memcpy(buf, x->p + x->at, k);
	x->at += k;
	return (ssize_t)k;
}

static int put(const char *s, size_t n)
{
	if (len && strchr("[{", out[len - 1]) == NULL && out[len - 1] != ':' && !strchr("]}", *s))
		out[len++] = ',';
	memcpy(out + len, s, n);
	len += n;
	out[len] = '\0';
	return 1;
}
static int e_null(void *c)
{
	(void)c;
	return put("null", 4);
}
static int e_bool(void *c, int b)
{
	(void)c;
	return b ? put("true", 4) : put("false", 5);
}
static int e_num(void *c, const char *s, size_t n)
{
	(void)c;
	return put(s, n);
}
static int e_str(void *c, const unsigned char *s, size_t n)
{
	(void)c;
	put("\"", 1);
	memcpy(out + len, s, n);
	len += n;
	out[len++] = '"';
	out[len] = '\0';
	return 1;
}
static int e_key(void *c, const unsigned char *s, size_t n)
{
	e_str(c, s, n);
	out[len++] = ':';
	out[len] = '\0';
	return 1;
}
static int e_om(void *c)
{
	(void)c;
	return put("{", 1);
}
static int e_cm(void *c)
{
	(void)c;
	return put("}", 1);
}
static int e_oa(void *c)
{
	(void)c;
	return put("[", 1);
}
static int e_ca(void *c)
{
	(void)c;
	return put("]", 1);
}
static int tree(void *c)
{
	(void)c;
	return build;
}

static const yajl_callbacks cb = {e_null, e_bool, NULL, NULL, e_num, e_str, e_om, e_key, e_cm,
				  e_oa, e_ca};

/* reads the n bytes of p; returns the reader's code, the events in out */
static int run(const char *p, size_t n, struct td_error *err)
{
	struct src s = {(const unsigned char *)p, n, 0};
	struct td_pk_sink sink = {&cb, NULL, tree, NULL, NULL};

	len = 0;
	out[0] = '\0';
	memset(err, 0, sizeof(*err));
	return td_pickle_read(rd, &s, "t.pickle", &sink, err);
}

#define READS(bytes, want) do {                                                  \
		struct td_error e_;                                                      \
		assert_int_equal(run(bytes, sizeof(bytes) - 1, &e_), 0);                 \
		assert_string_equal(out, want);                                          \
	} while (0)

static void test_ints(void **state)
{
	(void)state;
	READS("\x80\x04(K\x07M\x01\x02J\xff\xff\xff\xffl.", "[7,513,-1]");
	/* LONG1: 5 bytes, 2^32; -1 in one byte; 2^64-1 in 9 bytes (an address) */
	READS("\x80\x04(\x8a\x05\x00\x00\x00\x00\x01\x8a\x01\xffl.", "[4294967296,-1]");
	READS("\x80\x04\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00.", "18446744073709551615");
	/* 2^64 and past: the nearest double */
	READS("\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", "1.8446744073709552e+19");
	READS("\x80\x04\x8b\x02\x00\x00\x00\x00\x80.", "-32768");
	READS("\x80\x04\x8a\x00.", "0");
}

static void test_scalars(void **state)
{
	(void)state;
	READS("\x80\x04(N\x88\x89G?\xf8\x00\x00\x00\x00\x00\x00l.", "[null,true,false,1.5]");
	READS("\x80\x04(\x8c\x02hiX\x03\x00\x00\x00" "abc\x8d\x01\x00\x00\x00\x00\x00\x00\x00zl.",
	      "[\"hi\",\"abc\",\"z\"]");
	READS("\x80\x04(C\x01" "aB\x01\x00\x00\x00" "b\x8e\x01\x00\x00\x00\x00\x00\x00\x00" "c"
	      "\x96\x01\x00\x00\x00\x00\x00\x00\x00" "dl.", "[\"a\",\"b\",\"c\",\"d\"]");
}

static void test_containers(void **state)
{
	(void)state;
	build = 0; /* streamed */
	READS("\x80\x04}\x94(\x8c\x01" "a\x94K\x01\x8c\x01" "b\x94]\x94(K\x02K\x03" "eu.",
	      "{\"a\":1,\"b\":[2,3]}");
	/* protocol 2: BINPUT, a single SETITEM and APPEND */
	READS("\x80\x02}q\x00X\x01\x00\x00\x00" "kq\x01]q\x02K\x05" "as.", "{\"k\":[5]}");
	/* a list of lists, the first empty: siblings, not a list in a list */
	READS("\x80\x04]\x94(]\x94]\x94K\x01" "ae.", "[[],[1]]");
	READS("\x80\x04]\x94]\x94]\x94K\x01" "aaa.", "[[[1]]]");
}

static void test_built(void **state)
{
	struct td_error e;
	(void)state;
	build = 1; /* built, handed out whole */
	READS("\x80\x04}\x94\x8c\x01k\x94]\x94K\x05" "as.", "{\"k\":[5]}");
	READS("\x80\x04(K\x01K\x02\x86)\x8f\x94(K\x03\x90(K\x04\x91l.", "[[1,2],[],[3],[4]]");
	/* the memo: a string and a list referenced again */
	READS("\x80\x04(\x8c\x01s\x94h\x00]\x94K\x09" "ah\x01j\x01\x00\x00\x00l.",
	      "[\"s\",\"s\",[9],[9],[9]]");
	build = 0;
	/* a streamed container is not kept: its reference is refused with its byte */
	assert_int_equal(run("\x80\x04]\x94h\x00" "a.", 8, &e), TD_EPARSE);
	assert_int_equal(e.offset, 4);
	assert_non_null(strstr(e.msg, "BINGET 0: a value this reader did not keep"));
}

static void test_refused(void **state)
{
	static const unsigned char ops[] = {'c', 0x93, 'R', 'b', 'i', 'o', 0x81, 0x92, 'P', 'Q',
					    0x82, 0x83, 0x84, 0x97, 0x98};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(ops); i++) {
		char p[8] = {'\x80', '\x04', 'N', 'N', (char)ops[i], '.'};
		char want[64];
		struct td_error e;
		assert_int_equal(run(p, 6, &e), TD_EPARSE);
		assert_int_equal(e.offset, 4);
		snprintf(want, sizeof(want), "byte 4: opcode %s (0x%02x) would import or call",
			 td_pickle_opname(ops[i]), ops[i]);
		assert_non_null(strstr(e.msg, want));
	}
}

static void test_bad(void **state)
{
	struct td_error e;
	(void)state;
	assert_int_equal(run("\x80\x07N.", 4, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "pickle protocol 7"));
	assert_int_equal(run("\x80\x04N", 3, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "ends before its STOP"));
	assert_int_equal(run("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00N", 12, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "ends inside a frame"));
	assert_int_equal(run("\x80\x04X\xff\xff\xff\x7f" "abc", 10, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "BINUNICODE says 2147483647 bytes follow from byte 7"));
	assert_int_equal(run("\x80\x04\x8b\x01\x10\x00\x00.", 8, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "LONG4 of 4097 bytes: more than the 4096"));
	assert_int_equal(run("\x80\x04\xff", 3, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "byte 2: byte 0xff is not a pickle opcode"));
	assert_int_equal(run("\x80\x04}a.", 5, &e), TD_EPARSE);
	assert_int_equal(run("\x80\x04I1\n.", 6, &e), TD_EPARSE);
	assert_non_null(strstr(e.msg, "protocol 0 or 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ints), cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_containers), cmocka_unit_test(test_built),
		cmocka_unit_test(test_refused), cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
