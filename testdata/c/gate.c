/*
 * gate.c: a govhost gate in C, written from abi/README.md alone (ABI v1,
 * native exports, no govhost code). It denies one tool, named by its
 * configuration {"deny_tool": "..."} (default "web_fetch"), and allows
 * everything else.
 *
 * Built by `make fixtures` (Debian: apt-get install -y clang lld wasi-libc
 * libclang-rt-14-dev-wasm32):
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor \
 *     -Wl,--strip-debug -o internal/wasmfixtures/wasm/c_gate.wasm testdata/c/gate.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define EXPORT(name) __attribute__((export_name(name)))

static char *in_buf;          /* the buffer gate_alloc hands out */
static int32_t in_cap;
static char deny_tool[64] = "web_fetch";
static char out[256];         /* the answer; valid until the next call */

EXPORT("gate_abi_version") int32_t gate_abi_version(void) { return 1; }

EXPORT("gate_alloc") int32_t gate_alloc(int32_t size) {
    if (size < 0) return 0;
    if (size > in_cap) {
        char *b = realloc(in_buf, (size_t)size);
        if (!b) return 0;
        in_buf = b;
        in_cap = size;
    }
    return (int32_t)(uintptr_t)in_buf;
}

/* --- a minimal JSON walker: enough to find top-level string members --- */

static const char *ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* skips a string starting at p (on the opening quote); returns the char
 * after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        if (*p == '\\') { p++; continue; }
        if (*p == '"') return p + 1;
    }
    return NULL;
}

static const char *skip_value(const char *p, const char *end, int depth) {
    p = ws(p, end);
    if (p >= end || depth > 64) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = ws(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(ws(p, end), end);
                if (!p) return NULL;
                p = ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            p = skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = ws(p, end);
            if (p < end && *p == ',') { p++; continue; }
            if (p < end && *p == close) return p + 1;
            return NULL;
        }
    }
    /* number, true, false, null */
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
    return p;
}

/* copies the top-level string member `key` of the object in [p,end) into
 * dst (escapes are not decoded; a value with escapes never matches a plain
 * tool name). Returns 1 if found. */
static int member(const char *p, const char *end, const char *key, char *dst, size_t cap) {
    size_t klen = strlen(key);
    p = ws(p, end);
    if (p >= end || *p != '{') return 0;
    p++;
    for (;;) {
        p = ws(p, end);
        if (p < end && *p == '}') return 0;
        const char *k = p;
        p = skip_string(p, end);
        if (!p) return 0;
        int match = (size_t)(p - k) == klen + 2 && memcmp(k + 1, key, klen) == 0;
        p = ws(p, end);
        if (p >= end || *p != ':') return 0;
        p = ws(p + 1, end);
        const char *v = p;
        p = skip_value(p, end, 0);
        if (!p) return 0;
        if (match && *v == '"') {
            size_t n = (size_t)(p - v) - 2;
            if (n >= cap) n = cap - 1;
            memcpy(dst, v + 1, n);
            dst[n] = 0;
            return 1;
        }
        p = ws(p, end);
        if (p < end && *p == ',') { p++; continue; }
        return 0;
    }
}

static int64_t answer(int n) {
    return ((int64_t)(uintptr_t)out << 32) | (int64_t)n;
}

EXPORT("gate_configure") int32_t gate_configure(int32_t ptr, int32_t len) {
    const char *p = (const char *)(uintptr_t)ptr, *end = p + len;
    p = ws(p, end);
    if (p >= end || *p != '{') return 1;            /* not an object: refuse */
    if (!skip_value(p, end, 0)) return 1;          /* malformed: refuse */
    char tool[64];
    if (member(p, end, "deny_tool", tool, sizeof tool)) {
        if (tool[0] == 0) return 1;
        strcpy(deny_tool, tool);
    }
    return 0;
}

EXPORT("gate_evaluate") int64_t gate_evaluate(int32_t ptr, int32_t len) {
    const char *p = (const char *)(uintptr_t)ptr, *end = p + len;
    char tool[64];
    int n;
    if (!member(p, end, "tool", tool, sizeof tool)) {
        n = snprintf(out, sizeof out, "{\"decision\":\"deny\",\"reason_code\":\"cgate.bad_input\"}");
    } else if (strcmp(tool, deny_tool) == 0) {
        n = snprintf(out, sizeof out,
                     "{\"decision\":\"deny\",\"reason_code\":\"cgate.tool_denied\",\"matched_rule\":\"deny_tool\"}");
    } else {
        n = snprintf(out, sizeof out, "{\"decision\":\"allow\",\"reason_code\":\"cgate.allowed\"}");
    }
    return answer(n);
}

EXPORT("gate_describe") int64_t gate_describe(void) {
    int n = snprintf(out, sizeof out,
                     "{\"name\":\"cgate\",\"version\":\"1.0.0\",\"summary\":\"C gate written from abi/README.md\"}");
    return answer(n);
}
