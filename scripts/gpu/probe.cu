// SPDX-License-Identifier: MIT
// What the collector must see: kernels, pageable and pinned copies both ways, a memset, the
// three synchronize calls, NVTX ranges, and a forked child that exits (it must not hang).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void scale(float *v, float f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] *= f;
}

int main(void)
{
	const int n = 1 << 22, iters = 20;
	size_t bytes = n * sizeof(float);
	float *host = (float *)malloc(bytes), *pinned, *dev;
	cudaStream_t s;
	cudaEvent_t ev;
	int i;

	for (i = 0; i < n; i++)
		host[i] = 1.0f;
	CK(cudaMallocHost(&pinned, bytes));
	CK(cudaMalloc(&dev, bytes));
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&ev));
	for (i = 0; i < iters; i++) {
		nvtxRangePushA("step");
		CK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));   /* pageable */
		scale<<<(n + 255) / 256, 256, 0, s>>>(dev, 1.0001f, n);
		CK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s)); /* pinned */
		scale<<<(n + 255) / 256, 256, 0, s>>>(dev, 0.9999f, n);
		CK(cudaMemsetAsync(dev, 0, 1024, s));
		CK(cudaEventRecord(ev, s));
		CK(cudaEventSynchronize(ev));
		CK(cudaMemcpyAsync(host, dev, 4, cudaMemcpyDeviceToHost, s));       /* to pageable */
		CK(cudaStreamSynchronize(s));
		nvtxRangePop();
	}
	CK(cudaDeviceSynchronize());
	if (fork() == 0)
		exit(0); /* the child leaves through atexit: the collector must not call CUPTI */
	wait(NULL);
	printf("probe: %d steps, %.1f\n", iters, host[0]);
	return 0;
}
