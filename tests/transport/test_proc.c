/* Telling whether a peer's process is still there (/proc): running,
 * ended (with its wait status while it is a zombie), or gone, and a reused
 * pid is not mistaken for the peer. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/tx_proc.h"

Test(proc, self_is_alive)
{
    dg_proc_id_t me;
    cr_assert_eq(dg_proc_self(&me), 0);
    cr_assert_eq(me.pid, getpid());
    cr_assert_gt(me.starttime, 0);
    cr_assert_eq(dg_proc_probe(&me, NULL), DG_PROC_ALIVE);
    dg_proc_id_t other = me;
    other.starttime++;
    cr_assert_eq(dg_proc_probe(&other, NULL), DG_PROC_GONE, "a reused pid must not look alive");
}

/* A child that ends as told; returns its identity, unreaped. */
static dg_proc_id_t ended_child(int how)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (how < 0)
            raise(-how);
        _exit(how);
    }
    dg_proc_id_t id = {.pid = pid, .starttime = 0};
    siginfo_t info;
    waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT); /* wait, leave the zombie */
    return id;
}

Test(proc, ended_process_reports_its_status)
{
    dg_proc_id_t id = ended_child(3);
    int ws = 0;
    cr_assert_eq(dg_proc_probe(&id, &ws), DG_PROC_EXITED);
    char text[64] = "";
    dg_proc_describe(text, sizeof(text), DG_PROC_EXITED, ws);
    cr_assert_str_eq(text, "exited with status 3");
    waitpid(id.pid, NULL, 0);
    cr_assert_eq(dg_proc_probe(&id, &ws), DG_PROC_GONE);
    text[0] = '\0';
    dg_proc_describe(text, sizeof(text), DG_PROC_GONE, 0);
    cr_assert_str_eq(text, "is gone");
}

Test(proc, killed_process_names_the_signal)
{
    dg_proc_id_t id = ended_child(-SIGKILL);
    int ws = 0;
    cr_assert_eq(dg_proc_probe(&id, &ws), DG_PROC_EXITED);
    char text[64] = "rank 1 ";
    dg_proc_describe(text, sizeof(text), DG_PROC_EXITED, ws);
    cr_assert_str_eq(text, "rank 1 was killed by signal 9");
    waitpid(id.pid, NULL, 0);
}

Test(proc, string_building_is_bounded)
{
    char buf[8] = "";
    dg_str_append(buf, sizeof(buf), "abc");
    dg_str_append_int(buf, sizeof(buf), -1234567);
    cr_assert_str_eq(buf, "abc-123");
    buf[0] = '\0';
    dg_str_append_int(buf, sizeof(buf), 0);
    cr_assert_str_eq(buf, "0");
}
