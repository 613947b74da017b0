/* SPDX-License-Identifier: MIT */
/* Which key a name is (yajl's map-key callback, parser/keys.h): in an event, its args, the
 * top-level object, a device's properties, the distributed info and the collector's block, the
 * name to its enum (parser/parser_state.h) for the value that follows; a key read twice in one
 * event, its args or the document counted, its first value kept. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parser/keys.h"
#include "parser/parser_state.h"

int td_tokens_key(void *ctx, const unsigned char *s, size_t n)
{
	struct td_parser *p = ctx;
	uint8_t k = 0;

	switch (ctx_at(p, p->depth)) {
	case C_EVENT:
		switch (n) {
		case 2:
			k = KEQ(s, n, "ph") ? EK_PH : KEQ(s, n, "ts") ? EK_TS : KEQ(s, n, "id") ? EK_ID : 0;
			break;
		case 3:
			k = KEQ(s, n, "cat") ? EK_CAT : KEQ(s, n, "pid") ? EK_PID
				: KEQ(s, n, "tid") ? EK_TID : KEQ(s, n, "dur") ? EK_DUR : 0;
			break;
		case 4:
			k = KEQ(s, n, "name") ? EK_NAME : KEQ(s, n, "args") ? EK_ARGS : 0;
			break;
		default:
			break;
		}
		break;
	case C_ARGS:
		switch (n) {
		case 4:
			k = KEQ(s, n, "name") ? AK_NAME : KEQ(s, n, "grid") ? AK_GRID : 0;
			break;
		case 5:
			k = KEQ(s, n, "bytes") ? AK_BYTES : KEQ(s, n, "dtype") ? AK_DTYPE
				: KEQ(s, n, "Bytes") ? AK_MEM_BYTES : KEQ(s, n, "block") ? AK_BLOCK : 0;
			break;
		case 6:
			k = KEQ(s, n, "device") ? AK_DEVICE : KEQ(s, n, "stream") ? AK_STREAM
				: KEQ(s, n, "labels") ? AK_LABELS : KEQ(s, n, "kernel") ? AK_KERNEL : 0;
			break;
		case 7:
			k = KEQ(s, n, "seq_num") ? AK_SEQ_NUM : 0;
			break;
		case 9:
			k = KEQ(s, n, "Device Id") ? AK_MEM_DEVID : 0;
			break;
		case 10:
			k = KEQ(s, n, "Group size") ? AK_GROUP_SIZE : KEQ(s, n, "Input Dims") ? AK_INPUT_DIMS
				: KEQ(s, n, "Input type") ? AK_INPUT_TYPE : KEQ(s, n, "Call stack")
				? AK_CALL_STACK : 0;
			break;
		case 11:
			k = KEQ(s, n, "External id") || KEQ(s, n, "external id") ? AK_EXT
				: KEQ(s, n, "correlation") ? AK_CORR : KEQ(s, n, "Device Type")
				? AK_MEM_DEVTYPE : KEQ(s, n, "kernel_flop") ? AK_KFLOP : 0;
			break;
		case 13:
			k = KEQ(s, n, "In msg nelems") ? AK_IN_NELEMS : KEQ(s, n, "shared memory")
				? AK_SMEM : KEQ(s, n, "blocks per SM") ? AK_BPSM
				: KEQ(s, n, "kernel_num_gb") ? AK_KGB : 0;
			break;
		case 20:
			k = KEQ(s, n, "registers per thread") ? AK_REGS : 0;
			break;
		case 25:
			k = KEQ(s, n, "est. achieved occupancy %") ? AK_OCC
				: KEQ(s, n, "Process Group Description") ? AK_PG_DESC : 0;
			break;
		case 14:
			k = KEQ(s, n, "Out msg nelems") ? AK_OUT_NELEMS
				: KEQ(s, n, "wait_on_stream") ? AK_WAIT_STREAM
				: KEQ(s, n, "Total Reserved") ? AK_MEM_RESERVED : 0;
			break;
		case 15:
			k = KEQ(s, n, "Total Allocated") ? AK_MEM_TOTAL
				: KEQ(s, n, "Collective name") ? AK_COLL_NAME
				: KEQ(s, n, "Concrete Inputs") ? AK_CONCRETE
				: KEQ(s, n, "Sequence number") ? AK_SEQ : 0;
			break;
		case 18:
			k = KEQ(s, n, "Process Group Name") ? AK_PG_NAME : 0;
			break;
		case 33:
			k = KEQ(s, n, "wait_on_cuda_event_record_corr_id") ? AK_WAIT_REC : 0;
			break;
		default:
			break;
		}
		break;
	case C_TOP_OBJ:
		k = KEQ(s, n, "traceEvents") ? TK_EVENTS : KEQ(s, n, "deviceProperties") ? TK_DEVPROPS
			: KEQ(s, n, "distributedInfo") ? TK_DIST : KEQ(s, n, "schemaVersion") ? TK_SCHEMA
			: KEQ(s, n, "baseTimeNanoseconds") ? TK_BASETIME
			: KEQ(s, n, "displayTimeUnit") ? TK_UNIT : KEQ(s, n, "traceName") ? TK_NAME
			: KEQ(s, n, "tracedoc_collector") ? TK_COLLECTOR : 0;
		break;
	case C_DEVPROP:
		k = KEQ(s, n, "id") ? DK_ID : KEQ(s, n, "name") ? DK_NAME
			: KEQ(s, n, "totalGlobalMem") ? DK_MEM : KEQ(s, n, "computeMajor") ? DK_MAJOR
			: KEQ(s, n, "computeMinor") ? DK_MINOR : KEQ(s, n, "numSms") ? DK_SMS : 0;
		break;
	case C_COLLECTOR:
		k = KEQ(s, n, "droppedRecords") ? 1 : 0;
		break;
	case C_DISTINFO:
		k = KEQ(s, n, "rank") ? IK_RANK : KEQ(s, n, "world_size") ? IK_WORLD
			: KEQ(s, n, "backend") ? IK_BACKEND : 0;
		break;
	default:
		break;
	}
	/* a key we read, twice in one event, its args or the document: the first is kept */
	if (k) {
		uint64_t bit = 1ull << (k & 63);
		unsigned char c = ctx_at(p, p->depth);
		uint64_t *seen = c == C_EVENT ? &p->ev_keys : c == C_ARGS ? &p->arg_keys
			: c == C_TOP_OBJ ? &p->top_keys : NULL;
		if (seen && (*seen & bit)) {
			if (c == C_TOP_OBJ && k == TK_EVENTS)
				p->anom.duplicate_trace_events++;
			else if (!p->dup_counted) /* once per event or document */
				p->anom.duplicate_keys++, p->dup_counted = 1;
			k = 0;
		} else if (seen) {
			*seen |= bit;
		}
	}
	p->key = k;
	return 1;
}
