/* Device discovery (discover.h). */
#include "devices/discover.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/hash.h"
#include "core/base/status_internal.h"
#include "devices/testdev/testdev.h"

/* Appends one kind's line to the summary ("; " between kinds). */
static void say(dg_dev_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(dg_dev_table_t *t, const char *fmt, ...)
{
    size_t len = strlen(t->summary);
    if (len && len + 2 < sizeof(t->summary)) {
        memcpy(t->summary + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->summary + len, sizeof(t->summary) - len, fmt, ap);
    va_end(ap);
}

/* The devices of one kind, appended to t; a kind not built says so. */
static dagger_status_t add_kind(dg_dev_table_t *t, dg_dev_kind_t kind, const char *name)
{
    const dg_dev_backend_t *be = dg_dev_backend(kind);
    if (!be) {
        say(t, "%s: not built", name);
        return DAGGER_OK;
    }
    char why[200] = "";
    int n = be->count(why, sizeof(why));
    if (n <= 0) {
        say(t, "%s: none (%s)", name, why[0] ? why : "no device");
        return DAGGER_OK;
    }
    int kept = 0;
    for (int i = 0; i < n && t->n < DG_DEV_MAX; i++, kept++) {
        dg_dev_found_t *f = &t->dev[t->n];
        dagger_status_t st = be->info(i, &f->info);
        if (st != DAGGER_OK)
            return st;
        f->be = be;
        f->index = i;
        t->n++;
    }
    say(t, "%s: %d%s", name, kept, kept < n ? " (more than a rank's 15 memory spaces: the rest "
        "unused)" : "");
    return DAGGER_OK;
}

dagger_status_t dg_dev_discover(long long test_devices, dg_dev_table_t *out)
{
    memset(out, 0, sizeof(*out));
    if (test_devices < 0 || test_devices > DG_DEV_MAX)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_TEST_DEVICES=%lld: use 0 (none) to %d test "
                        "devices per rank", test_devices, DG_DEV_MAX);
    dg_testdev_configure((int)test_devices);
    dagger_status_t st = add_kind(out, DG_DEV_CUDA, "CUDA");
    if (st == DAGGER_OK)
        st = add_kind(out, DG_DEV_HIP, "HIP");
    if (st == DAGGER_OK)
        st = add_kind(out, DG_DEV_TEST, "test devices");
    if (st == DAGGER_OK)
        dg_dev_locality(out);
    return st;
}

uint64_t dg_dev_ipc_node(const dg_dev_found_t *f, const char *host, int on)
{
    if (!on || !f->be->ipc_export || !f->be->ipc_open)
        return 0;
    if (f->be->kind != DG_DEV_TEST && !f->info.pci_bus_id[0])
        return 0; /* a GPU without a bus id: nothing says which device it is */
    uint64_t h = dg_hash_bytes(DG_HASH_SEED, host, strlen(host) + 1);
    h = dg_hash_bytes(h, f->be->name, strlen(f->be->name) + 1);
    return h ? h : 1;
}

uint64_t dg_dev_ipc_domain(const dg_dev_found_t *f, const char *host, int on)
{
    uint64_t h = dg_dev_ipc_node(f, host, on);
    if (!h)
        return 0;
    if (f->be->kind != DG_DEV_TEST) {
        h = dg_hash_bytes(h, f->info.pci_bus_id, strlen(f->info.pci_bus_id));
    } else {
        uint32_t index = (uint32_t)f->index;
        h = dg_hash_bytes(h, &index, sizeof(index));
    }
    return h ? h : 1;
}
