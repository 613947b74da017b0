/* SPDX-License-Identifier: MIT */
/* What a name means: runtime-call families, DataLoader and step markers, memcpy direction and
 * memory kinds, Python frames. Classified once per interned name. */
#ifndef TD_RULES_NAMES_H
#define TD_RULES_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NC_DATALOADER 0x0001  /* enumerate(DataLoader)#...__next__, enumerate(DataPipe)#... */
#define NC_STEP 0x0002        /* ProfilerStep#N */
#define NC_SYNC_CALL 0x0004   /* cuda/hip Stream/Device/Event Synchronize */
#define NC_MEMCPY_CALL 0x0008 /* cudaMemcpy*, hipMemcpy*, cuMemcpy* */
#define NC_MEMCPY_SYNC 0x0010 /* the synchronous ones (no Async) */
#define NC_ALLOC 0x0020       /* cudaMalloc / cudaFree / host alloc, hip and cu variants */
#define NC_LAUNCH 0x0040      /* kernel or graph launch */
#define NC_PY_USER 0x0080     /* a python_function frame in user code (not torch / libraries) */
#define NC_SINGLE_PROC_DL 0x0100 /* _SingleProcessDataLoaderIter: num_workers=0 */
#define NC_INTERNAL_OP 0x0200 /* aten::_xxx: an implementation detail of a public op */
#define NC_CREATE_OP 0x0400   /* aten::randn/zeros/ones/empty/full/arange/rand/... */
#define NC_TO_OP 0x0800       /* aten::to / aten::_to_copy / aten::copy_ */
#define NC_SINGLE_TENSOR_OPT 0x1000 /* _single_tensor_adam / sgd / adamw ... */
#define NC_MEMSET_CALL 0x2000
/* from the config's patterns */
#define NC_COMM 0x4000        /* communication kernel (NCCL / RCCL) */
#define NC_IGNORE 0x8000      /* left out of the analysis */
#define NC_USER_SYNC 0x10000  /* an op the config says synchronizes */
#define NC_WARMUP_CALL 0x20000 /* a runtime call that does one-off start-up work when slow:
				* context creation, first allocation, stream / handle creation */
#define NC_COMPILE 0x40000    /* a torch.compile / Triton compilation or autotuning frame */
#define NC_STREAM_WAIT 0x80000 /* cudaStreamWaitEvent / hipStreamWaitEvent */
#define NC_WARMUP 0x100000    /* from the config: spans that are start-up work */
#define NC_CAPTURE 0x200000   /* graph capture and instantiation: start-up however long */
#define NC_STARTUP_NAME 0x400000 /* a name that says start-up: warm-up, initialise, init_...,
				  * setup (an NVTX range around the run's preparation) */

enum td_copy_dir { CD_OTHER, CD_HTOD, CD_DTOH, CD_DTOD, CD_HTOH, CD_PTOP };
enum td_mem_kind { MK_UNKNOWN, MK_PAGEABLE, MK_PINNED, MK_DEVICE, MK_MANAGED, MK_HOST };

unsigned td_name_class(const char *name);
/* 1 when a Python frame ("path/file.py(42): func") is user code: not under site-packages,
 * torch/ or the interpreter's library. */
int td_is_user_frame(const char *frame);
/* "Memcpy HtoD (Pageable -> Device)" -> CD_HTOD, MK_PAGEABLE, MK_DEVICE */
void td_memcpy_kind(const char *name, enum td_copy_dir *dir, enum td_mem_kind *src,
		    enum td_mem_kind *dst);
const char *td_copy_dir_name(enum td_copy_dir d);
const char *td_mem_kind_name(enum td_mem_kind k);
/* "train.py(42): train_step" -> "train.py:42 train_step" in buf; other names copied. */
const char *td_frame_label(const char *name, char *buf, size_t cap);

#endif
