// Runs the CLI in-process, as its tests do: stdout and stderr collected as text, no TTY, the exit code
// returned rather than the process ended.
import { Writable } from "node:stream";
import type { Io } from "../io.js";
import { run } from "../run.js";

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

/**
 * A `malha(args, extra)` over the environment `envOf()` gives at each call (tests fill it once their
 * services are up): `extra` overrides any part of the Io, and `extraEnv` adds variables for one call.
 */
export function cliRunner(envOf: () => Readonly<Record<string, string | undefined>>, sleep: (ms: number) => Promise<void>) {
  return async (args: string[], extra: Partial<Io> & { extraEnv?: Record<string, string> } = {}): Promise<CliResult> => {
    const out = collector();
    const err = collector();
    const { extraEnv, ...io } = extra;
    const code = await run(args, {
      out: out.stream,
      err: err.stream,
      env: { ...envOf(), ...extraEnv },
      tty: false,
      sleep,
      ...io,
    });
    return { code, out: out.text(), err: err.text() };
  };
}
