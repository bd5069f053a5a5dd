// Tests of the AssemblyScript SDK (`make sdk-test`, run by test/run.mjs
// under node): run() returns 0, or the number of the first failed check.
import { parseJson, parseInput, jsonString, register, configureWith, evaluateWith, Json, GateInput, Verdict, JsonKind } from "../assembly/index";

function configure(config: Json): bool {
  const p = config.get("prefix");
  return p == null || p.isString();
}
function evaluate(input: GateInput): Verdict {
  const a = input.context.actor;
  return Verdict.deny("t." + input.tool).withMessage(a == null ? "" : a.id).withDetail(input.paths.length.toString());
}
register(configure, evaluate);

export function run(): i32 {
  let check = 0;
  const good = ["{}", " [ ] ", "0", "-1.5e+3", "\"a\\u00e9\\n\"", "true", "null", "{\"a\":[1,{\"b\":false}],\"c\":\"\\\"\"}"];
  for (let i = 0; i < good.length; i++) { check++; if (parseJson(good[i]) == null) return check; }
  const bad = ["", "{", "[1,]", "{\"a\"}", "01", "1.", "\"a\u0001\"", "\"\\x\"", "tru", "{} x", "\"\\u12\"", "{\"a\":1,}", "[1 2]", "{1:2}", "[".repeat(100) + "]".repeat(100)];
  for (let i = 0; i < bad.length; i++) { check++; if (parseJson(bad[i]) != null) return check; }

  check++;
  const s = parseJson("\"x\\u00e9\\ud83d\\ude00\\n\\/\\\\\"");
  if (s == null || s.kind != JsonKind.String || s.str != "x\u00e9\u{1F600}\n/\\") return check;
  check++;
  const lone = parseJson("\"\\ud800\"");
  if (lone == null || lone.str != "\uFFFD") return check;
  check++;
  if (jsonString("a\"b\\c\n\u001b") != "\"a\\\"b\\\\c\\u000a\\u001b\"") return check;

  check++;
  const in_ = parseInput("{\"abi_version\":1,\"tool\":\"read\",\"operation\":\"read\",\"arguments\":{\"path\":\"a\"},\"argument_order\":[\"path\"],\"paths\":[{\"arg\":\"path\",\"exists\":true,\"kind\":\"file\",\"nearest_existing\":\"/w\"}],\"context\":{\"actor\":{\"kind\":\"user\",\"id\":\"ana\"},\"metadata\":{\"k\":\"v\"}},\"future\":1}");
  if (in_ == null) return check;
  check++;
  if (in_.abiVersion != 1 || in_.tool != "read" || in_.arguments.getString("path") != "a" || in_.argumentOrder.length != 1) return check;
  check++;
  if (in_.paths.length != 1 || !in_.paths[0].exists || in_.paths[0].nearestExisting != "/w") return check;
  check++;
  if (in_.context.metadata.get("k") != "v" || in_.context.actor == null) return check;
  check++;
  if (parseInput("{\"tool\":\"x\",\"arguments\":[]}") != null) return check;

  check++;
  if (configureWith("{\"prefix\":1}") || configureWith("[]")) return check;
  check++;
  if (!configureWith("{\"prefix\":\"p\"}")) return check;
  check++;
  const out = evaluateWith("{\"tool\":\"bash\",\"arguments\":{},\"paths\":[{}],\"context\":{\"actor\":{\"id\":\"a\\\"b\"}}}").toJSON();
  if (out != "{\"decision\":\"deny\",\"reason_code\":\"t.bash\",\"message\":\"a\\\"b\",\"detail\":\"1\"}") return check;
  check++;
  if (evaluateWith("{\"tool\":\"bash\"}").reasonCode != "sdk.bad_input") return check;
  return 0;
}
