/* SPDX-License-Identifier: MIT */
/* A report file (.nsys-rep, .qdrep) made readable: nsys itself exports it to SQLite, run with
 * an argument vector (posix_spawnp: no shell, nothing of the path interpreted), its standard
 * output sent to standard error (ours stays the report's), its input /dev/null, into a
 * directory of its own under $TMPDIR that is removed once the export is read. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "parser/nsys.h"

extern char **environ;

/* s quoted for a shell when it needs it, cut to fit cap. */
static const char *shell_word(char *buf, size_t cap, const char *s)
{
	size_t i, o = 0;
	int plain = *s != '\0';

	for (i = 0; s[i]; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-+,:@%",
			    s[i]))
			plain = 0;
	if (plain) {
		snprintf(buf, cap, "%s", s);
		return buf;
	}
	buf[o++] = '\'';
	for (i = 0; s[i] && o + 6 < cap; i++) {
		if (s[i] == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = s[i];
		}
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

/* The command that exports path beside it: "nsys export --type sqlite --output X.sqlite X". */
static void export_command(char *buf, size_t cap, const char *path)
{
	char out[1024], q1[1200], q2[1200];
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);

	snprintf(out, sizeof(out), "%.*s.sqlite", (int)(stem < 1000 ? stem : 1000), path);
	snprintf(buf, cap, "nsys export --type sqlite --output %s %s",
		 shell_word(q1, sizeof(q1), out), shell_word(q2, sizeof(q2), path));
}

/* 1 when an executable nsys is in a directory of PATH. */
static int nsys_on_path(void)
{
	const char *p = getenv("PATH");
	char dir[4096];

	while (p && *p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && n < sizeof(dir) - 6) {
			snprintf(dir, sizeof(dir), "%.*s/nsys", (int)n, p);
			if (access(dir, X_OK) == 0)
				return 1;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

int td_nsys_load_report(const char *path, struct td_trace *t, struct td_error *err)
{
	char cmd[2600], dir[4096], out[4200];
	const char *tmp = getenv("TMPDIR");
	char *argv[8];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc, status = 0;

	memset(err, 0, sizeof(*err));
	export_command(cmd, sizeof(cmd), path);
	if (!td_nsys_available())
		return td_error_set(err, TD_EFORMAT, "an Nsight Systems report, and this tracedoc "
				    "was built without SQLite to read its export (install "
				    "libsqlite3-dev and build again); its export: %s", cmd);
	if (!nsys_on_path())
		return td_error_set(err, TD_EFORMAT, "an Nsight Systems report: tracedoc reads its "
				    "SQLite export, and nsys is not on PATH to make it; run\n  %s\n"
				    "and give tracedoc the .sqlite file", cmd);
	snprintf(dir, sizeof(dir), "%s/tracedoc-nsys-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return td_error_set(err, TD_EIO, "cannot make a directory for the report's export "
				    "(%s: %s); run\n  %s\nand give tracedoc the .sqlite file", dir,
				    strerror(errno), cmd);
	snprintf(out, sizeof(out), "%s/report.sqlite", dir);
	argv[0] = (char *)"nsys";
	argv[1] = (char *)"export";
	argv[2] = (char *)"--type";
	argv[3] = (char *)"sqlite";
	argv[4] = (char *)"--output";
	argv[5] = out;
	argv[6] = (char *)path;
	argv[7] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	rc = posix_spawnp(&pid, "nsys", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || access(out, R_OK) != 0) {
		unlink(out);
		rmdir(dir);
		if (rc != 0)
			return td_error_set(err, TD_EIO, "cannot run nsys (%s); run\n  %s\nand give "
					    "tracedoc the .sqlite file", strerror(rc), cmd);
		return td_error_set(err, TD_EFORMAT, "nsys export failed (%s %d); run\n  %s\nto "
				    "see why", WIFEXITED(status) ? "exit status" : "signal",
				    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), cmd);
	}
	rc = td_nsys_load(out, t, err);
	unlink(out);
	rmdir(dir);
	return rc;
}
