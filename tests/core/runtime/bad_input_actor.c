/* Bad-input probes of dagger/actor.h (tests/core/runtime/test_actor_api.c covers
 * the working paths). */

#include "tests/core/runtime/bad_input.h"

static const dagger_actor_addr_t nowhere = {5, 1};  /* a rank the job does not have */
static const dagger_actor_addr_t nobody = {0, 777777}; /* an id never given */

void bi_probe_dagger_actor_none(void)
{
    cr_expect_not(dagger_actor_addr_valid(dagger_actor_none()));
}

void bi_probe_dagger_actor_addr_eq(void)
{
    cr_expect(dagger_actor_addr_eq(dagger_actor_none(), dagger_actor_none()));
    cr_expect_not(dagger_actor_addr_eq(BI.act, dagger_actor_none()));
}

void bi_probe_dagger_actor_addr_valid(void)
{
    cr_expect_not(dagger_actor_addr_valid((dagger_actor_addr_t){-3, 5}));
    cr_expect_not(dagger_actor_addr_valid((dagger_actor_addr_t){0, 0}));
    cr_expect(dagger_actor_addr_valid(BI.act));
}

void bi_probe_dagger_msg_type_register(void)
{
    dagger_msg_type_desc_t d = {.name = "bi.other", .encoding = DAGGER_MSG_BYTES, .size = 16};
    dagger_msg_type_t t;
    E(DAGGER_ERR_BAD_HANDLE, dagger_msg_type_register(NULL, &d, &t));
    E(DAGGER_ERR_BAD_HANDLE, dagger_msg_type_register(BI.dead, &d, &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_register(BI.rt, NULL, &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_register(BI.rt, &d, NULL));
    const char *names[] = {NULL, "", bi_long_name()};
    for (int i = 0; i < 3; i++) {
        dagger_msg_type_desc_t n = d;
        n.name = names[i];
        E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_register(BI.rt, &n, &t));
    }
    dagger_msg_type_desc_t x = d;
    x.encoding = (dagger_msg_encoding_t)9;
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_register(BI.rt, &x, &t));
    x = d;
    x.size = (size_t)1 << 40;
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_register(BI.rt, &x, &t));
    x = d;
    x.name = "bi.ping"; /* registered as FIXED 8 */
    E(DAGGER_ERR_TYPE_CONFLICT, dagger_msg_type_register(BI.rt, &x, &t));
    E(DAGGER_OK, dagger_msg_type_register(BI.rt, &d, &t));
}

void bi_probe_dagger_msg_type_find(void)
{
    dagger_msg_type_t t;
    E(DAGGER_ERR_BAD_HANDLE, dagger_msg_type_find(NULL, "bi.ping", &t));
    E(DAGGER_ERR_BAD_HANDLE, dagger_msg_type_find(BI.dead, "bi.ping", &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_find(BI.rt, NULL, &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_msg_type_find(BI.rt, "bi.ping", NULL));
    E(DAGGER_ERR_NOT_FOUND, dagger_msg_type_find(BI.rt, "bi.never", &t));
    E(DAGGER_OK, dagger_msg_type_find(BI.rt, "bi.ping", &t));
}

static dagger_status_t on_any(dagger_ctx_t *ctx)
{
    (void)ctx;
    return DAGGER_OK;
}

void bi_probe_dagger_actor_spawn(void)
{
    dagger_handler_t h = {BI.mt, on_any};
    dagger_actor_desc_t d = {.name = "bi.spawn", .handlers = &h, .nhandlers = 1};
    dagger_actor_addr_t a;
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_spawn(NULL, &d, &a));
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_spawn(BI.dead, &d, &a));
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, NULL, &a));
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &d, NULL));
    dagger_actor_desc_t x = d;
    x.handlers = NULL;
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &x, &a));
    dagger_handler_t nofn = {BI.mt, NULL};
    x = d;
    x.handlers = &nofn;
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &x, &a));
    dagger_handler_t twice[] = {h, h};
    x = d;
    x.handlers = twice;
    x.nhandlers = 2;
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &x, &a));
    x = d;
    x.pin = 1;
    x.worker = 99;
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &x, &a));
    x.worker = -1;
    E(DAGGER_ERR_INVALID_ARG, dagger_actor_spawn(BI.rt, &x, &a));
    dagger_handler_t unknown = {0x1234567u, on_any};
    x = d;
    x.handlers = &unknown;
    E(DAGGER_ERR_MSG_TYPE, dagger_actor_spawn(BI.rt, &x, &a));
    E(DAGGER_OK, dagger_actor_spawn(BI.rt, &d, &a));
}

void bi_probe_dagger_actor_stop(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_stop(NULL, BI.act));
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_stop(BI.dead, BI.act));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_actor_stop(BI.rt, dagger_actor_none()));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_actor_stop(BI.rt, nowhere));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_actor_stop(BI.rt, nobody));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_actor_stop(BI.rt, BI.act_gone)); /* joined */
    E(DAGGER_OK, dagger_actor_stop(BI.rt, BI.act));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_actor_stop(BI.rt, BI.act));
}

void bi_probe_dagger_actor_join(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_join(NULL, BI.act, 0, NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_actor_join(BI.dead, BI.act, 0, NULL));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_actor_join(BI.rt, dagger_actor_none(), 0, NULL));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_actor_join(BI.rt, nowhere, 0, NULL));
    E(DAGGER_ERR_STATE, dagger_actor_join(BI.rt, BI.act_gone, 0, NULL)); /* joined */
    E(DAGGER_ERR_TIMEOUT, dagger_actor_join(BI.rt, BI.act, 0, NULL));
    E(DAGGER_OK, dagger_actor_stop(BI.rt, BI.act));
    E(DAGGER_OK, dagger_actor_join(BI.rt, BI.act, DAGGER_WAIT_FOREVER, NULL));
    E(DAGGER_ERR_STATE, dagger_actor_join(BI.rt, BI.act, 0, NULL));
}

void bi_probe_dagger_send(void)
{
    char p[8] = {0};
    E(DAGGER_ERR_BAD_HANDLE, dagger_send(NULL, BI.act, BI.mt, p, 8));
    E(DAGGER_ERR_BAD_HANDLE, dagger_send(BI.dead, BI.act, BI.mt, p, 8));
    E(DAGGER_ERR_INVALID_ARG, dagger_send(BI.rt, BI.act, BI.mt, NULL, 8));
    E(DAGGER_ERR_MSG_TYPE, dagger_send(BI.rt, BI.act, 0x1234567u, p, 8));
    E(DAGGER_ERR_MSG_SIZE, dagger_send(BI.rt, BI.act, BI.mt, p, 4));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_send(BI.rt, dagger_actor_none(), BI.mt, p, 8));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_send(BI.rt, nowhere, BI.mt, p, 8));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_send(BI.rt, nobody, BI.mt, p, 8));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_send(BI.rt, BI.act_gone, BI.mt, p, 8));
    E(DAGGER_OK, dagger_send(BI.rt, BI.act, BI.mt, p, 8));
}

void bi_probe_dagger_reply(void)
{
    char p[8] = {0};
    E(DAGGER_ERR_INVALID_ARG, dagger_reply(NULL, BI.mt, p, 8));
    E(DAGGER_ERR_INVALID_ARG, dagger_reply((dagger_ctx_t *)BI.foreign, BI.mt, p, 8));
}

void bi_probe_dagger_ctx_reply_to(void)
{
    dagger_reply_to_t r = dagger_ctx_reply_to(NULL);
    cr_expect_not(dagger_actor_addr_valid(r.addr));
    cr_expect_eq(r.corr, 0);
}

void bi_probe_dagger_reply_later(void)
{
    char p[8] = {0};
    dagger_reply_to_t none = {dagger_actor_none(), 0};
    dagger_reply_to_t gone = {BI.act_gone, 1};
    E(DAGGER_ERR_BAD_HANDLE, dagger_reply_later(NULL, gone, BI.mt, p, 8));
    E(DAGGER_ERR_BAD_HANDLE, dagger_reply_later(BI.dead, gone, BI.mt, p, 8));
    E(DAGGER_ERR_INVALID_ARG, dagger_reply_later(BI.rt, none, BI.mt, p, 8));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_reply_later(BI.rt, gone, BI.mt, p, 8));
}

void bi_probe_dagger_request(void)
{
    char p[8] = {0};
    dagger_reply_t rep = {0};
    E(DAGGER_ERR_BAD_HANDLE, dagger_request(NULL, BI.act, BI.mt, p, 8, 0, &rep));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request(BI.dead, BI.act, BI.mt, p, 8, 0, &rep));
    E(DAGGER_ERR_INVALID_ARG, dagger_request(BI.rt, BI.act, BI.mt, p, 8, 0, NULL));
    dagger_reply_t nobuf = {.capacity = 8};
    E(DAGGER_ERR_INVALID_ARG, dagger_request(BI.rt, BI.act, BI.mt, p, 8, 0, &nobuf));
    E(DAGGER_ERR_MSG_SIZE, dagger_request(BI.rt, BI.act, BI.mt, p, 3, 0, &rep));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_request(BI.rt, BI.act_gone, BI.mt, p, 8, 0, &rep));
    /* The handler returns OK without replying: the wait ends with a timeout. */
    E(DAGGER_ERR_TIMEOUT, dagger_request(BI.rt, BI.act, BI.mt, p, 8, 1000, &rep));
}

void bi_probe_dagger_request_start(void)
{
    char p[8] = {0};
    dagger_request_t req;
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_start(NULL, BI.act, BI.mt, p, 8, &req));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_start(BI.dead, BI.act, BI.mt, p, 8, &req));
    E(DAGGER_ERR_INVALID_ARG, dagger_request_start(BI.rt, BI.act, BI.mt, p, 8, NULL));
    E(DAGGER_ERR_NO_SUCH_ACTOR, dagger_request_start(BI.rt, nowhere, BI.mt, p, 8, &req));
    E(DAGGER_OK, dagger_request_start(BI.rt, BI.act, BI.mt, p, 8, &req));
    E(DAGGER_OK, dagger_request_free(BI.rt, req));
}

void bi_probe_dagger_request_wait(void)
{
    char p[8] = {0};
    dagger_reply_t rep = {0};
    dagger_request_t req;
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_wait(NULL, 1, 0, &rep));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_wait(BI.dead, 1, 0, &rep));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_wait(BI.rt, 987654321, 0, &rep));
    E(DAGGER_OK, dagger_request_start(BI.rt, BI.act, BI.mt, p, 8, &req));
    E(DAGGER_ERR_INVALID_ARG, dagger_request_wait(BI.rt, req, 0, NULL));
    E(DAGGER_ERR_TIMEOUT, dagger_request_wait(BI.rt, req, 0, &rep));
    E(DAGGER_OK, dagger_request_free(BI.rt, req));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_wait(BI.rt, req, 0, &rep));
}

void bi_probe_dagger_request_free(void)
{
    char p[8] = {0};
    dagger_request_t req;
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_free(NULL, 1));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_free(BI.dead, 1));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_free(BI.rt, 987654321));
    E(DAGGER_OK, dagger_request_start(BI.rt, BI.act, BI.mt, p, 8, &req));
    E(DAGGER_OK, dagger_request_free(BI.rt, req));
    E(DAGGER_ERR_BAD_HANDLE, dagger_request_free(BI.rt, req));
}

void bi_probe_dagger_ask(void)
{
    char p[8] = {0};
    uint64_t corr;
    E(DAGGER_ERR_STATE, dagger_ask(NULL, BI.act, BI.mt, p, 8, &corr));
    E(DAGGER_ERR_STATE, dagger_ask((dagger_ctx_t *)BI.foreign, BI.act, BI.mt, p, 8, &corr));
}

void bi_probe_dagger_timer_start(void)
{
    char p[8] = {0};
    dagger_timer_t t;
    E(DAGGER_ERR_BAD_HANDLE, dagger_timer_start(NULL, BI.act, BI.mt, p, 8, 10, 0, &t));
    E(DAGGER_ERR_BAD_HANDLE, dagger_timer_start(BI.dead, BI.act, BI.mt, p, 8, 10, 0, &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_timer_start(BI.rt, BI.act, BI.mt, p, 8, 10, 0, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_timer_start(BI.rt, BI.act, BI.mt, NULL, 8, 10, 0, &t));
    E(DAGGER_ERR_MSG_TYPE, dagger_timer_start(BI.rt, BI.act, 0x1234567u, p, 8, 10, 0, &t));
    E(DAGGER_ERR_MSG_SIZE, dagger_timer_start(BI.rt, BI.act, BI.mt, p, 2, 10, 0, &t));
    E(DAGGER_ERR_ACTOR_STOPPED, dagger_timer_start(BI.rt, BI.act_gone, BI.mt, p, 8, 10, 0, &t));
    E(DAGGER_OK, dagger_timer_start(BI.rt, BI.act, BI.mt, p, 8, 1000000, 0, &t));
    E(DAGGER_OK, dagger_timer_cancel(BI.rt, t));
}

void bi_probe_dagger_timer_cancel(void)
{
    char p[8] = {0};
    dagger_timer_t t;
    E(DAGGER_ERR_BAD_HANDLE, dagger_timer_cancel(NULL, 1));
    E(DAGGER_ERR_BAD_HANDLE, dagger_timer_cancel(BI.dead, 1));
    E(DAGGER_ERR_NOT_FOUND, dagger_timer_cancel(BI.rt, 987654321));
    E(DAGGER_OK, dagger_timer_start(BI.rt, BI.act, BI.mt, p, 8, 1000000, 0, &t));
    E(DAGGER_OK, dagger_timer_cancel(BI.rt, t));
    E(DAGGER_ERR_NOT_FOUND, dagger_timer_cancel(BI.rt, t));
}

/* The context getters answer zero values for NULL (a context is valid only
 * inside its handler; a dangling one cannot be detected). */
void bi_probe_dagger_ctx_self(void)
{
    cr_expect_not(dagger_actor_addr_valid(dagger_ctx_self(NULL)));
}

void bi_probe_dagger_ctx_sender(void)
{
    cr_expect_not(dagger_actor_addr_valid(dagger_ctx_sender(NULL)));
}

void bi_probe_dagger_ctx_type(void)
{
    cr_expect_eq(dagger_ctx_type(NULL), 0);
}

void bi_probe_dagger_ctx_payload(void)
{
    cr_expect_null(dagger_ctx_payload(NULL));
}

void bi_probe_dagger_ctx_size(void)
{
    cr_expect_eq(dagger_ctx_size(NULL), 0);
}

void bi_probe_dagger_ctx_corr(void)
{
    cr_expect_eq(dagger_ctx_corr(NULL), 0);
}

void bi_probe_dagger_ctx_is_reply(void)
{
    cr_expect_eq(dagger_ctx_is_reply(NULL), 0);
}

void bi_probe_dagger_ctx_state(void)
{
    cr_expect_null(dagger_ctx_state(NULL));
}

void bi_probe_dagger_ctx_runtime(void)
{
    cr_expect_null(dagger_ctx_runtime(NULL));
}

void bi_probe_dagger_ctx_worker(void)
{
    cr_expect_eq(dagger_ctx_worker(NULL), -1);
}
