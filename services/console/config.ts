import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { parseProxyCidrs, type ProxyPeers } from "./proxy-trust.js";

/** Session MACs with a shorter key are guessable in practice. */
export const MIN_SESSION_SECRET_BYTES = 32;

export interface ConsoleConfig {
  httpHost: string;
  /** 0 picks a free port (tests); the "console listening" log line tells which. */
  httpPort: number;
  usersFile: string;
  sessionSecret: Buffer;
  sessionTtlMs: number;
  /** Adds `Secure` to the cookie: set it whenever the console is reached over HTTPS (a proxy in front). */
  cookieSecure: boolean;
  /** Lower-case header name carrying the user authenticated by an identity-aware proxy; unset = not trusted. */
  trustProxyUserHeader?: string;
  /** The proxy's addresses: the user header counts only from these (unset = from any peer). */
  trustProxyFrom?: ProxyPeers;
  /** The built web app (index.html and assets). */
  staticDir: string;
  /** The vault's administrator secret, for importing certificates; unset = the console cannot import. */
  vaultAdminSecret?: string;
}

export function readConsoleConfig(env: EnvReader): ConsoleConfig {
  const staticDir = resolveDir(env.string("CONSOLE_STATIC_DIR", { default: join(projectRoot(), "dist", "console") }));
  if (!existsSync(join(staticDir, "index.html"))) {
    throw new ConfigError("CONSOLE_STATIC_DIR", `has no index.html (${staticDir}): build the web app first with \`npm run build:console\``);
  }
  const header = env.optionalString("CONSOLE_TRUST_PROXY_USER_HEADER");
  if (header !== undefined && !/^[A-Za-z0-9-]{1,64}$/.test(header)) {
    throw new ConfigError("CONSOLE_TRUST_PROXY_USER_HEADER", "must be an HTTP header name (letters, digits and -), e.g. X-Forwarded-User");
  }
  const cidrs = env.optionalString("CONSOLE_TRUST_PROXY_CIDRS");
  let trustProxyFrom: ProxyPeers | undefined;
  if (cidrs !== undefined) {
    if (header === undefined)
      throw new ConfigError("CONSOLE_TRUST_PROXY_CIDRS", "needs CONSOLE_TRUST_PROXY_USER_HEADER (the header it guards)");
    try {
      trustProxyFrom = parseProxyCidrs(cidrs);
    } catch (err) {
      throw new ConfigError("CONSOLE_TRUST_PROXY_CIDRS", (err as Error).message);
    }
  }
  return {
    httpHost: env.string("CONSOLE_HTTP_HOST", { default: env.optionalString("GRPC_HOST") ?? "0.0.0.0" }),
    httpPort: env.port("CONSOLE_HTTP_PORT", { default: 8057 }),
    usersFile: resolveDir(env.string("CONSOLE_USERS_FILE", { hint: 'a file of "<user> <role> <sha256 of token>" lines' })),
    sessionSecret: readSessionSecret(env),
    sessionTtlMs: env.durationMs("CONSOLE_SESSION_TTL_SECONDS", { default: 8 * 3_600_000, minSeconds: 60, maxSeconds: 7 * 86_400 }),
    cookieSecure: env.bool("CONSOLE_COOKIE_SECURE", { default: false }),
    ...(header !== undefined ? { trustProxyUserHeader: header.toLowerCase() } : {}),
    ...(trustProxyFrom ? { trustProxyFrom } : {}),
    staticDir,
    ...opt(
      "vaultAdminSecret",
      readOptionalSecret(
        "CONSOLE_VAULT_ADMIN_SECRET",
        env.optionalString("CONSOLE_VAULT_ADMIN_SECRET"),
        env.optionalString("CONSOLE_VAULT_ADMIN_SECRET_FILE"),
      ),
    ),
  };
}

const opt = <K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> =>
  value === undefined ? {} : ({ [key]: value } as Record<K, string>);

/** `<NAME>` or `<NAME>_FILE`, at most one; the value never appears in an error. */
function readOptionalSecret(name: string, inline: string | undefined, file: string | undefined): string | undefined {
  if (inline !== undefined && file !== undefined) throw new ConfigError(`${name}_FILE`, `cannot be set together with ${name} (pick one)`);
  if (file === undefined) return inline === "" ? undefined : inline;
  try {
    const value = readFileSync(file, "utf8").trim();
    if (value === "") throw new ConfigError(`${name}_FILE`, `names an empty file: ${file}`);
    return value;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `${name}_FILE`,
      `names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? "unreadable"}: ${file})`,
    );
  }
}

const resolveDir = (p: string) => (isAbsolute(p) ? p : resolve(p));

/** Exactly one of CONSOLE_SESSION_SECRET / CONSOLE_SESSION_SECRET_FILE; the value never appears in an error. */
function readSessionSecret(env: EnvReader): Buffer {
  const inline = env.optionalString("CONSOLE_SESSION_SECRET");
  const file = env.optionalString("CONSOLE_SESSION_SECRET_FILE");
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError("CONSOLE_SESSION_SECRET_FILE", "cannot be set together with CONSOLE_SESSION_SECRET (pick one)");
  }
  let secret: Buffer;
  let variable = "CONSOLE_SESSION_SECRET";
  if (file !== undefined) {
    variable = "CONSOLE_SESSION_SECRET_FILE";
    try {
      secret = Buffer.from(readFileSync(file, "utf8").replace(/[\r\n]+$/, ""), "utf8");
    } catch (err) {
      throw new ConfigError(variable, `names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? "unreadable"}: ${file})`);
    }
  } else if (inline !== undefined) {
    secret = Buffer.from(inline, "utf8");
  } else {
    throw new ConfigError("CONSOLE_SESSION_SECRET", "is required (or CONSOLE_SESSION_SECRET_FILE): the HMAC key of session cookies");
  }
  if (secret.length < MIN_SESSION_SECRET_BYTES) {
    throw new ConfigError(variable, `must be at least ${MIN_SESSION_SECRET_BYTES} bytes (e.g. head -c 32 /dev/urandom | base64)`);
  }
  return secret;
}
