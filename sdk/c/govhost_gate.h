/*
 * govhost_gate.h: the C SDK for govhost gates (native ABI v1, abi/README.md).
 * Header only, no dependencies beyond wasi-libc. It provides
 *
 *   - the ABI exports (gate_abi_version, gate_alloc, gate_configure,
 *     gate_evaluate) around two functions the author writes;
 *   - a JSON reader just sufficient for the ABI's documents: typed access
 *     to the GateInput fields (tool, operation, arguments, path facts,
 *     context) and to a configuration object;
 *   - an answer writer that escapes every string it is given.
 *
 * Usage (one translation unit):
 *
 *   #define GOVHOST_GATE_IMPLEMENTATION
 *   #include "govhost_gate.h"
 *
 *   // Called once per instance with the binding's configuration JSON
 *   // (len bytes, not NUL-terminated; {} when there is none). Return 0 to
 *   // accept it; anything else refuses the binding (gate.config_rejected).
 *   int gate_config(const char *json, int32_t len) { return 0; }
 *
 *   // Called per request with the GateInput JSON. Return a NUL-terminated
 *   // GateOutput JSON document that stays valid until the next call: a
 *   // GOVHOST_ALLOW(...) literal or what govhost_answer returns.
 *   const char *gate_decide(const char *json, int32_t len) {
 *     govhost_input in;
 *     if (!govhost_input_parse(json, len, &in)) return GOVHOST_DENY("mygate.bad_input");
 *     if (govhost_json_eq(in.tool, "bash"))
 *       return govhost_answer("require_approval", "mygate.bash", "bash needs approval", NULL, NULL);
 *     return GOVHOST_ALLOW("mygate.ok");
 *   }
 *
 * Build (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32):
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -o gate.wasm gate.c
 *   govhost plugin check gate.wasm
 *
 * examples/c/egress.c is a complete gate written with this header;
 * testdata/c/gate.c is one written without it.
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
#define GOVHOST_API static __attribute__((unused))

/* Implemented by the gate author. */
int gate_config(const char *json, int32_t len);
const char *gate_decide(const char *json, int32_t len);

/* Packs an address and a length as gate_evaluate returns them. */
static inline int64_t govhost_pack(const void *ptr, int32_t len) {
    return ((int64_t)(uintptr_t)ptr << 32) | (int64_t)(uint32_t)len;
}

/* ------------------------------------------------------------------------
 * JSON reader. A govhost_json is a view of one JSON value inside the
 * document (nothing is copied or allocated). An absent value has
 * type GOVHOST_JSON_NONE. Values are checked when a document is parsed
 * (govhost_input_parse, govhost_json_parse): the accessors below may then
 * assume well-formed JSON.
 * ---------------------------------------------------------------------- */

typedef enum {
    GOVHOST_JSON_NONE = 0, /* absent (or not JSON) */
    GOVHOST_JSON_NULL,
    GOVHOST_JSON_FALSE,
    GOVHOST_JSON_TRUE,
    GOVHOST_JSON_NUMBER,
    GOVHOST_JSON_STRING,
    GOVHOST_JSON_ARRAY,
    GOVHOST_JSON_OBJECT
} govhost_json_type;

typedef struct {
    const char *p;   /* first byte of the value */
    int32_t len;     /* its length in bytes (0: absent) */
} govhost_json;

/* An iterator over an array's elements or an object's members. */
typedef struct {
    const char *p, *end;
    int started;
} govhost_json_iter;

static const char *govhost__ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static int govhost__hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Skips a string at p (on its opening quote), checking its escapes and
 * refusing raw control characters; returns the byte after the closing
 * quote, or NULL. */
static const char *govhost__skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            if (++p >= end) return NULL;
            switch (*p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
            case 'u':
                if (end - p < 5) return NULL;
                for (int i = 1; i <= 4; i++) if (govhost__hex(p[i]) < 0) return NULL;
                p += 4;
                break;
            default: return NULL;
            }
        }
    }
    return NULL;
}

static const char *govhost__skip_number(const char *p, const char *end) {
    const char *s = p;
    if (p < end && *p == '-') p++;
    if (p >= end || *p < '0' || *p > '9') return NULL;
    if (*p == '0') p++;
    else while (p < end && *p >= '0' && *p <= '9') p++;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    return p > s ? p : NULL;
}

static const char *govhost__skip_literal(const char *p, const char *end, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(end - p) < n || memcmp(p, lit, n) != 0) return NULL;
    return p + n;
}

/* Skips one value at p (no leading whitespace), checking its syntax;
 * returns the byte after it or NULL. Nesting is bounded. */
static const char *govhost__skip_value(const char *p, const char *end, int depth) {
    if (p >= end || depth > 64) return NULL;
    switch (*p) {
    case '"': return govhost__skip_string(p, end);
    case 't': return govhost__skip_literal(p, end, "true");
    case 'f': return govhost__skip_literal(p, end, "false");
    case 'n': return govhost__skip_literal(p, end, "null");
    case '{': case '[': {
        char close = *p == '{' ? '}' : ']';
        p = govhost__ws(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = govhost__skip_string(p, end);
                if (!p) return NULL;
                p = govhost__ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p = govhost__ws(p + 1, end);
            }
            p = govhost__skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = govhost__ws(p, end);
            if (p < end && *p == ',') { p = govhost__ws(p + 1, end); continue; }
            if (p < end && *p == close) return p + 1;
            return NULL;
        }
    }
    default: return govhost__skip_number(p, end);
    }
}

/* Parses a whole document: one value, surrounded only by whitespace.
 * Returns 1 and sets *out, or 0 when it is not valid JSON. */
GOVHOST_API int govhost_json_parse(const char *json, int32_t len, govhost_json *out) {
    const char *end = json + len, *p = govhost__ws(json, end);
    const char *v = govhost__skip_value(p, end, 0);
    if (!v || govhost__ws(v, end) != end) return 0;
    out->p = p;
    out->len = (int32_t)(v - p);
    return 1;
}

GOVHOST_API govhost_json_type govhost_json_kind(govhost_json v) {
    if (v.len <= 0) return GOVHOST_JSON_NONE;
    switch (v.p[0]) {
    case 'n': return GOVHOST_JSON_NULL;
    case 'f': return GOVHOST_JSON_FALSE;
    case 't': return GOVHOST_JSON_TRUE;
    case '"': return GOVHOST_JSON_STRING;
    case '[': return GOVHOST_JSON_ARRAY;
    case '{': return GOVHOST_JSON_OBJECT;
    default: return GOVHOST_JSON_NUMBER;
    }
}

GOVHOST_API govhost_json_iter govhost_json_iterate(govhost_json container) {
    govhost_json_iter it = {container.p, container.p + container.len, 0};
    if (container.len <= 0 || (container.p[0] != '[' && container.p[0] != '{')) it.p = it.end;
    return it;
}

/* Advances to the next element (arrays: *key is set to NONE) or member
 * (objects: *key is the member's name as a string value). Returns 0 at the
 * end. */
GOVHOST_API int govhost_json_next(govhost_json_iter *it, govhost_json *key, govhost_json *value) {
    if (it->p >= it->end) return 0;
    int object = 0;
    const char *p = it->p;
    if (!it->started) {
        object = *p == '{';
        p = govhost__ws(p + 1, it->end);
        it->started = object ? 2 : 1;
    } else {
        object = it->started == 2;
        p = govhost__ws(p, it->end);
        if (p >= it->end || *p != ',') { it->p = it->end; return 0; }
        p = govhost__ws(p + 1, it->end);
    }
    if (p >= it->end || *p == '}' || *p == ']') { it->p = it->end; return 0; }
    key->p = p;
    key->len = 0;
    if (object) {
        const char *k = govhost__skip_string(p, it->end);
        if (!k) { it->p = it->end; return 0; }
        key->len = (int32_t)(k - p);
        p = govhost__ws(k, it->end);
        p = govhost__ws(p + 1, it->end); /* the ':' */
    }
    const char *v = govhost__skip_value(p, it->end, 0);
    if (!v) { it->p = it->end; return 0; }
    value->p = p;
    value->len = (int32_t)(v - p);
    it->p = v;
    return 1;
}

/* Decodes the next character of a checked string's body at *p (before
 * end) into u (UTF-8; \u escapes and surrogate pairs decoded, a lone
 * surrogate as U+FFFD) and advances *p. Returns the number of bytes in u. */
static int govhost__next_char(const char **p, const char *end, char u[4]) {
    uint32_t c = (unsigned char)*(*p)++;
    if (c != '\\') { u[0] = (char)c; return 1; }
    char e = *(*p)++;
    switch (e) {
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
        const char *q = *p;
        c = (uint32_t)(govhost__hex(q[0]) << 12 | govhost__hex(q[1]) << 8 | govhost__hex(q[2]) << 4 | govhost__hex(q[3]));
        *p += 4;
        q = *p;
        if (c >= 0xD800 && c <= 0xDBFF && end - q >= 6 && q[0] == '\\' && q[1] == 'u') {
            uint32_t lo = (uint32_t)(govhost__hex(q[2]) << 12 | govhost__hex(q[3]) << 8 | govhost__hex(q[4]) << 4 | govhost__hex(q[5]));
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                *p += 6;
            }
        }
        if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD; /* lone surrogate */
        break;
    }
    default: c = (unsigned char)e; break; /* " \ / */
    }
    if (c < 0x80) { u[0] = (char)c; return 1; }
    if (c < 0x800) { u[0] = (char)(0xC0 | c >> 6); u[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) { u[0] = (char)(0xE0 | c >> 12); u[1] = (char)(0x80 | (c >> 6 & 0x3F)); u[2] = (char)(0x80 | (c & 0x3F)); return 3; }
    u[0] = (char)(0xF0 | c >> 18); u[1] = (char)(0x80 | (c >> 12 & 0x3F)); u[2] = (char)(0x80 | (c >> 6 & 0x3F)); u[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Decodes a string value into dst (cap bytes, NUL-terminated, UTF-8; \u
 * escapes and surrogate pairs decoded). Returns its length, or -1 when v is
 * not a string, does not fit, or contains a NUL character. */
GOVHOST_API int32_t govhost_json_string(govhost_json v, char *dst, int32_t cap) {
    if (govhost_json_kind(v) != GOVHOST_JSON_STRING || cap <= 0) return -1;
    const char *p = v.p + 1, *end = v.p + v.len - 1;
    int32_t n = 0;
    while (p < end) {
        char u[4];
        int k = govhost__next_char(&p, end, u);
        if (k == 1 && u[0] == 0) return -1;
        if (n + k >= cap) return -1;
        memcpy(dst + n, u, (size_t)k);
        n += k;
    }
    dst[n] = 0;
    return n;
}

/* Reports whether v is a string equal to s (after decoding escapes), for
 * strings of any length. */
GOVHOST_API int govhost_json_eq(govhost_json v, const char *s) {
    if (govhost_json_kind(v) != GOVHOST_JSON_STRING) return 0;
    const char *p = v.p + 1, *end = v.p + v.len - 1;
    size_t n = strlen(s), i = 0;
    while (p < end) {
        char u[4];
        int k = govhost__next_char(&p, end, u);
        if (i + (size_t)k > n || memcmp(s + i, u, (size_t)k) != 0) return 0;
        i += (size_t)k;
    }
    return i == n;
}

/* Sets *out to the member key of object obj (the first one of that name).
 * Returns 0 when obj is not an object or has no such member. */
GOVHOST_API int govhost_json_get(govhost_json obj, const char *key, govhost_json *out) {
    if (govhost_json_kind(obj) != GOVHOST_JSON_OBJECT) return 0;
    govhost_json_iter it = govhost_json_iterate(obj);
    govhost_json k, v;
    while (govhost_json_next(&it, &k, &v)) {
        if (govhost_json_eq(k, key)) { *out = v; return 1; }
    }
    return 0;
}

/* Returns the member key of obj, or an absent value. */
GOVHOST_API govhost_json govhost_json_member(govhost_json obj, const char *key) {
    govhost_json v = {0, 0};
    govhost_json_get(obj, key, &v);
    return v;
}

/* ------------------------------------------------------------------------
 * GateInput (abi/README.md §4). Every field is a view into the input; an
 * absent optional field has type GOVHOST_JSON_NONE.
 * ---------------------------------------------------------------------- */

typedef struct {
    int32_t abi_version;
    govhost_json gate_id, phase, tool, operation, action, cwd; /* strings */
    govhost_json arguments;      /* object */
    govhost_json argument_order; /* array of strings */
    govhost_json paths;          /* array of path facts (govhost_path_fact_parse) */
    govhost_json context;        /* object: operation_id, actor {kind,id}, run_id, agent_name, tool_call_id, metadata */
} govhost_input;

/* Parses a GateInput document. Returns 0 when it is not valid JSON, not an
 * object, or lacks a string tool or an object arguments. */
GOVHOST_API int govhost_input_parse(const char *json, int32_t len, govhost_input *in) {
    govhost_json doc;
    memset(in, 0, sizeof *in);
    if (!govhost_json_parse(json, len, &doc) || govhost_json_kind(doc) != GOVHOST_JSON_OBJECT) return 0;
    govhost_json_iter it = govhost_json_iterate(doc);
    govhost_json k, v;
    while (govhost_json_next(&it, &k, &v)) {
        if (govhost_json_eq(k, "abi_version") && govhost_json_kind(v) == GOVHOST_JSON_NUMBER) in->abi_version = (int32_t)strtol(v.p, NULL, 10);
        else if (govhost_json_eq(k, "gate_id")) in->gate_id = v;
        else if (govhost_json_eq(k, "phase")) in->phase = v;
        else if (govhost_json_eq(k, "tool")) in->tool = v;
        else if (govhost_json_eq(k, "operation")) in->operation = v;
        else if (govhost_json_eq(k, "action")) in->action = v;
        else if (govhost_json_eq(k, "cwd")) in->cwd = v;
        else if (govhost_json_eq(k, "arguments")) in->arguments = v;
        else if (govhost_json_eq(k, "argument_order")) in->argument_order = v;
        else if (govhost_json_eq(k, "paths")) in->paths = v;
        else if (govhost_json_eq(k, "context")) in->context = v;
        /* unknown fields are ignored (§4) */
    }
    return govhost_json_kind(in->tool) == GOVHOST_JSON_STRING && govhost_json_kind(in->arguments) == GOVHOST_JSON_OBJECT;
}

/* One path fact of GateInput.paths. */
typedef struct {
    govhost_json arg, raw, resolved, kind, nearest_existing; /* strings */
    int exists;
} govhost_path_fact;

GOVHOST_API int govhost_path_fact_parse(govhost_json v, govhost_path_fact *pf) {
    memset(pf, 0, sizeof *pf);
    if (govhost_json_kind(v) != GOVHOST_JSON_OBJECT) return 0;
    pf->arg = govhost_json_member(v, "arg");
    pf->raw = govhost_json_member(v, "raw");
    pf->resolved = govhost_json_member(v, "resolved");
    pf->kind = govhost_json_member(v, "kind");
    pf->nearest_existing = govhost_json_member(v, "nearest_existing");
    pf->exists = govhost_json_kind(govhost_json_member(v, "exists")) == GOVHOST_JSON_TRUE;
    return 1;
}

/* ------------------------------------------------------------------------
 * Answers (abi/README.md §5).
 * ---------------------------------------------------------------------- */

static char *govhost__out;
static size_t govhost__out_len, govhost__out_cap;

static int govhost__put(const char *s, size_t n) {
    if (govhost__out_len + n + 1 > govhost__out_cap) {
        size_t cap = govhost__out_cap ? govhost__out_cap : 256;
        while (cap < govhost__out_len + n + 1) cap *= 2;
        char *b = (char *)realloc(govhost__out, cap);
        if (!b) return 0;
        govhost__out = b;
        govhost__out_cap = cap;
    }
    memcpy(govhost__out + govhost__out_len, s, n);
    govhost__out_len += n;
    govhost__out[govhost__out_len] = 0;
    return 1;
}

/* Appends "name":"escaped value" (with a leading comma unless first). */
static int govhost__field(const char *name, const char *value, int first) {
    static const char hexd[] = "0123456789abcdef";
    if (!first && !govhost__put(",", 1)) return 0;
    if (!govhost__put("\"", 1) || !govhost__put(name, strlen(name)) || !govhost__put("\":\"", 3)) return 0;
    for (const unsigned char *s = (const unsigned char *)value; *s; s++) {
        char esc[7];
        if (*s == '"' || *s == '\\') { esc[0] = '\\'; esc[1] = (char)*s; if (!govhost__put(esc, 2)) return 0; }
        else if (*s < 0x20) {
            memcpy(esc, "\\u00", 4); esc[4] = hexd[*s >> 4]; esc[5] = hexd[*s & 15];
            if (!govhost__put(esc, 6)) return 0;
        } else if (!govhost__put((const char *)s, 1)) return 0;
    }
    return govhost__put("\"", 1);
}

/* Returns a GateOutput document for decision ("allow", "deny" or
 * "require_approval") and reason_code, with the optional texts (NULL or ""
 * for none; every string is JSON-escaped). The result stays valid until
 * the next call. On allocation failure it returns a constant deny. */
GOVHOST_API const char *govhost_answer(const char *decision, const char *reason_code, const char *message,
                                       const char *detail, const char *matched_rule) {
    govhost__out_len = 0;
    int ok = govhost__put("{", 1) && govhost__field("decision", decision, 1) &&
             govhost__field("reason_code", reason_code, 0);
    if (ok && message && *message) ok = govhost__field("message", message, 0);
    if (ok && detail && *detail) ok = govhost__field("detail", detail, 0);
    if (ok && matched_rule && *matched_rule) ok = govhost__field("matched_rule", matched_rule, 0);
    if (!ok || !govhost__put("}", 1)) return GOVHOST_DENY("sdk.out_of_memory");
    return govhost__out;
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
