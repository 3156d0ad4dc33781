import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** Seconds-precision UTC, or "-" when unset: what a human table shows. */
export function when(ts: Timestamp | undefined): string {
  return ts
    ? timestampDate(ts)
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z")
    : "-";
}

/** ISO string or null: what --json shows. */
export function iso(ts: Timestamp | undefined): string | null {
  return ts ? timestampDate(ts).toISOString() : null;
}

/** `SOME_ENUM_VALUE` of a generated enum, without the type prefix the generator already stripped. */
export function enumName(e: Record<number, string>, value: number): string {
  return e[value] ?? String(value);
}

/** Parses an enum value name case-insensitively; UNSPECIFIED is not a choice on the command line. */
export function parseEnum<E extends Record<string, string | number>>(e: E, text: string, what: string): E[keyof E] {
  const key = text.toUpperCase().replace(/-/g, "_");
  const value = e[key];
  if (typeof value !== "number" || key === "UNSPECIFIED") {
    const choices = Object.keys(e).filter((k) => Number.isNaN(Number(k)) && k !== "UNSPECIFIED");
    throw new TypeError(`${what} must be one of ${choices.join(", ").toLowerCase()}`);
  }
  return value as E[keyof E];
}

/** Every page of a paged list RPC, in order; with `limit`, no more than that many items. */
export async function allPages<T>(
  page: (pageToken: string, wanted: number) => Promise<{ items: T[]; nextPageToken: string }>,
  limit = Infinity,
): Promise<T[]> {
  const all: T[] = [];
  let pageToken = "";
  do {
    const p = await page(pageToken, limit - all.length);
    all.push(...p.items);
    pageToken = p.nextPageToken;
  } while (pageToken && all.length < limit);
  return all.slice(0, limit);
}

/** A record as aligned "key  value" lines: one thing shown, not a table. */
export function keyValueLines(lines: readonly (readonly [string, string])[]): string {
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n") + "\n";
}

/** JSON for scripts: bigint cursors and NSUs as decimal strings (they exceed 2^53). */
export function json(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}
