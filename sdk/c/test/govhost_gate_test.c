/*
 * Native tests of the C SDK's JSON reader and answer writer (`make
 * sdk-test`). The ABI exports are not compiled here: they are exercised
 * through the host by the examples' shared cases.
 */
#include "govhost_gate.h"

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                    \
        }                                                                  \
    } while (0)

int gate_config(const char *json, int32_t len) { (void)json; (void)len; return 0; }
const char *gate_decide(const char *json, int32_t len) { (void)json; (void)len; return GOVHOST_ALLOW("t.ok"); }

static int parses(const char *doc) {
    govhost_json v;
    return govhost_json_parse(doc, (int32_t)strlen(doc), &v);
}

static void test_parse(void) {
    const char *good[] = {"{}", " [ ] ", "0", "-1.5e+3", "\"a\\u00e9\\n\"", "true", "null",
                          "{\"a\":[1,{\"b\":false}],\"c\":\"\\\"\"}"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(parses(good[i]));
    const char *bad[] = {"", "{", "[1,]", "{\"a\"}", "01", "1.", "\"a\x01\"", "\"\\x\"", "tru", "{} x",
                         "\"\\u12\"", "{\"a\":1,}", "[1 2]", "{1:2}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (parses(bad[i])) fprintf(stderr, "accepted %s\n", bad[i]);
        CHECK(!parses(bad[i]));
    }
    char deep[300];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[200] = 0;
    CHECK(!parses(deep));
}

static void test_strings(void) {
    const char *doc = "\"x\\u00e9\\ud83d\\ude00\\n\\/\\\\\"";
    govhost_json v;
    CHECK(govhost_json_parse(doc, (int32_t)strlen(doc), &v));
    char buf[32];
    CHECK(govhost_json_string(v, buf, sizeof buf) == 10);
    CHECK(strcmp(buf, "x\xc3\xa9\xf0\x9f\x98\x80\n/\\") == 0);
    CHECK(govhost_json_string(v, buf, 5) == -1); /* does not fit */
    CHECK(govhost_json_eq(v, "x\xc3\xa9\xf0\x9f\x98\x80\n/\\"));
    const char *nul = "\"a\\u0000b\"";
    CHECK(govhost_json_parse(nul, (int32_t)strlen(nul), &v));
    CHECK(govhost_json_string(v, buf, sizeof buf) == -1); /* an embedded NUL is refused */
    char longdoc[700], longstr[600];
    memset(longstr, 'a', 599);
    longstr[599] = 0;
    snprintf(longdoc, sizeof longdoc, "\"\\u0061%s\"", longstr + 1);
    CHECK(govhost_json_parse(longdoc, (int32_t)strlen(longdoc), &v));
    CHECK(govhost_json_eq(v, longstr)); /* escapes in a long string */
    longstr[598] = 'b';
    CHECK(!govhost_json_eq(v, longstr));
    CHECK(!govhost_json_eq(v, "a"));
    const char *lone = "\"\\ud800\"";
    CHECK(govhost_json_parse(lone, (int32_t)strlen(lone), &v));
    CHECK(govhost_json_string(v, buf, sizeof buf) == 3 && strcmp(buf, "\xef\xbf\xbd") == 0);
}

static void test_input(void) {
    const char *doc =
        "{\"abi_version\":1,\"gate_id\":\"g\",\"phase\":\"check\",\"tool\":\"re\\u0061d\",\"operation\":\"read\","
        "\"arguments\":{\"path\":\"a\",\"n\":[1,2]},\"argument_order\":[\"path\"],\"cwd\":\"/w\","
        "\"paths\":[{\"arg\":\"path\",\"raw\":\"a\",\"resolved\":\"/w/a\",\"exists\":true,\"kind\":\"file\",\"nearest_existing\":\"/w/a\"}],"
        "\"context\":{\"actor\":{\"kind\":\"user\",\"id\":\"ana\"},\"metadata\":{\"k\":\"v\"}},\"future\":{}}";
    govhost_input in;
    CHECK(govhost_input_parse(doc, (int32_t)strlen(doc), &in));
    CHECK(in.abi_version == 1);
    CHECK(govhost_json_eq(in.tool, "read"));
    CHECK(govhost_json_eq(in.operation, "read"));
    CHECK(govhost_json_kind(in.action) == GOVHOST_JSON_NONE);
    CHECK(govhost_json_eq(govhost_json_member(in.arguments, "path"), "a"));
    CHECK(govhost_json_kind(govhost_json_member(in.arguments, "n")) == GOVHOST_JSON_ARRAY);
    CHECK(govhost_json_kind(govhost_json_member(in.arguments, "missing")) == GOVHOST_JSON_NONE);
    govhost_json_iter it = govhost_json_iterate(in.paths);
    govhost_json k, v;
    int n = 0;
    while (govhost_json_next(&it, &k, &v)) {
        govhost_path_fact pf;
        CHECK(govhost_path_fact_parse(v, &pf));
        CHECK(pf.exists && govhost_json_eq(pf.kind, "file") && govhost_json_eq(pf.resolved, "/w/a"));
        n++;
    }
    CHECK(n == 1);
    govhost_json actor = govhost_json_member(in.context, "actor");
    CHECK(govhost_json_eq(govhost_json_member(actor, "id"), "ana"));

    const char *no_args = "{\"tool\":\"x\",\"arguments\":[]}";
    CHECK(!govhost_input_parse(no_args, (int32_t)strlen(no_args), &in));
    const char *broken = "{\"tool\":\"x\",\"arguments\":{}";
    CHECK(!govhost_input_parse(broken, (int32_t)strlen(broken), &in));
}

static void test_answer(void) {
    const char *out = govhost_answer("deny", "t.x", "say \"no\"\n\x1b", NULL, "");
    CHECK(strcmp(out, "{\"decision\":\"deny\",\"reason_code\":\"t.x\",\"message\":\"say \\\"no\\\"\\u000a\\u001b\"}") == 0);
    govhost_json v;
    CHECK(govhost_json_parse(out, (int32_t)strlen(out), &v));
    out = govhost_answer("allow", "t.ok", NULL, "d\\", "rule");
    CHECK(strcmp(out, "{\"decision\":\"allow\",\"reason_code\":\"t.ok\",\"detail\":\"d\\\\\",\"matched_rule\":\"rule\"}") == 0);
}

int main(void) {
    test_parse();
    test_strings();
    test_input();
    test_answer();
    if (failures) {
        fprintf(stderr, "FAIL: %d checks failed\n", failures);
        return 1;
    }
    printf("ok: C SDK\n");
    return 0;
}
