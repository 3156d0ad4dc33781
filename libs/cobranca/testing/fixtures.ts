import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** `<repo>/test/fixtures/cnab`: the golden CNAB files, byte-exact, with their sources in its README. */
export const CNAB_FIXTURES = fileURLToPath(new URL("../../../test/fixtures/cnab", import.meta.url));

export function fixture(rel: string): Uint8Array {
  return new Uint8Array(readFileSync(join(CNAB_FIXTURES, rel)));
}

export function fixtureText(rel: string): string {
  return readFileSync(join(CNAB_FIXTURES, rel), "latin1");
}

export function allFixtures(): string[] {
  const out: string[] = [];
  for (const dir of ["remessa/240", "remessa/400", "retorno/240", "retorno/400"])
    for (const f of readdirSync(join(CNAB_FIXTURES, dir)).sort()) out.push(`${dir}/${f}`);
  return out;
}

export function sha256(b: Uint8Array | string): string {
  return createHash("sha256").update(b).digest("hex");
}

/**
 * A documented repair of one line (1-based line and column): blanks inserted, or text written over; or a
 * whole record the file lost, inserted after a line (padded like the others; line repairs count it).
 */
export type Repair =
  | { readonly line: number; readonly column: number; readonly blanks: number }
  | { readonly line: number; readonly column: number; readonly text: string }
  | { readonly afterLine: number; readonly record: string };

/**
 * A golden file stored as its source has it but not readable as CNAB (`repair/`: trailing blanks cut, a
 * field cut short, another bank's header), with the repairs its README documents applied, then every
 * line padded to `width`. The stored bytes are never edited.
 */
export function repairedFixture(rel: string, width: 240 | 400, repairs: readonly Repair[] = []): string {
  const lines = fixtureText(`repair/${rel}`).split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  for (const r of [...repairs].reverse()) if ("afterLine" in r) lines.splice(r.afterLine, 0, r.record);
  return (
    lines
      .map((l, i) => {
        let out = l;
        for (const r of repairs) {
          if ("afterLine" in r || r.line !== i + 1) continue;
          const at = r.column - 1;
          out =
            "blanks" in r
              ? out.slice(0, at) + " ".repeat(r.blanks) + out.slice(at)
              : out.slice(0, at) + r.text + out.slice(at + r.text.length);
        }
        return out.padEnd(width, " ");
      })
      .join("\r\n") + "\r\n"
  );
}
