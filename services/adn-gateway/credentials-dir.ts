// Development source: `<dir>/<ibge>.pem` (leaf certificate, then its chain) and `<dir>/<ibge>.key`
// (unencrypted PEM key). A municipality's files are read once and then trusted for `refreshMs`; after
// that a stat of both files (size, mtime, inode) decides whether to read them again, so replacing the
// files takes effect within that interval. Re-reading on every call used to put four file-system round
// trips per file on the path between one ADN page and the request for the next.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { CredentialsUnavailableError, leafFacts, presentedChain, type CredentialSet, type CredentialSource } from "./credentials.js";

interface Cached {
  set: CredentialSet;
  /** Identity of the two files when read: size, mtime (ns) and inode of each. */
  stamp: string;
  checkedAt: number;
}

export class DirectoryCredentialSource implements CredentialSource {
  readonly description: string;
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly dir: string,
    private readonly opts: { refreshMs: number; now?: () => number } = { refreshMs: 1000 },
  ) {
    this.description = `directory ${dir}`;
  }

  async get(ibge: string): Promise<CredentialSet> {
    const now = (this.opts.now ?? Date.now)();
    const cached = this.cache.get(ibge);
    if (cached && now - cached.checkedAt < this.opts.refreshMs) return cached.set;
    const stamp = await this.stampOf(ibge);
    if (cached && stamp !== undefined && stamp === cached.stamp) {
      cached.checkedAt = now;
      return cached.set;
    }
    this.cache.delete(ibge);
    const set = await this.read(ibge);
    // Stamped before reading: a file replaced meanwhile is read again at the next check, never missed.
    if (stamp !== undefined) this.cache.set(ibge, { set, stamp, checkedAt: now });
    return set;
  }

  close(): void {
    this.cache.clear();
  }

  private async stampOf(ibge: string): Promise<string | undefined> {
    try {
      const files = await Promise.all([stat(this.path(ibge, "pem"), { bigint: true }), stat(this.path(ibge, "key"), { bigint: true })]);
      return files.map((s) => `${s.size}/${s.mtimeNs}/${s.ino}`).join(" ");
    } catch {
      return undefined;
    }
  }

  private path(ibge: string, ext: "pem" | "key"): string {
    return join(this.dir, `${ibge}.${ext}`);
  }

  private async read(ibge: string): Promise<CredentialSet> {
    let certificateChainPem: string;
    let privateKeyPem: string;
    try {
      [certificateChainPem, privateKeyPem] = await Promise.all([
        readFile(this.path(ibge, "pem"), "utf8"),
        readFile(this.path(ibge, "key"), "utf8"),
      ]);
    } catch {
      throw new CredentialsUnavailableError(
        CredentialsProblem.NO_ACTIVE_CERTIFICATE,
        `no certificate files for municipality ${ibge} in the credentials directory`,
      );
    }
    let facts: ReturnType<typeof leafFacts>;
    try {
      facts = leafFacts(certificateChainPem);
    } catch {
      throw new CredentialsUnavailableError(CredentialsProblem.UNDECRYPTABLE, `${ibge}.pem is not a PEM certificate`);
    }
    const version = createHash("sha256").update(certificateChainPem).update("\0").update(privateKeyPem).digest("hex").slice(0, 32);
    return {
      version,
      certificateId: facts.fingerprint,
      notAfter: facts.notAfter,
      cnpj: facts.cnpj,
      certificateChainPem: presentedChain(certificateChainPem),
      privateKeyPem,
    };
  }
}
