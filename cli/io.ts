import type { Writable } from "node:stream";

/** Everything a command touches outside the network, so tests run commands in-process. */
export interface Io {
  out: Writable;
  err: Writable;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal: live tables redraw in place, otherwise frames are appended. */
  tty: boolean;
  /** Asks for a secret on the terminal without echo; undefined when there is no terminal. */
  promptSecret?: (question: string) => Promise<string>;
  /** Sleeps between refreshes of a live view; replaceable so tests do not wait on wall-clock. */
  sleep: (ms: number) => Promise<void>;
}

export function write(stream: Writable, text: string): void {
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}
