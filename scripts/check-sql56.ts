// Mechanical MySQL 5.6 check of SQL files (docs/domain/mysql56.md).
//   usage: tsx scripts/check-sql56.ts <file.sql | dir>…
// A directory contributes its *.sql files (not recursive) in name order; files are checked in argument
// order against one accumulated schema. Exit codes: 0 clean, 1 findings, 2 usage error.
import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { checkSql56, formatFinding } from "../tools/sql56/check.js";
import type { SqlSource } from "../tools/sql56/check.js";

async function expand(arg: string): Promise<string[]> {
  const info = await stat(arg);
  if (!info.isDirectory()) return [arg];
  const names = (await readdir(arg)).filter((n) => n.toLowerCase().endsWith(".sql")).sort();
  return names.map((n) => join(arg, n));
}

async function main(args: string[]): Promise<number> {
  if (args.length === 0) {
    process.stderr.write("usage: tsx scripts/check-sql56.ts <file.sql | dir>…\n");
    return 2;
  }
  const paths: string[] = [];
  for (const arg of args) {
    try {
      paths.push(...(await expand(arg)));
    } catch {
      process.stderr.write(`check-sql56: cannot read ${arg}\n`);
      return 2;
    }
  }
  const sources: SqlSource[] = [];
  for (const path of paths) sources.push({ path, text: await readFile(path, "utf8") });
  const findings = checkSql56(sources);
  for (const finding of findings) process.stdout.write(`${formatFinding(finding)}\n`);
  const files = new Set(findings.map((f) => f.file)).size;
  process.stdout.write(
    findings.length === 0
      ? `sql56: ${paths.length} file(s) clean\n`
      : `sql56: ${findings.length} finding(s) in ${files} of ${paths.length} file(s)\n`,
  );
  return findings.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
