/* SPDX-License-Identifier: MIT */
/* What a caching-allocator snapshot's memory is, in the categories of PyTorch's memory profiler
 * (torch/profiler/_memory_profiler.py, Category): parameter, gradient, optimizer state,
 * activation, autograd detail (autograd's temporaries), unknown; each inferred by a rule named
 * here, from the allocation's frames, its user_metadata and compile_context
 * (td_snap_cat_hint, handed to parser/snapshot.h), or by the replay (tables/snapshot.c) from
 * the external annotations (Optimizer.step, Optimizer.zero_grad) and the block's life. Library
 * code: never prints. */
#ifndef TD_TABLES_SNAPSHOT_CAT_H
#define TD_TABLES_SNAPSHOT_CAT_H

#include <stdint.h>

#include "parser/snapshot.h"

enum td_snap_cat {
	TD_CAT_UNKNOWN, TD_CAT_PARAMETER, TD_CAT_GRADIENT, TD_CAT_OPTIMIZER, TD_CAT_ACTIVATION,
	TD_CAT_AUTOGRAD, TD_SNAP_NCAT
};

/* The rules, strongest first from TD_RULE_METADATA (a stack's frames: the lowest rule that
 * matches one of them wins) */
enum td_snap_rule {
	TD_RULE_NO_FRAMES,   /* no frames, none of the rules below told */
	TD_RULE_FRAMES,      /* frames, none telling */
	TD_RULE_METADATA,    /* user_metadata names a category */
	TD_RULE_OPTIM,       /* a frame in torch/optim/, or an optimizer's step() */
	TD_RULE_ACCUMULATE,  /* an AccumulateGrad frame */
	TD_RULE_BACKWARD,    /* the autograd engine or backward() */
	TD_RULE_PARAM,       /* nn.Module _apply / to / cuda, load_state_dict, torch/nn/init.py... */
	TD_RULE_COMPILE,     /* compile_context names the forward, backward or optimizer graph */
	TD_RULE_FORWARD,     /* a forward() or an nn.Module call */
	/* the replay's */
	TD_RULE_STEP,        /* allocated inside an Optimizer.step annotation */
	TD_RULE_ENGINE,      /* no frames where the snapshot has some: the autograd engine's thread */
	TD_RULE_GRAD_LIFE,   /* backward's, still live when Optimizer.step begins */
	TD_RULE_ZERO_GRAD,   /* allocated before the trace, freed inside Optimizer.zero_grad */
	TD_RULE_STEP_FREE,   /* allocated before the trace, freed inside Optimizer.step */
	TD_RULE_PERSIST,     /* allocated before the trace, live at its end, no frame telling */
	TD_RULE_BEFORE,      /* allocated before the trace, nothing telling */
	TD_SNAP_NRULE
};

/* the category's name ("optimizer state"), PyTorch's ("OPTIMIZER_STATE") */
const char *td_snap_cat_name(unsigned cat);
const char *td_snap_cat_pytorch(unsigned cat);
/* the rule's id ("frame:torch/optim") and how it infers, as a phrase */
const char *td_snap_rule_id(unsigned rule);
const char *td_snap_rule_text(unsigned rule);
/* the category of a rule that always gives one (TD_CAT_UNKNOWN for the others) */
unsigned td_snap_rule_cat(unsigned rule);
/* What a frame ("file(line): name"), a user_metadata or a compile_context says: a
 * TD_SNAP_HINT, rule TD_RULE_NO_FRAMES when nothing. */
uint8_t td_snap_cat_hint(enum td_snap_hint_of of, const char *text);

#endif
