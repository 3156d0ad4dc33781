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
