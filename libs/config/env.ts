import { readFileSync } from "node:fs";

/**
 * A configuration problem that must stop the process. The message is exactly the one line an operator
 * sees: the variable's name and what is wrong with it, never its value (it may be a secret).
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`config error: ${variable} ${problem}`);
    this.name = "ConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

interface Common<T> {
  /** Used when the variable is unset or empty. Without it the variable is required. */
  default?: T;
}

/**
 * Reads environment variables into typed values, once, at start-up. Every accessor throws a
 * ConfigError naming the variable, so `main` can print one line and exit.
 */
export class EnvReader {
  constructor(private readonly env: Env = process.env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === "" ? undefined : value.trim();
  }

  private required<T>(name: string, opts: Common<T> | undefined, hint: string): T | string {
    const value = this.raw(name);
    if (value !== undefined) return value;
    if (opts && "default" in opts) return opts.default as T;
    throw new ConfigError(name, `is required (${hint})`);
  }

  string(name: string, opts?: Common<string> & { pattern?: RegExp; hint?: string }): string {
    const value = this.raw(name);
    if (value === undefined) {
      if (opts && "default" in opts) return opts.default as string;
      throw new ConfigError(name, `is required${opts?.hint ? ` (${opts.hint})` : ""}`);
    }
    if (opts?.pattern && !opts.pattern.test(value)) {
      throw new ConfigError(name, `is malformed (expected ${opts.hint ?? opts.pattern.source})`);
    }
    return value;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  int(name: string, opts?: Common<number> & { min?: number; max?: number }): number {
    const min = opts?.min ?? Number.MIN_SAFE_INTEGER;
    const max = opts?.max ?? Number.MAX_SAFE_INTEGER;
    const hint = `an integer between ${min} and ${max}`;
    const value = this.required(name, opts, hint);
    if (typeof value === "number") return value;
    if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be ${hint}, got a non-integer`);
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(name, `must be ${hint}, got ${value}`);
    }
    return n;
  }

  port(name: string, opts?: Common<number>): number {
    return this.int(name, { ...opts, min: 0, max: 65535 });
  }

  /** Seconds as a number (fractions allowed), returned in milliseconds. */
  durationMs(name: string, opts?: Common<number> & { minSeconds?: number; maxSeconds?: number }): number {
    const min = opts?.minSeconds ?? 0;
    const max = opts?.maxSeconds ?? 365 * 24 * 3600;
    const hint = `a number of seconds between ${min} and ${max}`;
    const value = this.raw(name);
    if (value === undefined) {
      if (opts && "default" in opts) return opts.default as number;
      throw new ConfigError(name, `is required (${hint})`);
    }
    if (!/^\d+(\.\d+)?$/.test(value)) throw new ConfigError(name, `must be ${hint}, got a non-number`);
    const seconds = Number(value);
    if (seconds < min || seconds > max) throw new ConfigError(name, `must be ${hint}, got ${value}`);
    return Math.round(seconds * 1000);
  }

  bool(name: string, opts?: Common<boolean>): boolean {
    const value = this.required(name, opts, "true or false");
    if (typeof value === "boolean") return value;
    const v = value.toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new ConfigError(name, "must be true or false");
  }

  oneOf<const T extends string>(name: string, values: readonly T[], opts?: Common<T>): T {
    const value = this.required(name, opts, `one of ${values.join(", ")}`);
    if (!(values as readonly string[]).includes(value)) {
      throw new ConfigError(name, `must be one of ${values.join(", ")}`);
    }
    return value as T;
  }

  /** A URL whose scheme is one of `protocols` (e.g. ["mysql:"]). The value is never echoed: it may hold a password. */
  url(name: string, protocols: readonly string[], opts?: Common<string> & { hint?: string }): string {
    const hint = opts?.hint ?? `a ${protocols.map((p) => p.replace(/:$/, "")).join(" or ")} URL`;
    const value = this.required(name, opts, hint);
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(name, `is not a valid URL (expected ${hint})`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name, `must use ${protocols.join(" or ")} (expected ${hint})`);
    }
    return value;
  }

  /**
   * A value checked by `parse`; whatever it throws becomes this variable's one-line problem. The parser's
   * message must not repeat the value when it may be secret.
   */
  parse<T>(name: string, parse: (value: string) => T, opts?: { hint?: string }): T {
    const value = this.raw(name);
    if (value === undefined) throw new ConfigError(name, `is required${opts?.hint ? ` (${opts.hint})` : ""}`);
    try {
      return parse(value);
    } catch (err) {
      throw new ConfigError(name, `is invalid: ${(err as Error).message}`);
    }
  }

  /** Reads a file named by the variable; the variable is optional unless `required` is set. */
  file(name: string, opts?: { required?: boolean }): Buffer | undefined {
    const path = this.raw(name);
    if (path === undefined) {
      if (opts?.required) throw new ConfigError(name, "is required (a path to a readable file)");
      return undefined;
    }
    try {
      return readFileSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
      throw new ConfigError(name, `names a file that cannot be read (${code}: ${path})`);
    }
  }
}
