/* A start-up that hangs ends: a launcher's PMIx server that accepts the
 * connection and never answers (as mpirun's did, once in 56 rounds of the
 * 4-rank soak, with a rank blocked in PMIx_Init) leaves dagger_init in
 * PMIx_Init, which nothing can interrupt. With DAGGER_START_TIMEOUT=1 the
 * start-up guard (transport/bootstrap_guard.c) ends the process with status
 * 124 and a line naming PMIx_Init. The "server" here is a listening TCP
 * socket on loopback that never reads: PMIx's client connects to it (the
 * kernel accepts) and waits for its handshake reply for ever. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dagger.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_LIMIT_S 30.0 /* far above the 1 s limit; a hang before the guard */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A listening socket on 127.0.0.1 that nobody serves; its port. */
static int mute_server(int *fd)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(*fd >= 0 && bind(*fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(*fd, 8) == 0 &&
              getsockname(*fd, (struct sockaddr *)&a, &len) == 0);
    return ntohs(a.sin_port);
}

/* The child: the environment a launcher gives its ranks, then dagger_init. */
static void rank_main(int port, int out_fd)
{
    char uri[128];
    snprintf(uri, sizeof(uri), "mute.0;tcp4://127.0.0.1:%d", port);
    static const char *uris[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                 "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"};
    for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++)
        setenv(uris[i], uri, 1);
    setenv("PMIX_NAMESPACE", "mute", 1);
    setenv("PMIX_RANK", "0", 1);
    setenv("PMIX_SECURITY_MODE", "native", 1);
    setenv("DAGGER_START_TIMEOUT", "1", 1);
    dup2(out_fd, 2);
    dagger_runtime_t *rt;
    dagger_status_t st = dagger_init(NULL, NULL, NULL, &rt);
    fprintf(stderr, "dagger_init returned %s: %s\n", dagger_strerror(st), dagger_error_detail());
    _exit(st == DAGGER_OK ? 0 : 3);
}

Test(start_hang, pmix_init_ends_naming_it, .timeout = 60)
{
    int lfd, fds[2];
    int port = mute_server(&lfd);
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        rank_main(port, fds[1]);
    }
    close(fds[1]);
    char out[8192] = "";
    size_t used = 0;
    int status = 0, done = 0;
    double t0 = now_s();
    while (!done && now_s() - t0 < WAIT_LIMIT_S) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        if (poll(&p, 1, 50) > 0 && used < sizeof(out) - 1) {
            ssize_t n = read(fds[0], out + used, sizeof(out) - 1 - used);
            used += n > 0 ? (size_t)n : 0;
            out[used] = '\0';
        }
        done = waitpid(pid, &status, WNOHANG) == pid;
    }
    double took = now_s() - t0;
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(lfd);
    cr_assert(done, "dagger_init still hung in PMIx_Init after %.0f s (DAGGER_START_TIMEOUT=1):\n%s",
              WAIT_LIMIT_S, out);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 124,
              "the hung start-up ended after %.1f s with status 0x%x, not exit 124:\n%s", took,
              status, out);
    cr_assert(strstr(out, "start-up hung in PMIx_Init") && strstr(out, "DAGGER_START_TIMEOUT"),
              "the rank did not say it hung in PMIx_Init:\n%s", out);
}
