/* Element-wise reductions for allreduce: acc[i] = acc[i] op in[i]. Parts
 * arrive in message buffers of any alignment, so elements are moved with
 * memcpy. Integer sums wrap (computed unsigned: no undefined overflow). */
#include <math.h>
#include <string.h>

#include "transport/coll_internal.h"

size_t dg_coll_type_size(dagger_dtype_t type)
{
    switch (type) {
    case DAGGER_I64: return sizeof(int64_t);
    case DAGGER_U64: return sizeof(uint64_t);
    case DAGGER_F64: return sizeof(double);
    default: return 0; /* the other element types are not reduced */
    }
}

int dg_coll_op_valid(dagger_dtype_t type, dagger_op_t op)
{
    switch (op) {
    case DAGGER_OP_ADD:
    case DAGGER_OP_MIN:
    case DAGGER_OP_MAX: return dg_coll_type_size(type) != 0;
    case DAGGER_OP_BOR: return type == DAGGER_I64 || type == DAGGER_U64;
    default: return 0; /* element-wise and array-only operators */
    }
}

const char *dg_coll_type_name(int type)
{
    switch (type) {
    case DAGGER_I64: return "int64";
    case DAGGER_U64: return "uint64";
    case DAGGER_F64: return "double";
    }
    return "unknown type";
}

const char *dg_coll_op_name(int op)
{
    switch (op) {
    case DAGGER_OP_ADD: return "sum";
    case DAGGER_OP_MIN: return "min";
    case DAGGER_OP_MAX: return "max";
    case DAGGER_OP_BOR: return "bitwise or";
    }
    return "unknown op";
}

static int64_t fold_i64(dagger_op_t op, int64_t a, int64_t b)
{
    switch (op) {
    case DAGGER_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case DAGGER_OP_MIN: return b < a ? b : a;
    case DAGGER_OP_MAX: return b > a ? b : a;
    case DAGGER_OP_BOR: return (int64_t)((uint64_t)a | (uint64_t)b);
    default: break; /* rejected by dg_coll_op_valid */
    }
    return a;
}

static uint64_t fold_u64(dagger_op_t op, uint64_t a, uint64_t b)
{
    switch (op) {
    case DAGGER_OP_ADD: return a + b;
    case DAGGER_OP_MIN: return b < a ? b : a;
    case DAGGER_OP_MAX: return b > a ? b : a;
    case DAGGER_OP_BOR: return a | b;
    default: break;
    }
    return a;
}

static double fold_f64(dagger_op_t op, double a, double b)
{
    if ((op == DAGGER_OP_MIN || op == DAGGER_OP_MAX) && (isnan(a) || isnan(b)))
        return isnan(a) ? a : b;
    switch (op) {
    case DAGGER_OP_ADD: return a + b;
    case DAGGER_OP_MIN: return b < a ? b : a;
    case DAGGER_OP_MAX: return b > a ? b : a;
    default: break;
    }
    return a;
}

#define DG_REDUCE_LOOP(T, FOLD)                                              \
    for (size_t i = 0; i < count; i++) {                                     \
        T a, b;                                                              \
        memcpy(&a, (char *)acc + i * sizeof(T), sizeof(T));                  \
        memcpy(&b, (const char *)in + i * sizeof(T), sizeof(T));             \
        a = FOLD(op, a, b);                                                  \
        memcpy((char *)acc + i * sizeof(T), &a, sizeof(T));                  \
    }

void dg_coll_reduce(dagger_dtype_t type, dagger_op_t op, void *acc, const void *in,
                    size_t count)
{
    switch (type) {
    case DAGGER_I64: DG_REDUCE_LOOP(int64_t, fold_i64) break;
    case DAGGER_U64: DG_REDUCE_LOOP(uint64_t, fold_u64) break;
    case DAGGER_F64: DG_REDUCE_LOOP(double, fold_f64) break;
    default: break;
    }
}
