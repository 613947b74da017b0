/* SPDX-License-Identifier: MIT */
/* Replays files through the fuzz target without libFuzzer, so CTest (gcc, sanitizers) runs the
 * corpus and the fixtures on every build. Usage: fuzz_replay DIR|FILE... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	buf[0] = 17; /* chunk size for the fixture replay */
	if (fread(buf + 1, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n + 1);
	LLVMFuzzerTestOneInput(buf + 1, (size_t)n); /* and as the fuzzer sees corpus files */
	free(buf);
	return 0;
}

static int run(const char *path, int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d)) != NULL) {
		char sub[4096];
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (run(sub, count) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	int i, count = 0;

	for (i = 1; i < argc; i++) {
		if (run(argv[i], &count) != 0) {
			fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[i]);
			return 1;
		}
	}
	printf("fuzz_replay: %d inputs, no crash\n", count);
	return count ? 0 : 1;
}
