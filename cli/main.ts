#!/usr/bin/env node
// The operators' CLI: `malha <command>`; `malha help` lists the commands. A thin typed layer over the
// services' gRPC contracts (libs/gen); see cli/.
import { setTimeout as sleep } from "node:timers/promises";
import { promptSecret } from "./prompt.js";
import { run } from "./run.js";

process.exitCode = await run(process.argv.slice(2), {
  out: process.stdout,
  err: process.stderr,
  env: process.env,
  tty: process.stdout.isTTY === true,
  ...(process.stdin.isTTY ? { promptSecret } : {}),
  sleep: (ms) => sleep(ms),
});
