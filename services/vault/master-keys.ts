import { readFileSync } from "node:fs";
import { ConfigError } from "../../libs/config/env.js";

/** The master keys the vault can decrypt with, and the one it encrypts new values under. */
export interface MasterKeys {
  activeKeyId: string;
  /** key id → 32 key bytes. Always contains activeKeyId. */
  keys: ReadonlyMap<string, Buffer>;
}

/** Used for NFSE_MASTER_KEY(_FILE) when NFSE_MASTER_KEY_ID does not name it. */
export const DEFAULT_KEY_ID = "default";
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_HINT = "base64 of exactly 32 random bytes, e.g. `openssl rand -base64 32`";

/** Returns a variable's trimmed value, undefined when unset or blank (EnvReader.optionalString). */
export type EnvLookup = (name: string) => string | undefined;

/**
 * Reads the master keys from the environment. Every problem is a ConfigError naming the variable; no
 * message ever contains key material (not even a fragment), only key ids and entry positions.
 *
 *   NFSE_MASTER_KEY / NFSE_MASTER_KEY_FILE    the active key (file: base64 text, or the 32 raw bytes)
 *   NFSE_MASTER_KEYS / NFSE_MASTER_KEYS_FILE  more keys for rotation: `keyId:base64` entries separated
 *                                             by commas or newlines
 *   NFSE_MASTER_KEY_ID                        id of the active key (default: "default" for
 *                                             NFSE_MASTER_KEY; the only entry of NFSE_MASTER_KEYS)
 */
export function readMasterKeys(get: EnvLookup): MasterKeys {
  const activeId = get("NFSE_MASTER_KEY_ID");
  if (activeId !== undefined && !KEY_ID_PATTERN.test(activeId)) {
    throw new ConfigError("NFSE_MASTER_KEY_ID", `is malformed (expected ${KEY_ID_PATTERN.source})`);
  }

  const keys = new Map<string, Buffer>();
  const single = readSingleKey(get("NFSE_MASTER_KEY"), get("NFSE_MASTER_KEY_FILE"));
  const singleId = activeId ?? DEFAULT_KEY_ID;
  if (single) keys.set(singleId, single.key);

  for (const source of readKeyLists(get("NFSE_MASTER_KEYS"), get("NFSE_MASTER_KEYS_FILE"))) {
    for (const [position, entry] of source.entries.entries()) {
      const where = `entry ${position + 1}`;
      const colon = entry.indexOf(":");
      if (colon < 0) throw new ConfigError(source.variable, `${where} is malformed (expected keyId:base64)`);
      const id = entry.slice(0, colon).trim();
      if (!KEY_ID_PATTERN.test(id)) {
        throw new ConfigError(source.variable, `${where} has a malformed key id (expected ${KEY_ID_PATTERN.source})`);
      }
      const key = decodeKey(entry.slice(colon + 1).trim());
      if (!key) throw new ConfigError(source.variable, `key '${id}' is invalid: must be ${KEY_HINT}`);
      const known = keys.get(id);
      if (known && !known.equals(key)) {
        const other = single && id === singleId ? single.variable : "another entry";
        throw new ConfigError(source.variable, `key '${id}' has a different value than ${other}`);
      }
      keys.set(id, key);
    }
  }

  if (keys.size === 0) {
    throw new ConfigError(
      "NFSE_MASTER_KEY",
      `is required (${KEY_HINT}; or NFSE_MASTER_KEY_FILE, or NFSE_MASTER_KEYS with NFSE_MASTER_KEY_ID)`,
    );
  }
  let activeKeyId: string;
  if (single) activeKeyId = singleId;
  else if (activeId !== undefined) activeKeyId = activeId;
  else if (keys.size === 1) activeKeyId = [...keys.keys()][0]!;
  else throw new ConfigError("NFSE_MASTER_KEY_ID", "is required when NFSE_MASTER_KEYS holds several keys (names the active one)");
  if (!keys.has(activeKeyId)) {
    throw new ConfigError("NFSE_MASTER_KEY_ID", `names key '${activeKeyId}', which NFSE_MASTER_KEYS does not contain`);
  }
  return { activeKeyId, keys };
}

function readSingleKey(value: string | undefined, file: string | undefined): { key: Buffer; variable: string } | undefined {
  if (value !== undefined && file !== undefined) {
    throw new ConfigError("NFSE_MASTER_KEY_FILE", "cannot be combined with NFSE_MASTER_KEY (set only one)");
  }
  if (value !== undefined) {
    const key = decodeKey(value);
    if (!key) throw new ConfigError("NFSE_MASTER_KEY", `is invalid: must be ${KEY_HINT}`);
    return { key, variable: "NFSE_MASTER_KEY" };
  }
  if (file === undefined) return undefined;
  const bytes = readSecretFile("NFSE_MASTER_KEY_FILE", file);
  // A Kubernetes secret may hold the raw key or its base64 text; base64 of 32 bytes is 44 characters.
  const key = bytes.length === 32 ? Buffer.from(bytes) : decodeKey(bytes.toString("latin1").trim());
  bytes.fill(0);
  if (!key) throw new ConfigError("NFSE_MASTER_KEY_FILE", `holds an invalid key: must be ${KEY_HINT} (or the 32 raw bytes)`);
  return { key, variable: "NFSE_MASTER_KEY_FILE" };
}

function readKeyLists(value: string | undefined, file: string | undefined): { variable: string; entries: string[] }[] {
  const split = (text: string) =>
    text
      .split(/[,\n]/)
      .map((e) => e.trim())
      .filter((e) => e !== "");
  const lists: { variable: string; entries: string[] }[] = [];
  if (value !== undefined) lists.push({ variable: "NFSE_MASTER_KEYS", entries: split(value) });
  if (file !== undefined) {
    lists.push({ variable: "NFSE_MASTER_KEYS_FILE", entries: split(readSecretFile("NFSE_MASTER_KEYS_FILE", file).toString("latin1")) });
  }
  return lists;
}

/** Reads a secret file; the error names the variable and the path, never the content. */
export function readSecretFile(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(variable, `names a file that cannot be read (${code}: ${path})`);
  }
}

/** Strict base64 (standard or URL alphabet) of exactly 32 bytes, else undefined. */
export function decodeKey(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const key = Buffer.from(text, "base64");
  return key.length === 32 ? key : undefined;
}
