// Development source: `<dir>/<ibge>.pem` (leaf certificate, then its chain) and `<dir>/<ibge>.key`
// (unencrypted PEM key). Re-read on every call, so replacing the files takes effect at once.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { CredentialsUnavailableError, leafFacts, type CredentialSet, type CredentialSource } from "./credentials.js";

export class DirectoryCredentialSource implements CredentialSource {
  readonly description: string;

  constructor(private readonly dir: string) {
    this.description = `directory ${dir}`;
  }

  async get(ibge: string): Promise<CredentialSet> {
    let certificateChainPem: string;
    let privateKeyPem: string;
    try {
      [certificateChainPem, privateKeyPem] = await Promise.all([
        readFile(join(this.dir, `${ibge}.pem`), "utf8"),
        readFile(join(this.dir, `${ibge}.key`), "utf8"),
      ]);
    } catch {
      throw new CredentialsUnavailableError(CredentialsProblem.NO_ACTIVE_CERTIFICATE, `no certificate files for municipality ${ibge} in the credentials directory`);
    }
    let facts: ReturnType<typeof leafFacts>;
    try {
      facts = leafFacts(certificateChainPem);
    } catch {
      throw new CredentialsUnavailableError(CredentialsProblem.UNDECRYPTABLE, `${ibge}.pem is not a PEM certificate`);
    }
    const version = createHash("sha256").update(certificateChainPem).update("\0").update(privateKeyPem).digest("hex").slice(0, 32);
    return { version, certificateId: facts.fingerprint, notAfter: facts.notAfter, cnpj: facts.cnpj, certificateChainPem, privateKeyPem };
  }

  close(): void {}
}
