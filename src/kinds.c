/*
 * kinds.c — the kind registry: header id -> operations and name, expanded
 * from BG_KIND_LIST, so format.c (validation) and filter.c (the handle) both
 * look kinds up here and neither depends on the other for it.
 */
#include "kind.h"

static const bg_kind_ops *const KIND_OPS[] = {
#define BG__KIND_ENTRY(ID, name, id, properties) [id] = &bg_kind_##name,
    BG_KIND_LIST(BG__KIND_ENTRY)
#undef BG__KIND_ENTRY
};

static const char *const KIND_NAMES[] = {
#define BG__KIND_NAME(ID, name, id, properties) [id] = #name,
    BG_KIND_LIST(BG__KIND_NAME)
#undef BG__KIND_NAME
};

const bg_kind_ops *bg__kind_ops(uint32_t kind) {
  return kind < sizeof KIND_OPS / sizeof KIND_OPS[0] ? KIND_OPS[kind] : NULL;
}

const char *bg_kind_name(int kind) {
  return kind >= 0 && bg__kind_ops((uint32_t)kind) ? KIND_NAMES[kind] : NULL;
}
