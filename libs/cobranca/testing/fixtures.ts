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
 * A golden file stored as its source has it but not readable as CNAB (`trimmed/`: trailing blanks cut,
 * a field cut short), with the repairs its README documents applied: blanks inserted at the given 1-based
 * columns of the given lines, then every line padded to `width`. The stored bytes are never edited.
 */
export function repairedFixture(
  rel: string,
  width: 240 | 400,
  inserts: readonly { readonly line: number; readonly column: number; readonly blanks: number }[] = [],
): string {
  const lines = fixtureText(`trimmed/${rel}`).split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return (
    lines
      .map((l, i) => {
        let out = l;
        for (const x of inserts) if (x.line === i + 1) out = out.slice(0, x.column - 1) + " ".repeat(x.blanks) + out.slice(x.column - 1);
        return out.padEnd(width, " ");
      })
      .join("\r\n") + "\r\n"
  );
}
