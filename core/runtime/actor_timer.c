/* Public API: timers. */
#include "core/runtime/actor_api.h"
#include "actors/system_impl.h"

/* Microseconds to nanoseconds, saturating (a delay of centuries is "never"). */
static uint64_t us_to_ns(uint64_t us)
{
    return us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
}

dagger_status_t dagger_timer_start(dagger_runtime_t *rt, dagger_actor_addr_t to,
                                   dagger_msg_type_t type, const void *payload, size_t size,
                                   uint64_t delay_us, uint64_t period_us, dagger_timer_t *timer)
{
    DG_API_SYSTEM(rt, "dagger_timer_start", sys);
    DG_CHECK_ARG(timer, "dagger_timer_start: the timer output pointer is NULL");
    DG_CHECK_ARG(payload || size == 0, "dagger_timer_start: payload is NULL but size is %zu", size);
    dagger_status_t st = dg_act_check_dest(sys, to, type, size, "dagger_timer_start");
    if (st != DAGGER_OK)
        return st;
    return dg_timers_add(&sys->timers, dg_act_self_or_none(sys), to, type, payload, size,
                         us_to_ns(delay_us), us_to_ns(period_us), timer);
}

dagger_status_t dagger_timer_cancel(dagger_runtime_t *rt, dagger_timer_t timer)
{
    DG_API_SYSTEM(rt, "dagger_timer_cancel", sys);
    return dg_timers_cancel(&sys->timers, timer);
}
