/* SPDX-License-Identifier: MIT */
/* Fixed CPU work (an integer xorshift loop, no memory traffic): two copies at once against one
 * tell whether this machine's cores deliver two cores' worth of work right now (shared VMs
 * often do not, and then no parallel figure means anything). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 400000000UL, i;
	unsigned long x = 88172645463325252UL, s = 0;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s += x;
	}
	printf("%lu\n", s);
	return 0;
}
