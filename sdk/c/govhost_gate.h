/*
 * govhost_gate.h: helpers for writing a govhost gate (native ABI v1) in C.
 * The contract is abi/README.md; this header only spares the boilerplate.
 *
 * Usage (one translation unit):
 *
 *   #define GOVHOST_GATE_IMPLEMENTATION
 *   #include "govhost_gate.h"
 *
 *   // Called once per instance with the binding's configuration JSON
 *   // (len bytes, not NUL-terminated). Return 0 to accept it.
 *   int gate_config(const char *json, int32_t len) { return 0; }
 *
 *   // Called per request with the GateInput JSON. Return a NUL-terminated
 *   // GateOutput JSON document that stays valid until the next call
 *   // (a string literal or a static buffer).
 *   const char *gate_decide(const char *json, int32_t len) {
 *     return GOVHOST_ALLOW("mygate.ok");
 *   }
 *
 * Build (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32):
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -o gate.wasm gate.c
 *   govhost plugin check gate.wasm
 *
 * testdata/c/gate.c is a complete gate written without this header.
 */
#ifndef GOVHOST_GATE_H
#define GOVHOST_GATE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GOVHOST_ABI_VERSION 1

/* Constant answers. Reason codes: [a-z0-9][a-z0-9_.-]*, at most 128 bytes. */
#define GOVHOST_ALLOW(code) "{\"decision\":\"allow\",\"reason_code\":\"" code "\"}"
#define GOVHOST_DENY(code) "{\"decision\":\"deny\",\"reason_code\":\"" code "\"}"
#define GOVHOST_REQUIRE_APPROVAL(code) "{\"decision\":\"require_approval\",\"reason_code\":\"" code "\"}"

#define GOVHOST_EXPORT(name) __attribute__((export_name(name)))

/* Implemented by the gate author. */
int gate_config(const char *json, int32_t len);
const char *gate_decide(const char *json, int32_t len);

/* Packs an address and a length as gate_evaluate returns them. */
static inline int64_t govhost_pack(const void *ptr, int32_t len) {
    return ((int64_t)(uintptr_t)ptr << 32) | (int64_t)(uint32_t)len;
}

#ifdef GOVHOST_GATE_IMPLEMENTATION

static char *govhost_in_buf;
static int32_t govhost_in_cap;

GOVHOST_EXPORT("gate_abi_version") int32_t gate_abi_version(void) { return GOVHOST_ABI_VERSION; }

/* One buffer, reused while large enough (the host writes every input here). */
GOVHOST_EXPORT("gate_alloc") int32_t gate_alloc(int32_t size) {
    if (size < 0) return 0;
    if (size > govhost_in_cap) {
        char *b = (char *)realloc(govhost_in_buf, (size_t)size);
        if (!b) return 0;
        govhost_in_buf = b;
        govhost_in_cap = size;
    }
    return (int32_t)(uintptr_t)govhost_in_buf;
}

GOVHOST_EXPORT("gate_configure") int32_t gate_configure(int32_t ptr, int32_t len) {
    return gate_config((const char *)(uintptr_t)ptr, len);
}

GOVHOST_EXPORT("gate_evaluate") int64_t gate_evaluate(int32_t ptr, int32_t len) {
    const char *out = gate_decide((const char *)(uintptr_t)ptr, len);
    if (!out) out = GOVHOST_DENY("sdk.no_answer");
    return govhost_pack(out, (int32_t)strlen(out));
}

#endif /* GOVHOST_GATE_IMPLEMENTATION */
#endif /* GOVHOST_GATE_H */
