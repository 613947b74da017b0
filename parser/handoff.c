/* SPDX-License-Identifier: MIT */
/* The records' way out of the reader (parser/tokens.c fills them): in batches to the builder on
 * its own thread (the model thread), or a split worker's to its sink (parser/split.c). Below
 * tokens.c and kineto.c. */
#include <stdlib.h>
#include <pthread.h>

#include "common/alloc.h"
#include "parser/builder.h"
#include "parser/parser.h"
#include "parser/parser_state.h"

static void *model_main(void *arg)
{
	struct td_parser *p = arg;
	struct model_thread *mt = p->mt;

	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&mt->mu);
		while (mt->head == mt->tail && !mt->done)
			pthread_cond_wait(&mt->cv, &mt->mu);
		if (mt->head == mt->tail) {
			pthread_mutex_unlock(&mt->mu);
			return NULL;
		}
		b = &mt->b[mt->tail % NBATCH];
		pthread_mutex_unlock(&mt->mu);
		td_builder_add_records(&p->builder, b->buf, b->len);
		pthread_mutex_lock(&mt->mu);
		mt->tail++;
		pthread_cond_broadcast(&mt->cv);
		pthread_mutex_unlock(&mt->mu);
	}
}

/* Hands the filled batch to the builder and takes the next free one. */
void td_parser_ship(struct td_parser *p)
{
	struct model_thread *mt = p->mt;

	pthread_mutex_lock(&mt->mu);
	mt->head++;
	pthread_cond_broadcast(&mt->cv);
	while (mt->head - mt->tail == NBATCH)
		pthread_cond_wait(&mt->cv, &mt->mu);
	p->cur = &mt->b[mt->head % NBATCH];
	p->cur->len = 0;
	pthread_mutex_unlock(&mt->mu);
}

static void free_model_thread(struct td_parser *p)
{
	struct model_thread *mt = p->mt;
	int i;

	pthread_mutex_destroy(&mt->mu);
	pthread_cond_destroy(&mt->cv);
	for (i = 0; i < NBATCH; i++)
		free(mt->b[i].buf);
	free(mt);
	p->mt = NULL;
	p->cur = NULL;
}

/* Starts the model thread: records then go to the builder in batches (td_parser_ship). */
void td_parser_start_model(struct td_parser *p)
{
	struct model_thread *mt = td_calloc(1, sizeof(*mt));
	int i;

	for (i = 0; i < NBATCH; i++)
		mt->b[i].buf = td_malloc(BATCH_BYTES);
	pthread_mutex_init(&mt->mu, NULL);
	pthread_cond_init(&mt->cv, NULL);
	p->mt = mt;
	p->cur = &mt->b[0];
	if (pthread_create(&mt->th, NULL, model_main, p) != 0)
		free_model_thread(p); /* no thread: build on this one */
}

/* Sends what is left and waits for the builder to finish. */
void td_parser_stop_model(struct td_parser *p)
{
	struct model_thread *mt = p->mt;

	if (!mt)
		return;
	pthread_mutex_lock(&mt->mu);
	if (p->cur && p->cur->len)
		mt->head++;
	mt->done = 1;
	pthread_cond_broadcast(&mt->cv);
	pthread_mutex_unlock(&mt->mu);
	pthread_join(mt->th, NULL);
	free_model_thread(p);
}

/* Waits until the builder has taken every batch shipped (an event larger than a batch is then
 * added on this thread). */
void td_parser_drain(struct td_parser *p)
{
	pthread_mutex_lock(&p->mt->mu);
	while (p->mt->head != p->mt->tail)
		pthread_cond_wait(&p->mt->cv, &p->mt->mu);
	pthread_mutex_unlock(&p->mt->mu);
}

void td_parser_flush(struct td_parser *p)
{
	if (p->sink && p->wbuf) /* shipped, or (empty) back to the pool */
		(void)p->sink(p->sink_ctx, p->wbuf, p->wlen, 0);
	p->wbuf = NULL;
	p->wlen = 0;
}
