/* SPDX-License-Identifier: MIT */
/* Does what the CUDA driver does with CUDA_INJECTION64_PATH: dlopen the library and call its
 * InitializeInjection, twice (it must be idempotent), then exit normally (atexit handlers run).
 * usage: collector_harness LIB */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h;
	int (*init)(void);

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "harness: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "harness: no InitializeInjection\n");
		return 2;
	}
	printf("InitializeInjection: %d %d\n", init(), init());
	return 0;
}
