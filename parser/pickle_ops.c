/* SPDX-License-Identifier: MIT */
/* The pickle opcodes' names (Lib/pickletools.py spells them), for messages. */
#include "parser/pickle.h"

const char *td_pickle_opname(unsigned char op)
{
	static const struct {
		unsigned char op;
		const char *name;
	} ops[] = {
		{'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"},
		{'F', "FLOAT"}, {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"},
		{'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"}, {'Q', "BINPERSID"},
		{'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
		{'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"},
		{'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"},
		{'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"}, {'l', "LIST"},
		{']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"},
		{'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"},
		{'u', "SETITEMS"}, {'G', "BINFLOAT"}, {0x80, "PROTO"}, {0x81, "NEWOBJ"},
		{0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"}, {0x86, "TUPLE2"},
		{0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"},
		{0x8b, "LONG4"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
		{0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"}, {0x8e, "BINBYTES8"},
		{0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
		{0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"},
		{0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return NULL;
}
