// An upstream wrapper for govhost's e2e tests: it runs the real server and
// appends every line the server receives on stdin to LOG, so a test can
// prove what reached the upstream. It prints "tap: upstream pid N" on stderr.
// Usage: node tap.mjs LOG COMMAND [ARGS...]
import { spawn } from "node:child_process";
import fs from "node:fs";

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
process.stderr.write(`tap: upstream pid ${child.pid}\n`);
process.stdin.on("data", (chunk) => {
  fs.appendFileSync(log, chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code, signal) => process.exit(signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : code));
