import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import type { MasterKeys } from "./master-keys.js";

export const ALGORITHM = "aes-256-gcm";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** One encrypted value as stored: the key id and algorithm are kept on the row beside it. */
export interface Sealed {
  ciphertext: Buffer;
  nonce: Buffer;
  tag: Buffer;
}

/**
 * What a ciphertext is bound to. The row's natural identity (leaf fingerprint, unique in the table) and
 * its municipality, the column it lives in, and the key id and algorithm recorded beside it: a value
 * copied to another row or column, or re-labelled with another key id, fails authentication.
 */
export interface SealContext {
  fingerprint: string;
  ibge: string;
  field: SecretField;
}

export type SecretField = "pfx" | "password" | "private_key" | "chain";

/** The configured key id is not available (removed after rotation, or never configured here). */
export class KeyUnavailableError extends Error {
  override name = "KeyUnavailableError";
  constructor(readonly keyId: string) {
    super(`master key '${keyId}' is not configured`);
  }
}

/** The ciphertext failed authentication: tampered, moved from another row, or the wrong key bytes. */
export class AuthenticationError extends Error {
  override name = "AuthenticationError";
  constructor(readonly field: SecretField) {
    super(`the ${field} ciphertext failed authentication`);
  }
}

export class Keyring {
  constructor(private readonly masterKeys: MasterKeys) {}

  get activeKeyId(): string {
    return this.masterKeys.activeKeyId;
  }

  has(keyId: string): boolean {
    return this.masterKeys.keys.has(keyId);
  }

  keyIds(): string[] {
    return [...this.masterKeys.keys.keys()];
  }

  /** Encrypts under `keyId` (default: the active key) with a fresh random nonce. */
  seal(plaintext: Buffer, ctx: SealContext, keyId = this.activeKeyId): Sealed {
    const key = this.key(keyId);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(ctx, keyId, ALGORITHM));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext, nonce, tag: cipher.getAuthTag() };
  }

  open(sealed: Sealed, ctx: SealContext, keyId: string, algorithm: string): Buffer {
    if (algorithm !== ALGORITHM) throw new AuthenticationError(ctx.field);
    const key = this.key(keyId);
    if (sealed.nonce.length !== NONCE_BYTES || sealed.tag.length !== TAG_BYTES) throw new AuthenticationError(ctx.field);
    const decipher = createDecipheriv(ALGORITHM, key, sealed.nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(ctx, keyId, algorithm));
    decipher.setAuthTag(sealed.tag);
    try {
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
    } catch {
      throw new AuthenticationError(ctx.field);
    }
  }

  /**
   * A value that identifies a key without revealing it (HMAC of a fixed label), recorded per key id so a
   * restart with different bytes under a known id is caught before anything is written with them.
   */
  checkValue(keyId: string): string {
    return createHmac("sha256", this.key(keyId)).update("malha vault master key check v1").digest("hex");
  }

  private key(keyId: string): Buffer {
    const key = this.masterKeys.keys.get(keyId);
    if (!key) throw new KeyUnavailableError(keyId);
    return key;
  }
}

function aad(ctx: SealContext, keyId: string, algorithm: string): Buffer {
  return Buffer.from(["malha.vault.certificates.v1", ctx.fingerprint, ctx.ibge, ctx.field, keyId, algorithm].join("\n"), "utf8");
}
