/* SPDX-License-Identifier: MIT */
/* Does what the CUDA driver does with CUDA_INJECTION64_PATH: dlopen the library and call its
 * InitializeInjection, twice (it must be idempotent), then exit normally (atexit handlers run).
 * Prints NVTX_INJECTION64_PATH as the collector left it.
 * usage: collector_harness LIB */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

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
	printf("NVTX_INJECTION64_PATH=%s\n", getenv("NVTX_INJECTION64_PATH") ? getenv("NVTX_INJECTION64_PATH") : "");
	return 0;
}
