/* Message type registration: ids from names, idempotence, conflicts, and
 * payload size checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "actors/msgtype.h"
#include "core/base/hash.h"

static dg_msgtypes_t reg;

static void setup(void)
{
    cr_assert_eq(dg_msgtypes_init(&reg), DAGGER_OK);
}

static void teardown(void)
{
    dg_msgtypes_cleanup(&reg);
}

static dagger_status_t add(const char *name, dagger_msg_encoding_t enc, size_t size, uint32_t *id)
{
    dagger_msg_type_desc_t d = {name, enc, size};
    return dg_msgtypes_register(&reg, &d, id);
}

TestSuite(msgtype, .init = setup, .fini = teardown);

Test(msgtype, id_is_the_name_hash_and_registration_is_idempotent)
{
    uint32_t a = 0, b = 0;
    cr_assert_eq(add("kv.put", DAGGER_MSG_FIXED, 16, &a), DAGGER_OK);
    cr_assert_eq(a, dg_name_id("kv.put"));
    cr_assert_eq(add("kv.put", DAGGER_MSG_FIXED, 16, &b), DAGGER_OK);
    cr_assert_eq(a, b);
    const dg_msgtype_t *e = dg_msgtypes_get(&reg, a);
    cr_assert_not_null(e);
    cr_assert_str_eq(e->name, "kv.put");
    cr_assert_str_eq(dg_msgtypes_name(&reg, a), "kv.put");
    cr_assert_null(dg_msgtypes_get(&reg, dg_name_id("kv.get")));
}

Test(msgtype, different_description_for_a_name_is_a_conflict)
{
    uint32_t id;
    cr_assert_eq(add("kv.put", DAGGER_MSG_FIXED, 16, &id), DAGGER_OK);
    cr_assert_eq(add("kv.put", DAGGER_MSG_FIXED, 24, &id), DAGGER_ERR_TYPE_CONFLICT);
    cr_assert(strstr(dagger_error_detail(), "fixed 16") && strstr(dagger_error_detail(), "fixed 24"),
              "%s", dagger_error_detail());
    cr_assert_eq(add("kv.put", DAGGER_MSG_BYTES, 16, &id), DAGGER_ERR_TYPE_CONFLICT);
}

Test(msgtype, two_names_with_one_hash_are_a_conflict_naming_both)
{
    /* Found by search: these two names have the same dg_name_id. */
    const char *x = "test.type.96986", *y = "test.type.95627";
    cr_assert_eq(dg_name_id(x), dg_name_id(y));
    uint32_t id;
    cr_assert_eq(add(x, DAGGER_MSG_FIXED, 8, &id), DAGGER_OK);
    cr_assert_eq(add(y, DAGGER_MSG_FIXED, 8, &id), DAGGER_ERR_TYPE_CONFLICT);
    cr_assert(strstr(dagger_error_detail(), x) && strstr(dagger_error_detail(), y), "%s",
              dagger_error_detail());
    cr_assert_str_eq(dg_msgtypes_get(&reg, dg_name_id(y))->name, x, "the first one stays");
}

Test(msgtype, bad_descriptions_are_invalid_arguments)
{
    uint32_t id;
    cr_assert_eq(dg_msgtypes_register(&reg, NULL, &id), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(add(NULL, DAGGER_MSG_FIXED, 1, &id), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(add("", DAGGER_MSG_FIXED, 1, &id), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(add("x", (dagger_msg_encoding_t)7, 1, &id), DAGGER_ERR_INVALID_ARG);
    char longname[200];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cr_assert_eq(add(longname, DAGGER_MSG_FIXED, 1, &id), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(add("huge", DAGGER_MSG_BYTES, (size_t)UINT32_MAX + 1, &id), DAGGER_ERR_INVALID_ARG);
}

Test(msgtype, sizes_are_checked_per_encoding)
{
    uint32_t fixed, bytes;
    cr_assert_eq(add("fixed16", DAGGER_MSG_FIXED, 16, &fixed), DAGGER_OK);
    cr_assert_eq(add("upto64", DAGGER_MSG_BYTES, 64, &bytes), DAGGER_OK);
    cr_assert_eq(dg_msgtypes_check(&reg, fixed, 16, "t"), DAGGER_OK);
    cr_assert_eq(dg_msgtypes_check(&reg, fixed, 15, "t"), DAGGER_ERR_MSG_SIZE);
    cr_assert(strstr(dagger_error_detail(), "expects 16"), "%s", dagger_error_detail());
    cr_assert_eq(dg_msgtypes_check(&reg, bytes, 0, "t"), DAGGER_OK);
    cr_assert_eq(dg_msgtypes_check(&reg, bytes, 64, "t"), DAGGER_OK);
    cr_assert_eq(dg_msgtypes_check(&reg, bytes, 65, "t"), DAGGER_ERR_MSG_SIZE);
    cr_assert_eq(dg_msgtypes_check(&reg, dg_name_id("nope"), 0, "t"), DAGGER_ERR_MSG_TYPE);
}

Test(msgtype, thousands_of_types_stay_findable_as_the_table_grows)
{
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "grow.%d", i);
        uint32_t id;
        cr_assert_eq(add(name, DAGGER_MSG_FIXED, (size_t)i, &id), DAGGER_OK, "%s", dagger_error_detail());
    }
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "grow.%d", i);
        const dg_msgtype_t *e = dg_msgtypes_get(&reg, dg_name_id(name));
        cr_assert_not_null(e, "%s lost", name);
        cr_assert_eq(e->size, (size_t)i);
    }
}
