/* Kernel-internal pieces of the send path shared with dispatch. */
#ifndef DG_ACT_SEND_H
#define DG_ACT_SEND_H

#include <dagger/status.h>

#include "actors/msg.h"

struct dg_act_system;
struct dg_actor;
struct dg_reg_slot;

/* The local actor a message header names, held (dg_registry_release(*slot)
 * when done) and checked: running, with a handler for the type. remote: the
 * message came from another rank (a missing handler is counted there). On
 * error nothing is held. */
dagger_status_t dg_act_acquire_dest(struct dg_act_system *sys, const dg_msg_hdr_t *h, int remote,
                                    struct dg_actor **a, struct dg_reg_slot **slot,
                                    const char *what);

/* If req is a request from a thread waiting on a future (of any rank),
 * answers it with an error reply carrying status and detail, so the waiter
 * learns at once why no reply will come. Does nothing otherwise. */
void dg_act_fail_request(struct dg_act_system *sys, const dg_msg_t *req, dagger_status_t status,
                         const char *detail);

/* Logs a problem that may repeat per message only for counts 1, 2, 4, 8...
 * so a flood of them shows without drowning the log. */
int dg_act_log_sampled(uint64_t count);

#endif
