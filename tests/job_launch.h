/* Tests that launch a job of their own binary through tools/dagger-run and
 * judge it from outside: its exit status and the output of every rank and
 * the launcher, within a time limit (a job past it is killed and counted as
 * hung). The binary's main runs the job's side when given its own marker
 * argument, Criterion otherwise. */
#ifndef DG_TEST_JOB_LAUNCH_H
#define DG_TEST_JOB_LAUNCH_H

#include <criterion/criterion.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct outcome {
    int status;         /* wait status of dagger-run */
    int timed_out;
    char out[32768];    /* stdout and stderr of every rank and the launcher */
} outcome_t;

static inline const char *job_project_root(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", __FILE__);
    char *cut = strstr(buf, "/tests/job_launch.h");
    cr_assert_not_null(cut, "cannot find the project root from %s", __FILE__);
    *cut = '\0';
    return buf;
}

static inline void job_slurp(int fd, outcome_t *o, size_t *used)
{
    ssize_t n = read(fd, o->out + *used, sizeof(o->out) - 1 - *used);
    if (n > 0)
        *used += (size_t)n;
    o->out[*used] = '\0';
}

/* Waits for the launcher (pid) to end, reading its output, for at most
 * limit_s seconds. */
static inline void job_wait(pid_t pid, int fd, double limit_s, outcome_t *o)
{
    memset(o, 0, sizeof(*o));
    size_t used = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) > 0)
            job_slurp(fd, o, &used);
        if (waitpid(pid, &o->status, WNOHANG) == pid)
            break;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > limit_s) {
            o->timed_out = 1;
            kill(-pid, SIGKILL);
            waitpid(pid, &o->status, 0);
            break;
        }
    }
    while (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 200) > 0 &&
           used < sizeof(o->out) - 1) {
        size_t before = used;
        job_slurp(fd, o, &used);
        if (used == before)
            break;
    }
}

/* Runs `dagger-run -n nranks <this binary> marker arg` with extra_env
 * ("NAME=value" or NULL) added to the environment. */
static inline void job_launch(int nranks, const char *marker, const char *arg,
                              const char *extra_env, double limit_s, outcome_t *o)
{
    char root[PATH_MAX], run[PATH_MAX + 32], self[PATH_MAX], n_arg[16];
    snprintf(run, sizeof(run), "%s/tools/dagger-run", job_project_root(root, sizeof(root)));
    snprintf(n_arg, sizeof(n_arg), "%d", nranks);
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    cr_assert_gt(n, 0);
    self[n] = '\0';
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        unsetenv("BXFI_MAP"); /* the ranks are not Criterion workers */
        if (extra_env)
            putenv((char *)extra_env);
        execl(run, "dagger-run", "-n", n_arg, self, marker, arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    job_wait(pid, fds[0], limit_s, o);
    close(fds[0]);
}

#endif
