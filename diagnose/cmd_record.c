/* SPDX-License-Identifier: MIT */
/* tracedoc record [-o DIR] -- CMD ARGS...: runs CMD with the CUPTI collector injected
 * (CUDA_INJECTION64_PATH, and NVTX_INJECTION64_PATH for NVTX ranges), passes its exit status
 * through and prints where the traces are: one per process that used CUDA. */
#define _DEFAULT_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"

static void record_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc record [-o DIR] -- CMD [ARGS...]\n"
		   "  runs CMD with the CUPTI collector; each process that uses CUDA writes\n"
		   "  DIR/<name>.<host>.<pid>.json.zst (DIR defaults to the current directory)\n"
		   "  the exit status is CMD's\n");
}

#ifdef TD_HAVE_COLLECTOR
/* the collector: TRACEDOC_COLLECTOR, else beside the tracedoc binary (a build tree), else in
 * PREFIX/lib/tracedoc (installed: cmake --install, the .deb) */
static int collector_path(char *buf, size_t cap)
{
	const char *env = getenv("TRACEDOC_COLLECTOR");
	char self[PATH_MAX / 2];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, cap, "%s", env);
		return access(buf, R_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(buf, cap, "%s/libtracedoc_collector.so", self); /* a build tree */
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, cap, "%s/../lib/tracedoc/libtracedoc_collector.so", self); /* installed */
	return access(buf, R_OK);
}

static void list_traces(const char *dir, time_t since)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)) != NULL) {
		char p[PATH_MAX * 2];
		struct stat st;
		size_t l = strlen(de->d_name);
		if (l < 9 || strcmp(de->d_name + l - 9, ".json.zst") != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (stat(p, &st) != 0 || st.st_mtime < since)
			continue;
		fprintf(stderr, "tracedoc: trace %s (%lld bytes)\n", p, (long long)st.st_size);
		n++;
	}
	if (d)
		closedir(d);
	if (!n)
		fprintf(stderr, "tracedoc: no trace written: no process made CUDA calls, or the "
				"collector could not record (see its message above)\n");
}
#endif

int cmd_record(int argc, char **argv)
{
	const char *dir = ".";
	const struct cli_opt opts[] = {{"--output", 'o', &dir, NULL}, {NULL, 0, NULL, NULL}};
	struct cli_operands ops = {0};
	int i, rc;

	ops.stop_at_operand = 1; /* the command and its own options follow */
	rc = cli_parse("record", argc, argv, opts, &ops, record_usage);
	i = ops.rest;
	cli_operands_free(&ops);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (i >= argc) {
		record_usage(stderr);
		return EXIT_USAGE;
	}
#ifndef TD_HAVE_COLLECTOR
	fprintf(stderr, "tracedoc record: this tracedoc was built without the CUPTI collector "
			"(the CUDA toolkit's CUPTI was not found at build time)\n");
	return EXIT_USAGE;
#else
	{
		char lib[PATH_MAX], absdir[PATH_MAX];
		time_t start = time(NULL) - 1;
		pid_t pid;
		int status;
		struct sigaction ign, old_int, old_quit;

		if (collector_path(lib, sizeof(lib)) != 0) {
			fprintf(stderr, "tracedoc record: cannot find libtracedoc_collector.so beside the "
					"tracedoc binary or in ../lib/tracedoc (set TRACEDOC_COLLECTOR)\n");
			return EXIT_USAGE;
		}
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "tracedoc record: cannot create %s: %s\n", dir, strerror(errno));
			return EXIT_INTERNAL;
		}
		if (!realpath(dir, absdir))
			snprintf(absdir, sizeof(absdir), "%s", dir);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		/* libcupti serves NVTX when it is the NVTX injection library: the one the collector
		 * loads, which it names itself once loaded (TRACEDOC_NVTX_SET: ours to change) */
		if (!getenv("NVTX_INJECTION64_PATH")) {
			setenv("NVTX_INJECTION64_PATH", TD_CUPTI_LIBRARY, 1);
			setenv("TRACEDOC_NVTX_SET", "1", 1);
		}
		setenv("TRACEDOC_RECORD_DIR", absdir, 1);
		/* like time(1): the signals a terminal sends go to the program, not to us */
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGINT, &ign, &old_int);
		sigaction(SIGQUIT, &ign, &old_quit);
		pid = fork();
		if (pid == 0) {
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGQUIT, &old_quit, NULL);
			execvp(argv[i], argv + i);
			fprintf(stderr, "tracedoc record: cannot run %s: %s\n", argv[i], strerror(errno));
			_exit(127);
		}
		if (pid < 0) {
			fprintf(stderr, "tracedoc record: fork failed: %s\n", strerror(errno));
			return EXIT_INTERNAL;
		}
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR) {
				fprintf(stderr, "tracedoc record: waitpid failed: %s\n", strerror(errno));
				return EXIT_INTERNAL;
			}
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		list_traces(absdir, start);
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + WTERMSIG(status);
	}
#endif
}
