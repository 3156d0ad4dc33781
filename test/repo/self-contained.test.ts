// The repository stands on its own: no tracked file reads, imports or links anything outside it (the
// team's folder beside the clone, a machine's absolute paths), every relative markdown link lands on a
// tracked file inside the repository (and on an existing heading when it names one), and every
// "adn.md §N"-style citation names a section that the in-repo document has.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// Built from pieces so that this file does not match its own patterns.
const TEAM = "shared";
const OUTSIDE: { label: string; pattern: RegExp }[] = [
  { label: `../${TEAM}`, pattern: new RegExp(`\\.\\./${TEAM}\\b`) },
  { label: "/" + "work/", pattern: new RegExp("/" + "work/") },
  ...["domain", "fixtures", "BLUEPRINT", "seeds"].map((what) => ({ label: `${TEAM}/${what}`, pattern: new RegExp(`\\b${TEAM}/${what}`) })),
];

/** Tracked files that exist in the working tree, as repository-relative POSIX paths. */
function trackedFiles(): string[] {
  let out: string;
  try {
    out = execFileSync("git", ["ls-files", "-z", "--cached"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    throw new Error(`git ls-files failed in ${ROOT}: this test needs a git checkout of the repository (${(err as Error).message})`);
  }
  return out.split("\0").filter((f) => f !== "" && existsSync(join(ROOT, f)));
}

function textOf(path: string): string | undefined {
  const bytes = readFileSync(join(ROOT, path));
  return bytes.includes(0) ? undefined : bytes.toString("utf8");
}

/** The markdown without fenced code blocks and inline code spans, line numbers kept. */
function proseOf(markdown: string): string {
  const lines = markdown.split("\n");
  let fence: string | undefined;
  return lines
    .map((line) => {
      const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence !== undefined) {
        if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
        return "";
      }
      if (opener !== undefined) {
        fence = opener;
        return "";
      }
      return line.replace(/(`+)[\s\S]*?\1/g, "");
    })
    .join("\n");
}

interface Link {
  line: number;
  target: string;
}

function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  proseOf(markdown)
    .split("\n")
    .forEach((text, i) => {
      for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1]! });
      const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(text);
      if (def) links.push({ line: i + 1, target: def[1]! });
    });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2… */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseOf(markdown).split("\n")) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Section numbers of a document's headings ("## 4. NFS-e XML" → "4", "### 9.1 Alphanumeric CNPJ" → "9.1"). */
function sectionsOf(markdown: string): Set<string> {
  const sections = new Set<string>();
  for (const line of proseOf(markdown).split("\n")) {
    const m = /^\s{0,3}#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/.exec(line);
    if (m) sections.add(m[1]!);
  }
  return sections;
}

describe("the repository stands on its own", () => {
  let files: string[];
  let tracked: Set<string>;
  let trackedDirs: Set<string>;

  beforeAll(() => {
    files = trackedFiles();
    tracked = new Set(files);
    trackedDirs = new Set();
    for (const f of files) for (let d = posix.dirname(f); d !== "."; d = posix.dirname(d)) trackedDirs.add(d);
  });

  it("no tracked file reads or mentions paths outside the repository", () => {
    const found: string[] = [];
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      text.split("\n").forEach((line, i) => {
        for (const { label, pattern } of OUTSIDE)
          if (pattern.test(line)) found.push(`${file}:${i + 1}: ${label}: ${line.trim().slice(0, 160)}`);
      });
    }
    expect(files.length).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });

  it("every docs/….md path a file mentions (a comment citing a decision record, say) is a tracked file", () => {
    const missing: string[] = [];
    const docPath = /(?<![A-Za-z0-9_./-])docs\/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b/g;
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined || !text.includes("docs/")) continue;
      text.split("\n").forEach((line, i) => {
        for (const m of line.matchAll(docPath)) if (!tracked.has(m[0])) missing.push(`${file}:${i + 1}: ${m[0]}`);
      });
    }
    expect(missing).toEqual([]);
  });

  it("labels results and decisions by date and commit, never by work period", () => {
    const found: string[] = [];
    const period = new RegExp(`\\b${"sess"}ions? \\d`, "i");
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      text.split("\n").forEach((line, i) => {
        if (period.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
    }
    expect(found).toEqual([]);
  });

  it("every relative markdown link lands on a tracked file inside the repository, at an existing heading", () => {
    const broken: string[] = [];
    const anchorCache = new Map<string, Set<string>>();
    const anchors = (file: string) => {
      let a = anchorCache.get(file);
      if (!a) anchorCache.set(file, (a = anchorsOf(readFileSync(join(ROOT, file), "utf8"))));
      return a;
    };
    const markdown = files.filter((f) => f.endsWith(".md"));
    expect(markdown).toContain("docs/architecture.md");
    for (const file of markdown) {
      for (const { line, target } of linksOf(readFileSync(join(ROOT, file), "utf8"))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // https:, mailto:, …
        const [pathPart, fragment] = target.split("#", 2) as [string, string | undefined];
        const path = decodeURIComponent(pathPart.split("?")[0]!);
        const where = `${file}:${line}: (${target})`;
        let resolved = file;
        if (path !== "") {
          // A leading slash is the repository root, as on the forges that render these files.
          const rel = relative(ROOT, normalize(path.startsWith("/") ? join(ROOT, path) : join(ROOT, dirname(file), path)));
          if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
            broken.push(`${where} points outside the repository`);
            continue;
          }
          resolved = rel.split(sep).join("/");
        }
        if (resolved !== "" && !tracked.has(resolved) && !trackedDirs.has(resolved)) {
          broken.push(`${where} is not a tracked file or folder of the repository`);
          continue;
        }
        if (fragment && resolved.endsWith(".md") && tracked.has(resolved) && !anchors(resolved).has(fragment.toLowerCase()))
          broken.push(`${where} names a heading that ${resolved} does not have`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every 'name.md §N' citation names a section of an in-repo document", () => {
    const bad: string[] = [];
    const docs = new Map<string, Set<string> | undefined>();
    const sectionsFor = (cited: string): Set<string> | undefined => {
      if (!docs.has(cited)) {
        const path = cited.includes("/") ? cited : `docs/domain/${cited}`;
        docs.set(cited, tracked.has(path) ? sectionsOf(readFileSync(join(ROOT, path), "utf8")) : undefined);
      }
      return docs.get(cited);
    };
    const citation =
      /(?<![A-Za-z0-9_./-])((?:[A-Za-z0-9_.-]+\/)*[A-Za-z0-9_-]+\.md) ?(§\d+(?:\.\d+)*(?:\s*(?:[–/-]|,|and)\s*§?\d+(?:\.\d+)*)*)/g;
    let count = 0;
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      if (!text.includes("§")) continue;
      text.split("\n").forEach((line, i) => {
        if (!line.includes("§")) return;
        for (const m of line.matchAll(citation)) {
          count++;
          const cited = m[1]!;
          const sections = sectionsFor(cited);
          const where = `${file}:${i + 1}: ${cited} ${m[2]}`;
          if (!sections) {
            bad.push(`${where}: no such document in docs/domain (or at that path)`);
            continue;
          }
          for (const n of m[2]!.match(/\d+(?:\.\d+)*/g) ?? []) if (!sections.has(n)) bad.push(`${where}: it has no section ${n}`);
        }
      });
    }
    expect(count).toBeGreaterThan(20);
    expect(bad).toEqual([]);
  });
});
