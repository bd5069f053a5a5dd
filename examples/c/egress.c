/*
 * egress.c: the egress example gate in C, written with sdk/c/govhost_gate.h
 * (the policy is specified in examples/README.md; its shared cases are
 * examples/egress.cases.json). Build: `make examples`, or
 *
 *   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor \
 *     -Wl,--strip-debug -I sdk/c -o egress.wasm examples/c/egress.c
 */
#define GOVHOST_GATE_IMPLEMENTATION
#include "govhost_gate.h"

#include <ctype.h>
#include <stdio.h>

#define MAX_PATTERNS 128
#define MAX_NAME 256

typedef struct {
    char names[MAX_PATTERNS][MAX_NAME];
    int n;
} pattern_list;

static pattern_list allowed, blocked;
static int approve_unknown;

/* Reads an array of non-empty strings into l, lower-cased. */
static int read_patterns(govhost_json v, pattern_list *l) {
    if (govhost_json_kind(v) != GOVHOST_JSON_ARRAY) return 0;
    govhost_json_iter it = govhost_json_iterate(v);
    govhost_json k, e;
    l->n = 0;
    while (govhost_json_next(&it, &k, &e)) {
        if (l->n == MAX_PATTERNS) return 0;
        char *dst = l->names[l->n];
        int32_t n = govhost_json_string(e, dst, MAX_NAME);
        if (n <= 0) return 0;
        for (int32_t i = 0; i < n; i++) dst[i] = (char)tolower((unsigned char)dst[i]);
        l->n++;
    }
    return 1;
}

int gate_config(const char *json, int32_t len) {
    govhost_json cfg, k, v;
    if (!govhost_json_parse(json, len, &cfg) || govhost_json_kind(cfg) != GOVHOST_JSON_OBJECT) return 1;
    allowed.n = blocked.n = 0;
    approve_unknown = 0;
    govhost_json_iter it = govhost_json_iterate(cfg);
    while (govhost_json_next(&it, &k, &v)) {
        if (govhost_json_eq(k, "allowed_hosts")) {
            if (!read_patterns(v, &allowed)) return 1;
        } else if (govhost_json_eq(k, "blocked_hosts")) {
            if (!read_patterns(v, &blocked)) return 1;
        } else if (govhost_json_eq(k, "approve_unknown")) {
            govhost_json_type t = govhost_json_kind(v);
            if (t != GOVHOST_JSON_TRUE && t != GOVHOST_JSON_FALSE) return 1;
            approve_unknown = t == GOVHOST_JSON_TRUE;
        } else {
            return 1; /* unknown field */
        }
    }
    return 0;
}

static int is_hex(char c) { return govhost__hex(c) >= 0; }

/* Normalises the host of host[:port] or [v6][:port] (a, n bytes) into
 * host. Returns 0 when it is not a valid authority. */
static int authority_host(const char *a, size_t n, char *host, size_t cap) {
    size_t hlen;
    const char *port = NULL;
    size_t plen = 0;
    if (n > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close) return 0;
        hlen = (size_t)(close - a) + 1;
        if (hlen == 2) return 0;
        for (size_t i = 1; i + 1 < hlen; i++)
            if (!is_hex(a[i]) && a[i] != ':' && a[i] != '.') return 0;
        if (hlen < n) {
            if (a[hlen] != ':') return 0;
            port = a + hlen + 1;
            plen = n - hlen - 1;
        }
    } else {
        const char *colon = memchr(a, ':', n);
        hlen = colon ? (size_t)(colon - a) : n;
        if (colon) { port = colon + 1; plen = n - hlen - 1; }
    }
    if (port) {
        if (plen == 0 || plen > 5) return 0;
        for (size_t i = 0; i < plen; i++) if (port[i] < '0' || port[i] > '9') return 0;
    }
    if (hlen + 1 > cap) return 0;
    for (size_t i = 0; i < hlen; i++) host[i] = (char)tolower((unsigned char)a[i]);
    host[hlen] = 0;
    if (host[0] == '[') return 1;
    if (hlen > 0 && host[hlen - 1] == '.') host[--hlen] = 0;
    if (hlen == 0) return 0;
    for (size_t i = 0; i < hlen; i++) {
        char c = host[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return 0;
    }
    return 1;
}

/* The host of scheme://[userinfo@]authority[/?#...]. */
static int url_host(const char *url, char *host, size_t cap) {
    const char *sep = strstr(url, "://");
    if (!sep || sep == url) return 0;
    for (const char *s = url; s < sep; s++) {
        int alpha = isalpha((unsigned char)*s);
        if (!alpha && (s == url || !(isdigit((unsigned char)*s) || *s == '+' || *s == '-' || *s == '.'))) return 0;
    }
    const char *a = sep + 3;
    size_t n = strcspn(a, "/?#");
    if (memchr(a, '\\', n)) return 0;
    for (size_t i = n; i > 0; i--) {
        if (a[i - 1] == '@') { a += i; n -= i; break; }
    }
    return authority_host(a, n, host, cap);
}

static const char *match(const pattern_list *l, const char *host) {
    size_t hn = strlen(host);
    for (int i = 0; i < l->n; i++) {
        const char *p = l->names[i];
        size_t pn = strlen(p);
        if (strcmp(p, host) == 0) return p;
        if (pn >= 2 && p[0] == '*' && p[1] == '.' && hn > pn - 1 && strcmp(host + hn - (pn - 1), p + 1) == 0) return p;
    }
    return NULL;
}

static char host[MAX_NAME], message[MAX_NAME + 64];

/* text decodes a string value into a fresh buffer (the caller frees it). */
static char *text(govhost_json v, int32_t *n) {
    char *buf = malloc((size_t)v.len);
    if (buf && (*n = govhost_json_string(v, buf, v.len)) < 0) { free(buf); buf = NULL; }
    return buf;
}

const char *gate_decide(const char *json, int32_t len) {
    govhost_input in;
    if (!govhost_input_parse(json, len, &in)) return GOVHOST_DENY("egress.bad_input");
    govhost_json u = govhost_json_member(in.arguments, "url");
    govhost_json h = govhost_json_member(in.arguments, "host");
    int has_url = govhost_json_kind(u) == GOVHOST_JSON_STRING;
    int has_host = govhost_json_kind(h) == GOVHOST_JSON_STRING;
    if (!govhost_json_eq(in.operation, "network_access") && !has_url) return GOVHOST_ALLOW("egress.not_network");
    int ok;
    int32_t n = 0;
    if (has_url || has_host) {
        char *s = text(has_url ? u : h, &n);
        ok = s && (has_url ? url_host(s, host, sizeof host) : authority_host(s, (size_t)n, host, sizeof host));
        free(s);
    } else {
        return govhost_answer("deny", "egress.no_host", "egress denied: the request names no host", NULL, NULL);
    }
    if (!ok) return govhost_answer("deny", "egress.bad_url", "egress denied: the request's URL has no valid host", NULL, NULL);
    const char *p;
    if ((p = match(&blocked, host))) {
        snprintf(message, sizeof message, "egress to %s is blocked", host);
        return govhost_answer("deny", "egress.host_blocked", message, NULL, p);
    }
    if ((p = match(&allowed, host))) return govhost_answer("allow", "egress.host_allowed", NULL, NULL, p);
    if (approve_unknown) {
        snprintf(message, sizeof message, "egress to %s needs approval", host);
        return govhost_answer("require_approval", "egress.host_unknown", message, NULL, NULL);
    }
    snprintf(message, sizeof message, "egress to %s is not in the allowlist", host);
    return govhost_answer("deny", "egress.host_not_allowed", message, NULL, NULL);
}
