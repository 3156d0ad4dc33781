import type { ParseArgsConfig } from "node:util";
import type { Io } from "./io.js";
import type { Targets } from "./targets.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Context {
  io: Io;
  targets: Targets;
  values: Values;
  positionals: string[];
  /** --json: machine-readable output, one JSON document (or one per line for live views). */
  json: boolean;
}

export interface Command {
  /** e.g. "certificates import <ibge> <file.pfx>" */
  usage: string;
  summary: string;
  options?: Options;
  /** How many positionals it takes (min, max). */
  positionals?: [number, number];
  run(ctx: Context): Promise<void>;
}

export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}
