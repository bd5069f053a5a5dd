// Runs the SDK tests compiled from sdk.test.ts: node test/run.mjs FILE.wasm
import { readFileSync } from "node:fs";

const { instance } = await WebAssembly.instantiate(readFileSync(process.argv[2]), {});
instance.exports._initialize();
const failed = instance.exports.run();
if (failed !== 0) {
  console.error(`FAIL: AssemblyScript SDK check ${failed} failed (sdk/assemblyscript/test/sdk.test.ts)`);
  process.exit(1);
}
console.log("ok: AssemblyScript SDK");
