/*
 * header_gate.c: a gate written with sdk/c/govhost_gate.h. It requires
 * approval for "bash" and allows everything else. The tool is found by a
 * plain substring search, enough for the host's compact JSON.
 */
#define GOVHOST_GATE_IMPLEMENTATION
#include "govhost_gate.h"

int gate_config(const char *json, int32_t len) { return 0; }

const char *gate_decide(const char *json, int32_t len) {
    static const char needle[] = "\"tool\":\"bash\"";
    for (int32_t i = 0; i + (int32_t)sizeof needle - 1 <= len; i++) {
        if (memcmp(json + i, needle, sizeof needle - 1) == 0) {
            return GOVHOST_REQUIRE_APPROVAL("cheader.bash_needs_approval");
        }
    }
    return GOVHOST_ALLOW("cheader.allowed");
}
